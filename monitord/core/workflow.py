"""The workflow state machine: dagman.out lines in, Stampede events and jobstate.log lines out.

Sans I/O.  Everything outside the state machine reaches it through a
:class:`WorkflowContext`: reading a job's files (``read_text``), starting a
sub-workflow (``on_subworkflow``).  Outputs are appended to ``events`` (shared
by all workflows of one daemon, in emission order) and ``jobstate_lines``
(this workflow's jobstate.log); the driver drains both.

Every rule of the reference that shapes the outputs (numbering, deferred
``main.end``, output counters, reuse of job instances, the synthetic
DAGMAN_FINISHED of a DAGMan that died) lives in this module or the job state table,
``monitord.core.jobmachine``; job output extraction is in ``monitord.core.jobout``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.core import dagman as D
from monitord.core.events import StampedeEvent, make_event
from monitord.core.jobinstance import JobInstance, raw_exitcode
from monitord.core.jobmachine import JOB_STATES, REUSABLE_STATES
from monitord.core.jobout import JobFiles, composite_extras, parse_job_output, read_pre_script_log
from monitord.core.quoting import url_quote
from monitord.core.timeparse import dagman_timestamp

log = structlog.get_logger(__name__)

ReadText = Callable[[str], "str | None"]


@dataclass(slots=True)
class SubworkflowRequest:
    """A sub-workflow found at a SUBMIT (doc §8.2): the driver decides what to do."""

    parent: Workflow
    dagman_out: str
    job_name: str
    job_seq: int
    retry: int


@dataclass
class WorkflowOptions:
    replay: bool = True
    events_enabled: bool = True
    store_stdout: bool = True
    keep_state: bool = False
    follow_subworkflows: bool = True
    adjust: float = 0.0


@dataclass
class WorkflowContext:
    read_text: ReadText
    events: list[StampedeEvent]
    on_subworkflow: Callable[[SubworkflowRequest], None] | None = None
    options: WorkflowOptions = field(default_factory=WorkflowOptions)
    # Notifications (doc §11): a notifications.notifier.Notifier in live mode, else None.
    notifier: Any = None


class Workflow:
    """One workflow directory being followed (root or sub-workflow)."""

    def __init__(
        self,
        ctx: WorkflowContext,
        *,
        run_dir: str,
        braindump: Any,
        dag: Any,
        root_uuid: str,
        parent_uuid: str | None = None,
        wf_ts: int | None = None,
    ) -> None:
        self.ctx = ctx
        self.opts = ctx.options
        self.events = ctx.events
        self.run_dir = run_dir
        self.bd = braindump
        self.dag = dag
        self.uuid: str = braindump.wf_uuid
        self.root_uuid = root_uuid
        self.parent_uuid = parent_uuid
        self.wf_ts = wf_ts
        self.orig_submit_dir: str = braindump.submit_dir or run_dir
        self.jobstate_lines: list[str] = []
        # Numbering (doc §4).
        self.job_seq = 1
        self.restart_count = 0
        self.line_no = 0
        self.last_processed_line = 0
        self.out_counters: dict[str, int] = {}
        # Job instances: (name, seq) -> instance; name -> latest seq.
        self.jobs: dict[tuple[str, int], JobInstance] = {}
        self.latest: dict[str, int] = {}
        self.last_submitted: str | None = None
        self.last_updated: JobInstance | None = None
        # DAGMan facts.
        self.dagman_id: str | None = None
        self.dagman_pid: int | None = None
        self.dagman_version = 0
        self.dagman_exit: int | None = None
        self.state: str | None = None
        self.pending_reason: str | None = None
        self.monitord_exit = 0
        self.condor_log: str | None = None
        self.in_recovery = False
        self.expect_log_entry = False
        self.finished = False
        self.state_ts = 0.0  # time of the job state being handled (invocation notifications)
        fixed: dict[str, Any] = {
            "xwf.id": self.uuid,
            "root.xwf.id": root_uuid,
            "dax": braindump.dax,
            "dag": braindump.dag,
            "wf.ts": wf_ts,
            "submit.dir": braindump.submit_dir,
            "pegasus.version": braindump.planner_version,
            "submit.hostname": braindump.submit_hostname,
            "wf.user": braindump.user,
        }
        self.fixed = fixed

    # ------------------------------------------------------------------ output
    def emit(self, name: str, attrs: dict[str, Any], *, fixed: bool = True) -> dict[str, Any]:
        if fixed:
            attrs.update(self.fixed)
        if self.opts.events_enabled:
            self.events.append(make_event(name, attrs))
        return attrs

    def emit_event(self, event: StampedeEvent) -> None:
        if self.opts.events_enabled:
            self.events.append(event)

    def jobstate(
        self, ts: float, name: str, state: str, col4: str, site: str, treq: str, seq: str
    ) -> None:
        self.jobstate_lines.append(f"{int(ts)} {name} {state} {col4} {site} {treq} {seq}\n")

    def internal(self, ts: float, text: str) -> None:
        self.jobstate_lines.append(f"{int(ts)} INTERNAL *** {text} ***\n")

    # ------------------------------------------------------------------ lines
    def feed(self, line: str) -> None:
        """Process one dagman.out line (without its newline)."""
        self.line_no += 1
        if self.line_no <= self.last_processed_line:
            self._note_processed(line)
            return
        line = line.rstrip()
        if self.in_recovery:
            if "...done with RECOVERY mode" in line and dagman_timestamp(line) is not None:
                self.in_recovery = False
            return
        expect = self.expect_log_entry
        rec = D.classify(line, adjust=self.opts.adjust, expect_log_entry=expect)
        if expect and (rec is None or rec.kind != D.LOG_LIST):
            self.expect_log_entry = False
        if rec is None:
            return
        handler = self._handlers.get(rec.kind)
        if handler is not None:
            handler(self, rec)

    def _note_processed(self, line: str) -> None:
        """A line a predecessor already handled: keep only DAGMan's own state, silently.

        A daemon resumed on a workflow whose DAGMan has already exited then knows it is done
        (the reference would wait for the idle limit).
        """
        if (
            "EXITING WITH STATUS" in line
            or "STARTING UP" in line
            or "Parsing " in line
            or "** PID = " in line
        ):
            rec = D.classify(line.rstrip(), adjust=self.opts.adjust)
            if rec is None:
                return
            if rec.kind == D.DAGMAN_EXIT:
                try:
                    self.dagman_exit = int(rec.text or "")
                except ValueError:
                    self.dagman_exit = 0
                self.state = "end"
            elif rec.kind == D.PARSING:
                self.state, self.dagman_exit = "start", None
            elif rec.kind == D.DAGMAN_START:
                self.dagman_id = rec.sched_id
            elif rec.kind == D.PID and not self.opts.replay and (rec.text or "").isdigit():
                self.dagman_pid = int(rec.text or "0")

    def _on_ulog(self, rec: D.DagmanLine) -> None:
        self.update_job_state(rec.job or "", rec.state or "", rec.ts, sched_id=rec.sched_id)

    def _on_dagman_submit(self, rec: D.DagmanLine) -> None:
        name = rec.job or ""
        inst = self._reuse_or_new(name, lambda i: i.state in REUSABLE_STATES)
        self._parse_submit_file(inst)
        inst.prev_state, inst.state = inst.state, "DAGMAN_SUBMIT"
        self.last_submitted = name
        self.last_updated = inst

    def _on_submit_failed(self, rec: D.DagmanLine) -> None:
        if self.last_submitted is None:
            log.warning("submit failure without a submitted node", workflow=self.uuid)
            return
        self.update_job_state(self.last_submitted, "SUBMIT_FAILED", rec.ts)

    def _on_script_started(self, rec: D.DagmanLine) -> None:
        self.update_job_state(rec.job or "", f"{rec.state}_SCRIPT_STARTED", rec.ts)

    def _on_script_result(self, rec: D.DagmanLine) -> None:
        name = rec.job or ""
        kind = rec.state
        if kind == "PRE":
            self.update_job_state(name, "PRE_SCRIPT_TERMINATED", rec.ts)
        if rec.status is None:
            log.warning("unknown pscript state", job=name, text=rec.text)
            return
        outcome = "SUCCESS" if (rec.text or "").endswith("completed successfully.") else "FAILURE"
        self.update_job_state(name, f"{kind}_SCRIPT_{outcome}", rec.ts, status=rec.status)

    def _on_job_result(self, rec: D.DagmanLine) -> None:
        self.update_job_state(
            rec.job or "", f"JOB_{rec.state}", rec.ts, sched_id=rec.sched_id, status=rec.status
        )

    def _on_dagman_exit(self, rec: D.DagmanLine) -> None:
        try:
            self.dagman_exit = int(rec.text or "")
        except ValueError:
            self.dagman_exit = 0
            self.monitord_exit = 1
        self._workflow_end(rec.ts)

    def _on_dagman_start(self, rec: D.DagmanLine) -> None:
        self.dagman_id = rec.sched_id
        if not self.opts.keep_state:
            self._drop_finished_jobs()

    def _on_pid(self, rec: D.DagmanLine) -> None:
        if self.opts.replay:
            return
        try:
            self.dagman_pid = int(rec.text or "")
        except ValueError:
            raise InvalidDagmanPid(rec.text or "") from None

    def _on_parsing(self, rec: D.DagmanLine) -> None:
        self._workflow_start(rec.ts)

    def _on_condor_version(self, rec: D.DagmanLine) -> None:
        self.dagman_version = rec.status or 0

    def _on_condor_log(self, rec: D.DagmanLine) -> None:
        self.condor_log = rec.text
        self.expect_log_entry = False

    def _on_log_list(self, rec: D.DagmanLine) -> None:
        self.expect_log_entry = True

    def _on_recovery_start(self, rec: D.DagmanLine) -> None:
        self.in_recovery = True

    def _on_sigusr1(self, rec: D.DagmanLine) -> None:
        log.warning("DAGMan received SIGUSR1", workflow=self.uuid)
        self.pending_reason = "DAGMan aborted as it received SIGUSR1 signal."

    def _on_hold_reason(self, rec: D.DagmanLine) -> None:
        inst = self.last_updated
        if inst is None:
            # The 5.1 reference crashes here; a hold reason with no job is ignored.
            log.warning("hold reason before any job", workflow=self.uuid)
            return
        if inst.state != "JOB_HELD":
            log.error("hold reason for a job that is not held", job=inst.name, state=inst.state)
        self.update_job_state(inst.name, "JOB_HELD_REASON", rec.ts, reason=rec.text)

    _handlers: dict[str, Callable[[Workflow, D.DagmanLine], None]] = {
        D.ULOG: _on_ulog,
        D.DAGMAN_SUBMIT: _on_dagman_submit,
        D.SUBMIT_FAILED: _on_submit_failed,
        D.SCRIPT_STARTED: _on_script_started,
        D.SCRIPT_RESULT: _on_script_result,
        D.JOB_RESULT: _on_job_result,
        D.DAGMAN_EXIT: _on_dagman_exit,
        D.DAGMAN_START: _on_dagman_start,
        D.PID: _on_pid,
        D.PARSING: _on_parsing,
        D.CONDOR_VERSION: _on_condor_version,
        D.CONDOR_LOG: _on_condor_log,
        D.LOG_LIST: _on_log_list,
        D.RECOVERY_START: _on_recovery_start,
        D.SIGUSR1: _on_sigusr1,
        D.HOLD_REASON: _on_hold_reason,
    }

    # ------------------------------------------------------------------ workflow states
    def _workflow_start(self, ts: float) -> None:
        if self.state == "start":
            # DAGMan died without an exit line (PM-723/1062/1217).
            self.internal(ts - 1, "DAGMAN_FINISHED 2")
            self.emit(
                "xwf.end",
                {
                    "xwf.id": self.uuid,
                    "ts": ts - 1,
                    "reason": self._take_reason(),
                    "restart_count": self.restart_count - 1,
                    "status": 2,
                    "level": "Error",
                },
            )
            self.dagman_exit = None
        self.internal(ts, f"DAGMAN_STARTED {self.dagman_id}")
        self.restart_count += 1
        self.state = "start"
        self.emit(
            "xwf.start",
            {
                "xwf.id": self.uuid,
                "ts": ts,
                "reason": self._take_reason(),
                "restart_count": self.restart_count - 1,
            },
        )
        self.on_workflow_state("start", ts)

    def _workflow_end(self, ts: float) -> None:
        code = self.dagman_exit
        self.internal(ts, f"DAGMAN_FINISHED {code}")
        self.state = "end"
        self.on_workflow_state("end", ts)
        attrs: dict[str, Any] = {
            "xwf.id": self.uuid,
            "ts": ts,
            "reason": self._take_reason(),
            "restart_count": self.restart_count - 1,
            "status": code if code is not None else 0,
        }
        if code != 0:
            attrs["level"] = "Error"
        self.emit("xwf.end", attrs)

    # ------------------------------------------------------------------ job outputs
    def job_files(self, inst: JobInstance) -> JobFiles:
        """Where the instance's files are and how to read them, for the output parse."""
        node = self.dag.nodes.get(inst.name) if self.dag else None
        return JobFiles(
            read_text=self.ctx.read_text,
            run_dir=self.run_dir,
            wf_uuid=self.uuid,
            is_subdag=bool(node is not None and node.is_subdag),
            rotated=bool(node is not None and node.post_script) or bool(self.dag.is_pmc),
            store_stdout=self.opts.store_stdout,
        )

    def read_job_output(self, inst: JobInstance, ts: float) -> None:
        """Parse the finished job's files, send what they gave, then tell the hooks."""
        found = parse_job_output(inst, self.job_files(inst), ts)
        for name, attrs in found.events:
            self.emit(name, attrs)
        for task, record in found.invocations:
            self.on_invocation(inst, task, record)
        self.on_job_output(inst, found.records)

    # Notification hooks (doc §11.2): they only tell ctx.notifier, which exists in live mode.
    def on_workflow_state(self, state: str, ts: float) -> None:
        """DAGMan started ("start") or exited ("end"); not for a synthetic end."""
        if self.ctx.notifier is not None:
            self.ctx.notifier.workflow_state(self, state, ts)

    def on_job_start(self, inst: JobInstance, ts: float) -> None:
        """Each EXECUTE; like job ends, only with an event sink (doc §5.4)."""
        if self.ctx.notifier is not None and self.opts.events_enabled:
            self.ctx.notifier.job_start(self, inst, ts)

    def on_job_output(self, inst: JobInstance, records: list[Any]) -> None:
        """The output parse of this state is done (``records``: its kickstart records)."""
        if self.ctx.notifier is not None:
            self.ctx.notifier.job_output(self, inst, records)

    def on_invocation(self, inst: JobInstance, task: int, record: dict[str, Any]) -> None:
        """Invocation (or task) ``task`` of the output parse; ``record`` is {} without one."""
        if self.ctx.notifier is None:
            return
        if not self.opts.events_enabled and (inst.state or "").startswith("POST_SCRIPT"):
            return  # the reference parses nothing at POST time without an event sink
        self.ctx.notifier.invocation(self, inst, task, record, self.state_ts)

    def on_job_end(self, inst: JobInstance, ts: float, status: int | None) -> None:
        """JOB_SUCCESS/FAILURE without POST script, or POST_SCRIPT_SUCCESS/FAILURE."""
        if self.ctx.notifier is not None:
            self.ctx.notifier.job_end(self, inst, ts, status)

    def _take_reason(self) -> str | None:
        reason, self.pending_reason = self.pending_reason, None
        return reason

    def _drop_finished_jobs(self) -> None:
        """A restarted DAGMan (rescue DAG) gets fresh instances of unfinished nodes."""
        for key, inst in list(self.jobs.items()):
            node = self.dag.nodes.get(inst.name) if self.dag else None
            has_post = bool(node and node.post_script)
            if inst.state == "POST_SCRIPT_SUCCESS" or (
                inst.state == "JOB_SUCCESS" and not has_post
            ):
                del self.jobs[key]
                if self.latest.get(inst.name) == inst.seq:
                    del self.latest[inst.name]

    # ------------------------------------------------------------------ job instances
    def _new_instance(self, name: str) -> JobInstance:
        seq = self.job_seq
        self.job_seq += 1
        node = self.dag.nodes.get(name) if self.dag else None
        if self.dag is not None and self.dag.is_pmc:
            submit_dir = self.run_dir
        elif node is not None and node.submit_file:
            submit_dir = os.path.dirname(os.path.join(self.run_dir, node.submit_file))
        else:
            if node is None or not node.is_subdag:
                log.error("job not found in the .dag file", job=name, workflow=self.uuid)
            submit_dir = self.run_dir
        inst = JobInstance(name=name, seq=seq, submit_dir=submit_dir)
        if node is not None and node.is_subdag:
            inst.site = "local"
        self.jobs[(name, seq)] = inst
        self.latest[name] = seq
        return inst

    def _latest_instance(self, name: str) -> JobInstance | None:
        seq = self.latest.get(name)
        return None if seq is None else self.jobs.get((name, seq))

    def _reuse_or_new(self, name: str, reuse: Callable[[JobInstance], bool]) -> JobInstance:
        inst = self._latest_instance(name)
        if inst is not None and reuse(inst):
            return inst
        return self._new_instance(name)

    def _parse_submit_file(self, inst: JobInstance) -> None:
        from monitord.core.readers.subfile import parse_submit_file

        node = self.dag.nodes.get(inst.name) if self.dag else None
        if node is None or not node.submit_file:
            return
        path = os.path.join(self.run_dir, node.submit_file)
        text = self.ctx.read_text(path)
        if text is None:
            log.warning("cannot read submit file", path=path, job=inst.name)
            return
        sub = parse_submit_file(text, job_name=inst.name, orig_submit_dir=self.orig_submit_dir)
        inst.sub = sub
        if sub.site:
            inst.site = sub.site
        if sub.time_requirement_seconds is not None:
            inst.time_req = sub.time_requirement_seconds

    def _bump_out_counter(self, inst: JobInstance) -> None:
        n = self.out_counters.get(inst.name)
        n = 0 if n is None else n + 1
        self.out_counters[inst.name] = n
        inst.out_num = n

    # ------------------------------------------------------------------ the state machine
    def update_job_state(
        self,
        name: str,
        state: str,
        ts: float,
        *,
        sched_id: str | None = None,
        status: int | None = None,
        reason: str | None = None,
    ) -> None:
        self.state_ts = ts
        row = JOB_STATES.get(state)
        how = row.instance if row is not None else "latest"
        if how == "pre":
            inst = self._reuse_or_new(name, lambda i: i.state in REUSABLE_STATES)
            self._parse_submit_file(inst)
        elif how == "submit":
            inst = self._reuse_or_new(
                name,
                lambda i: (
                    i.state in REUSABLE_STATES or (sched_id is not None and i.sched_id == sched_id)
                ),
            )
        else:
            found = self._latest_instance(name)
            if found is None:
                log.warning("state for an unknown job instance, ignored", job=name, state=state)
                return
            inst = found
        if inst.retired:
            # A state after the job's end (a duplicated block of lines): the reference still
            # knows the job's submit file, so its events carry the same details again.
            inst.retired = False
            self._parse_submit_file(inst)
        self.last_updated = inst
        opens = row is not None and row.opens_attempt
        out_of_order = False
        if sched_id is not None:
            if opens:
                inst.sched_id = sched_id
            elif inst.sched_id is None:
                out_of_order = True
                inst.sched_id = sched_id
        if opens:
            self._bump_out_counter(inst)
        inst.prev_state, inst.state = inst.state, state
        stamps = row.stamps if row is not None else None
        if stamps is not None:
            if stamps == "main_end_if_unset":
                if inst.main_end is None:
                    inst.main_end = ts
            else:
                setattr(inst, stamps, ts)
        # jobstate.log line: every state but DAGMAN_SUBMIT.
        inst.js_seq += 1
        if row is not None and row.col4 == "status":
            col4 = str(status)
        else:
            col4 = inst.sched_id or "-"
        treq = "-" if inst.time_req is None else str(inst.time_req)
        self.jobstate(ts, name, state, col4, inst.site or "-", treq, str(inst.seq))

        if out_of_order and self.opts.events_enabled:
            self._brief(inst, "job_inst.submit.start", ts, None, site=True)
        if row is None:
            return
        for ev_name, ev_status in row.events:
            self._brief(inst, ev_name, ts, ev_status, site=ev_name == "job_inst.submit.start")
        if row.action is not None:
            _ACTIONS[row.action](self, inst, ts, status, reason)
        if opens and self.opts.follow_subworkflows:
            self._check_subworkflow(inst)
        if row.ends == "yes" or (row.ends == "unless-deferred" and inst.deferred_main_end is None):
            inst.retire()

    # ------------------------------------------------------------------ event builders
    def _state_keys(self, inst: JobInstance, ts: float) -> dict[str, Any]:
        """The leading attributes of every event a job state produces."""
        return {
            "xwf.id": self.uuid,
            "job.id": inst.name,
            "job_inst.id": inst.seq,
            "ts": int(ts),
            "js.id": inst.js_seq,
        }

    def _brief(
        self,
        inst: JobInstance,
        name: str,
        ts: float,
        status: int | None,
        *,
        site: bool = False,
        reason: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        attrs = self._state_keys(inst, ts)
        attrs["reason"] = reason
        if inst.sched_id is not None:
            attrs["sched.id"] = inst.sched_id
        if site and inst.site is not None:
            attrs["site"] = inst.site
        if status is not None:
            attrs["status"] = status
            if status != 0:
                attrs["level"] = "Error"
        if extra:
            attrs.update(extra)
        self.emit(name, attrs)

    def _main_start(self, inst: JobInstance, ts: float) -> None:
        attrs = self._state_keys(inst, ts)
        sub = inst.sub
        if sub is not None:
            if sub.stdin:
                attrs["stdin.file"] = sub.stdin
            if sub.stdout:
                attrs["stdout.file"] = sub.stdout
            if sub.stderr:
                attrs["stderr.file"] = sub.stderr
        if inst.sched_id is not None:
            attrs["sched.id"] = inst.sched_id
        self.emit("job_inst.main.start", attrs)

    def build_main_end(self, inst: JobInstance, ts: float, status: int) -> dict[str, Any]:
        """The part of ``main.end`` fixed when the job's outcome is known (doc §5.5)."""
        attrs = self._state_keys(inst, ts)
        attrs.update(
            {
                "site": inst.site or "",
                "user": inst.user if inst.user is not None else self.bd.user,
            }
        )
        if inst.main_start is not None and inst.main_end is not None:
            attrs["local.dur"] = int(inst.main_end - inst.main_start)
        sub = inst.sub
        if sub is not None and sub.stdin:
            attrs["stdin_file"] = sub.stdin
        if sub is not None and sub.cores is not None:
            attrs["multiplier_factor"] = str(sub.cores)
        attrs["exitcode"] = str(inst.main_exitcode)
        if inst.sched_id is not None:
            attrs["sched.id"] = inst.sched_id
        attrs["status"] = status
        if status != 0:
            attrs["level"] = "Error"
        return attrs

    def send_main_end(self, inst: JobInstance, attrs: dict[str, Any]) -> None:
        """Complete ``main.end`` with what the output parse found, send it and ``composite``."""
        attrs["work_dir"] = inst.work_dir or self.orig_submit_dir
        if inst.cluster_start is not None:
            attrs["cluster.start"] = inst.cluster_start
        if inst.cluster_dur is not None:
            attrs["cluster.dur"] = inst.cluster_dur
        sub = inst.sub
        # No SUBMIT seen (lines lost): the files read were the .000 ones, and so say the paths.
        suffix = f".{inst.out_num or 0:03d}" if (inst.kickstart_parsed or inst.rotated) else ""
        if inst.stdout_file is not None:
            attrs["stdout.file"] = inst.stdout_file
        else:
            attrs["stdout.file"] = (sub.stdout + suffix) if sub is not None and sub.stdout else ""
        attrs["stderr.file"] = (sub.stderr + suffix) if sub is not None and sub.stderr else ""
        if self.opts.store_stdout:
            if inst.stdout_text is not None:
                attrs["stdout.text"] = _cap_text(inst.stdout_text, "stdout", inst)
            if inst.stderr_text is not None:
                attrs["stderr.text"] = _cap_text(inst.stderr_text, "stderr", inst)
        sent = self.emit("job_inst.main.end", attrs)
        composite = dict(sent)
        composite.update(composite_extras(inst, getattr(self.bd, "app", None), self.bd.dax_label))
        self.emit("job_inst.composite", composite)

    def script_invocation(self, inst: JobInstance, which: str) -> None:
        """inv.start / inv.end of a PRE (−1) or POST (−2) script."""
        node = self.dag.nodes.get(inst.name) if self.dag else None
        script = (
            (node.pre_script if which == "pre" else node.post_script) if node is not None else None
        )
        if which == "pre":
            start, end, code, inv_id = inst.pre_start, inst.pre_end, inst.pre_exitcode, -1
        else:
            start, end, code, inv_id = inst.post_start, inst.post_end, inst.post_exitcode, -2
        keys = {"xwf.id": self.uuid, "job.id": inst.name, "job_inst.id": inst.seq}
        inv_start: dict[str, Any] = {**keys, "inv.id": inv_id}
        if start is not None:
            inv_start["ts"] = int(start)
        self.emit("inv.start", inv_start)
        # The script's start line lost: it starts when it ended, with no CPU time (as the
        # reference; its inv.start then has no ts).
        begin = start if start is not None else end
        dur = int(end - begin) if (begin is not None and end is not None) else 0
        attrs: dict[str, Any] = {
            **keys,
            "inv.id": inv_id,
            "transformation": f"dagman::{which}",
            "start_time": int(begin) if begin is not None else None,
            "dur": dur,
        }
        if start is not None:
            attrs["remote_cpu_time"] = dur
        attrs["exitcode"] = str(code)
        attrs["executable"] = script.executable if script is not None else ""
        if script is not None:
            attrs["argv"] = script.arguments  # '' for a script without arguments
        if end is not None:
            attrs["ts"] = int(end)
        if attrs["exitcode"] != "0":
            attrs["level"] = "Error"
        self.emit("inv.end", attrs)

    # ------------------------------------------------------------------ sub-workflows
    def _check_subworkflow(self, inst: JobInstance) -> None:
        sub = inst.sub
        if sub is None or not getattr(sub, "dagman_log", None):
            if inst.name.startswith("subdax_"):
                log.error("sub-workflow job without _CONDOR_DAGMAN_LOG", job=inst.name)
            return
        if not (inst.name.startswith("pegasus-plan") or inst.name.startswith("subdax_")):
            return
        if self.ctx.on_subworkflow is None:
            return
        path = os.path.normpath(sub.dagman_log)
        prefix = self.orig_submit_dir.rstrip("/") + "/"
        if prefix in path:
            path = os.path.join(self.run_dir, path.replace(prefix, "", 1))
        self.ctx.on_subworkflow(
            SubworkflowRequest(
                parent=self,
                dagman_out=os.path.normpath(path),
                job_name=inst.name,
                job_seq=inst.seq,
                retry=inst.out_num or 0,
            )
        )


class InvalidDagmanPid(ValueError):
    """A ``** PID =`` line with a non-integer value (the reference exits 42)."""


def _cap_text(text: str, which: str, inst: JobInstance) -> str:
    if len(text) > 65535:
        log.warning("job text truncated", which=which, job=inst.name)
        return text[:65535]
    return text


# ---------------------------------------------------------------------- complex states
def _pre_success(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    inst.pre_exitcode = raw_exitcode(status or 0)
    wf.script_invocation(inst, "pre")
    wf._brief(inst, "job_inst.pre.end", ts, 0, extra={"exitcode": str(inst.pre_exitcode)})


def _pre_failure(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    inst.pre_exitcode = raw_exitcode(status or 0)
    inst.main_exitcode = inst.pre_exitcode
    wf._bump_out_counter(inst)
    wf.script_invocation(inst, "pre")
    wf._brief(inst, "job_inst.pre.end", ts, -1, extra={"exitcode": str(inst.pre_exitcode)})
    node = wf.dag.nodes.get(inst.name) if wf.dag else None
    read_pre_script_log(inst, node.pre_script_log if node is not None else None, wf.job_files(inst))
    attrs = wf.build_main_end(inst, ts, -1)
    wf.send_main_end(inst, attrs)


def _submit_failure(
    wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any
) -> None:
    inst.main_exitcode = 1
    inst.stderr_text = url_quote(f"Job submission failed because of HTCondor event {inst.state}")
    wf.send_main_end(inst, wf.build_main_end(inst, ts, -1))


def _execute(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    wf._main_start(inst, ts)
    wf.on_job_start(inst, ts)


def _job_result(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    inst.main_exitcode = raw_exitcode(status or 0)
    ok = 0 if inst.state == "JOB_SUCCESS" else -1
    node = wf.dag.nodes.get(inst.name) if wf.dag else None
    has_post = bool(node and node.post_script) and not wf.dag.is_pmc
    if has_post:
        inst.deferred_main_end = wf.build_main_end(inst, ts, ok)
        return
    wf.read_job_output(inst, ts)
    if not wf.opts.events_enabled:
        return
    wf.on_job_end(inst, ts, status)
    wf.send_main_end(inst, wf.build_main_end(inst, ts, ok))


def _job_aborted(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    inst.main_exitcode = 1
    wf._brief(inst, "job_inst.abort.info", ts, None)
    node = wf.dag.nodes.get(inst.name) if wf.dag else None
    has_post = bool(node and node.post_script)
    attrs = wf.build_main_end(inst, ts, -1)
    if has_post and inst.prev_state in ("JOB_HELD", "JOB_HELD_REASON"):
        inst.deferred_main_end = attrs
        return
    wf.send_main_end(inst, attrs)


def _held(wf: Workflow, inst: JobInstance, ts: float, status: int | None, reason: Any) -> None:
    new_dagman = wf.dagman_version >= 80303
    if (inst.state == "JOB_HELD_REASON") == new_dagman:
        wf._brief(inst, "job_inst.held.start", ts, None, reason=reason)


def _post_result(wf: Workflow, inst: JobInstance, ts: float, status: int | None, _r: Any) -> None:
    inst.post_exitcode = raw_exitcode(status or 0)
    if inst.main_exitcode is None:
        inst.main_exitcode = inst.post_exitcode
    wf.read_job_output(inst, ts)
    if not wf.opts.events_enabled:
        return
    if inst.deferred_main_end is not None:
        attrs, inst.deferred_main_end = inst.deferred_main_end, None
        wf.send_main_end(inst, attrs)
    wf.script_invocation(inst, "post")
    wf.on_job_end(inst, ts, status)
    ok = 0 if inst.state == "POST_SCRIPT_SUCCESS" else -1
    wf._brief(inst, "job_inst.post.end", ts, ok, extra={"exitcode": str(inst.post_exitcode)})


# The per-state code of the table's ``action`` column (monitord.core.jobmachine).
_ACTIONS: dict[str, Callable[[Workflow, JobInstance, float, int | None, Any], None]] = {
    "pre_success": _pre_success,
    "pre_failure": _pre_failure,
    "submit_failure": _submit_failure,
    "execute": _execute,
    "job_result": _job_result,
    "job_aborted": _job_aborted,
    "held": _held,
    "post_result": _post_result,
}
