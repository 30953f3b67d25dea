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
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.core import dagman as D
from monitord.core.events import (
    UNSET,
    Fixed,
    JobInstSubmitStart,
    StampedeEvent,
    XwfEnd,
    XwfStart,
)
from monitord.core.jobactions import Brief, JobActions, brief_builders
from monitord.core.jobinstance import JobInstance, TextTable, sched_id_of, state_of
from monitord.core.jobmachine import (
    JOB_STATES,
    REUSABLE_STATES,
    TRANSPARENT,
    JobState,
    in_order,
)
from monitord.core.jobreader import JobReader, ParsingReader
from monitord.core.linerecords import Record
from monitord.core.nodetable import NodeTable
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
    # How job files are read and parsed (None: with read_text, here; a replay may read ahead).
    reader: JobReader | None = None

    def __post_init__(self) -> None:
        if self.reader is None:
            self.reader = ParsingReader(self.read_text)


class Workflow(JobActions):
    """One workflow directory being followed (root or sub-workflow)."""

    # Job states seen out of DAGMan's order (monitord.core.jobmachine.in_order); a class
    # default, so that a machine restored from an older snapshot has it too.
    out_of_order = 0

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
        self._plug(ctx)
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
        self.out_counters: dict[str, int] = {}  # those `latest` cannot give (JobActions.out_count)
        # Node name (the .dag's copy) -> its latest instance, the only one a later line can
        # apply to (a retry's predecessor is not kept), a finished one as its record
        # (bytes: core/jobinstance.py); one table with the .dag's nodes (core/nodetable.py).
        self.latest = self._node_table({})
        self.texts = TextTable()  # the texts those records name by number
        self.submit_dirs: dict[str, str] = {}  # JobActions._submit_dir's, not in a snapshot
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
        # The workflow's fixed attributes, shared by every event it sends (doc §5.1).
        self.fixed = Fixed(
            xwf_id=self.uuid,
            root_xwf_id=root_uuid,
            dax=braindump.dax,
            dag=braindump.dag,
            wf_ts=wf_ts,
            submit_dir=braindump.submit_dir,
            pegasus_version=braindump.planner_version,
            submit_hostname=braindump.submit_hostname,
            wf_user=braindump.user,
        )

    # ------------------------------------------------------------------ resume snapshots
    _CONTEXT = ("ctx", "opts", "events", "emit", "submit_dirs")  # and a cache of the .dag's

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the daemon's context (callbacks, the shared event list): a snapshot
        of the machine (monitord/daemon/resume.py) that :meth:`attach` revives."""
        return {k: v for k, v in self.__dict__.items() if k not in self._CONTEXT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.submit_dirs = {}
        self.latest = self._node_table(state["latest"])

    def _node_table(self, latest: Any) -> NodeTable:
        """The table of the .dag's nodes and ``latest`` (a snapshot's, pickled as two dicts, or
        a table), the .dag's ``nodes`` made its view."""
        dag = self.dag
        nodes = None
        if dag is not None:
            nodes = dag.nodes if type(dag.nodes) is dict else dict(dag.nodes.items())
        table = NodeTable(nodes)
        for name, value in latest.items():
            table[name] = value
        if dag is not None:
            dag.nodes = table.nodes
        return table

    def attach(self, ctx: WorkflowContext) -> None:
        """Plug a restored machine into a daemon's context."""
        self._plug(ctx)

    def _plug(self, ctx: WorkflowContext) -> None:
        self.ctx = ctx
        self.opts = ctx.options
        self.events = ctx.events
        # ``emit(event)`` sends an event (built by its producer, with :attr:`fixed` where its
        # kind has them): the list's own append, or nothing without events. Decided here
        # once, not per event (a replay sends ~600,000): the daemon settles
        # ``events_enabled`` before it opens or restores a workflow.
        self.emit = ctx.events.append if ctx.options.events_enabled else _drop

    def internal(self, ts: float, text: str) -> None:
        self.jobstate_lines.append(f"{int(ts)} INTERNAL *** {text} ***\n")

    # ------------------------------------------------------------------ lines
    def feed(self, line: str) -> str | None:
        """Process one dagman.out line (without its newline); its kind (None: not one DAGMan
        line this machine acts on, or not looked at: already processed, in recovery)."""
        self.line_no += 1
        if self.line_no <= self.last_processed_line:
            self._note_processed(line)
            return None
        line = line.rstrip()
        if self.in_recovery:
            if "...done with RECOVERY mode" in line and dagman_timestamp(line) is not None:
                self.in_recovery = False
            return None
        expect = self.expect_log_entry
        rec = D.classify(line, adjust=self.opts.adjust, expect_log_entry=expect)
        if expect and (rec is None or rec.kind != D.LOG_LIST):
            self.expect_log_entry = False
        if rec is None:
            return None
        handler = self._handlers.get(rec.kind)
        if handler is not None:
            handler(self, rec)
        return rec.kind

    def feed_lines(self, lines: list[str], records: list[Record] | None = None) -> None:
        """:meth:`feed` each line of a chunk, with the per-line lookups made once (a replay's
        417,096 lines for 20,000 jobs); the rare lines (already processed, in recovery, in
        the list of log files) go through :meth:`feed` itself.  ``records``: the chunk's
        lines classified already (the read-ahead worker's, ``monitord/core/linerecords.py``),
        used while the machine is in none of those states."""
        if records is not None and not (
            self.in_recovery or self.expect_log_entry or self.line_no < self.last_processed_line
        ):
            self._feed_records(lines, records)
        else:
            self._feed_each(lines)

    def _feed_records(self, lines: list[str], records: list[Record]) -> None:
        """A handler per record, each run with the line's number as :meth:`feed` has it, the
        lines between only counted; after a record that puts the machine in the list of log
        files or in recovery, the chunk's other lines go through :meth:`_feed_each`."""
        start = self.line_no
        handlers, dagman_line = self._handlers, D.DagmanLine
        for pos, kind, ts, job, state, sched_id, status, text in records:
            handler = handlers.get(kind)
            if handler is None:
                continue
            self.line_no = start + pos + 1
            handler(self, dagman_line(kind, ts, job, state, sched_id, status, text))
            if self.in_recovery or self.expect_log_entry:
                self._feed_each(lines[pos + 1 :])
                return
        self.line_no = start + len(lines)

    def _feed_each(self, lines: list[str]) -> None:
        """Each line classified here (:meth:`feed_lines` without records)."""
        classify, handlers, adjust, feed = (
            D.classify_line,
            self._handlers,
            self.opts.adjust,
            self.feed,
        )
        for line in lines:
            if self.in_recovery or self.expect_log_entry or self.line_no < self.last_processed_line:
                feed(line)
                continue
            self.line_no += 1
            rec = classify(line.rstrip(), adjust)
            if rec is not None:
                handler = handlers.get(rec.kind)
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
        inst = self._reuse_or_new(name, _reusable)
        self._parse_submit_file(inst)
        self._check_order(inst, "DAGMAN_SUBMIT")
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
                XwfEnd(
                    xwf_id=self.uuid,
                    ts=ts - 1,
                    reason=self._take_reason(),
                    restart_count=self.restart_count - 1,
                    status=2,
                    level="Error",
                    fixed=self.fixed,
                )
            )
            self.dagman_exit = None
        self.internal(ts, f"DAGMAN_STARTED {self.dagman_id}")
        self.restart_count += 1
        self.state = "start"
        self.emit(
            XwfStart(
                xwf_id=self.uuid,
                ts=ts,
                reason=self._take_reason(),
                restart_count=self.restart_count - 1,
                fixed=self.fixed,
            )
        )
        self.on_workflow_state("start", ts)

    def _workflow_end(self, ts: float) -> None:
        code = self.dagman_exit
        self.internal(ts, f"DAGMAN_FINISHED {code}")
        self.state = "end"
        self.on_workflow_state("end", ts)
        self.emit(
            XwfEnd(
                xwf_id=self.uuid,
                ts=ts,
                reason=self._take_reason(),
                restart_count=self.restart_count - 1,
                status=code if code is not None else 0,
                level="Error" if code != 0 else UNSET,
                fixed=self.fixed,
            )
        )

    # Notification hooks (doc §11.2): they only tell ctx.notifier, which exists in live mode.
    def on_workflow_state(self, state: str, ts: float) -> None:
        """DAGMan started ("start") or exited ("end"); not for a synthetic end."""
        if self.ctx.notifier is not None:
            self.ctx.notifier.workflow_state(self, state, ts)

    def _take_reason(self) -> str | None:
        reason, self.pending_reason = self.pending_reason, None
        return reason

    def _drop_finished_jobs(self) -> None:
        """A restarted DAGMan (rescue DAG) gets fresh instances of unfinished nodes."""
        for name, node, inst in list(self.latest.with_nodes()):
            has_post = node is not None and node.has_post_script
            state = state_of(inst)
            if state == "POST_SCRIPT_SUCCESS" or (state == "JOB_SUCCESS" and not has_post):
                self._keep_out_count(name, inst)
                self.latest.drop(name, node)  # its node handed over: no look-up by name

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
        briefs: tuple[Brief, ...]
        plan = _PLANS.get(state)
        if plan is None:  # a state without a row: its jobstate.log line only
            state, row, briefs = sys.intern(state), TRANSPARENT, ()
        else:
            state, row, briefs = plan  # the row's own copy of the name: the instance keeps it
        inst = self._instance_for(row, name, state, sched_id)
        if inst is None:
            return
        self.last_updated = inst
        out_of_order = False
        opens = row.opens_attempt
        if sched_id is not None:
            if opens:
                inst.sched_id = sched_id
            elif inst.sched_id is None:
                out_of_order = True
                inst.sched_id = sched_id
        if opens:
            self._bump_out_counter(inst)
        if row is not TRANSPARENT:
            known = inst.known_state
            if not row.allows(known):
                self._out_of_order(inst, state)
            inst.known_state = state
        inst.prev_state, inst.state = inst.state, state
        if row.stamps is not None:
            row.stamp(inst, ts)
        self._jobstate_line(inst, row, name, state, ts, status)
        if out_of_order and self.opts.events_enabled:
            self._brief(inst, JobInstSubmitStart.name, ts, None, site=True)
        # The row's brief events in order (JobState.act, with each builder made once), then
        # its action.
        emit = self.emit
        for build in briefs:
            emit(build(self, inst, ts))
        if row.action is not None:
            row.action(self, inst, ts, status, reason)
        if opens and self.opts.follow_subworkflows:
            self._check_subworkflow(inst)
        if row.ends != "no" and row.ends_now(inst):
            inst.retire()
            if self.latest.get(inst.name) is inst:
                self.latest[inst.name] = self._finished(inst)

    def _instance_for(
        self, row: JobState, name: str, state: str, sched_id: str | None
    ) -> JobInstance | None:
        """The instance a state applies to: new or reused for a row that may begin one, else
        the node's latest; None (logged) for a node without one."""
        inst: JobInstance | None
        if row.instance == "pre" or row.instance == "submit":
            inst = self._new_or_reused(row, name, sched_id)
        else:
            found = self.latest.get(name)
            inst = found if type(found) is JobInstance else self._latest_instance(name)
            if inst is None:
                log.warning("state for an unknown job instance, ignored", job=name, state=state)
                return None
        if inst.retired:
            # A state after the job's end (a duplicated block of lines): the reference still
            # knows the job's submit file, so its events carry the same details again.
            inst.retired = False
            self._parse_submit_file(inst)
        return inst

    def _jobstate_line(
        self,
        inst: JobInstance,
        row: JobState,
        name: str,
        state: str,
        ts: float,
        status: int | None,
    ) -> None:
        """The state's jobstate.log line (every state but DAGMAN_SUBMIT)."""
        inst.js_seq += 1
        treq = "-" if inst.time_req is None else inst.time_req
        col4 = status if row.col4 == "status" else (inst.sched_id or "-")
        self.jobstate_lines.append(
            f"{int(ts)} {name} {state} {col4} {inst.site or '-'} {treq} {inst.seq}\n"
        )

    def _new_or_reused(self, row: JobState, name: str, sched_id: str | None) -> JobInstance:
        """The instance a state that may begin one applies to (the row's ``instance``:
        "pre", its submit file read again, or "submit")."""
        if row.instance == "pre":
            inst = self._reuse_or_new(name, _reusable)
            self._parse_submit_file(inst)
            return inst
        return self._reuse_or_new(
            name,
            lambda i: (
                state_of(i) in REUSABLE_STATES
                or (sched_id is not None and sched_id_of(i) == sched_id)
            ),
        )

    def _check_order(self, inst: JobInstance, state: str) -> None:
        """Log and count a state DAGMan would not write after the instance's last one."""
        if not in_order(state, inst.known_state):
            self._out_of_order(inst, state)
        inst.known_state = state

    def _out_of_order(self, inst: JobInstance, state: str) -> None:
        self.out_of_order += 1
        log.warning(
            "job state out of DAGMan's order, handled anyway",
            job=inst.name,
            state=state,
            after=inst.known_state,
            workflow=self.uuid,
        )

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


def _drop(event: StampedeEvent) -> None:
    """``emit`` without events (``--no-events``, no sink)."""


def _reusable(inst: JobInstance | bytes) -> bool:
    """Whether the next submit of the node takes this instance again."""
    return state_of(inst) in REUSABLE_STATES


# Each job state of the table, as update_job_state takes it: the state's name (interned: every
# instance in that state keeps it), its row, and its brief events' builders (made once here,
# not looked up by name per event).
_PLANS: dict[str, tuple[str, JobState, tuple[Brief, ...]]] = {
    sys.intern(state): (sys.intern(state), row, brief_builders(row.events))
    for state, row in JOB_STATES.items()
}


class InvalidDagmanPid(ValueError):
    """A ``** PID =`` line with a non-integer value (the reference exits 42)."""
