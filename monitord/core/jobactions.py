"""The job half of the workflow machine: the verbs the job state table's actions use.

:data:`monitord.core.jobmachine.JOB_STATES` says per state which instance, which
stamp, which events and which action (the action's code stands next to the table);
this module holds what those actions call: finding or making the instance
(``_new_instance``, ``_reuse_or_new``), the event builders (``_brief``,
``build_main_end``, ``send_main_end``, ``script_invocation``), the output parse's
callers (``read_job_output``, ``read_pre_script_log``) and the job notification hooks.
:class:`JobActions` is a mixin of :class:`monitord.core.workflow.Workflow`, which
owns the state the attributes below name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, cast

import structlog

from monitord.core.events import (
    EVENT_CLASSES,
    UNSET,
    InvEnd,
    InvStart,
    JobInstComposite,
    JobInstMainEnd,
    JobInstMainStart,
    JobInstSubmitStart,
    StampedeEvent,
)
from monitord.core.jobinstance import JobInstance, TextTable, finished, out_num_of, revive, shared
from monitord.core.jobout import parse_job_output, read_pre_script_log
from monitord.core.jobout_events import JobFiles, composite_extras
from monitord.core.nodetable import NodeTable

log = structlog.get_logger(__name__)

#: The attributes every brief kind starts with (the catalogue's ``_BRIEF``), and what follows
#: them, by the kind's count of attributes (``JobActions._brief`` builds them positionally).
BRIEF = ("xwf_id", "job_id", "job_inst_id", "ts", "js_id", "reason", "sched_id")
BRIEF_TAILS = {7: (), 8: ("site",), 9: ("status", "level"), 10: ("status", "level", "exitcode")}

#: A job state's brief event, built from the machine, the instance and the line's time.
Brief = Callable[["JobActions", JobInstance, float], StampedeEvent]


def brief_builders(events: tuple[tuple[str, int | None], ...]) -> tuple[Brief, ...]:
    """The builders of a job state row's brief events (its ``events``: kind, status), made
    once per row: what :meth:`JobActions._brief` works out per event (the class, its shape,
    the status's level) is settled here, so each event is one positional ``of`` call."""
    return tuple(_brief_builder(name, status) for name, status in events)


def _brief_builder(name: str, status: int | None) -> Brief:
    cls: Any = EVENT_CLASSES[name]
    of, n = cls.of, len(cls.fields)
    if n == 7:

        def build(wf: JobActions, inst: JobInstance, ts: float) -> StampedeEvent:
            sched = inst.sched_id
            return of(  # type: ignore[no-any-return]
                wf.uuid, inst.name, inst.seq, int(ts), inst.js_seq, None,
                UNSET if sched is None else sched, wf.fixed,
            )  # fmt: skip

    elif n == 8:  # site: only submit.start has it, and it is sent
        site = name == JobInstSubmitStart.name

        def build(wf: JobActions, inst: JobInstance, ts: float) -> StampedeEvent:
            sched, where = inst.sched_id, inst.site
            return of(  # type: ignore[no-any-return]
                wf.uuid, inst.name, inst.seq, int(ts), inst.js_seq, None,
                UNSET if sched is None else sched,
                where if site and where is not None else UNSET, wf.fixed,
            )  # fmt: skip

    else:  # status, level[, exitcode]: as _brief, no exit code in a row's events
        sent: Any = UNSET if status is None else status
        level: Any = "Error" if status is not None and status != 0 else UNSET
        if n == 9:

            def build(wf: JobActions, inst: JobInstance, ts: float) -> StampedeEvent:
                sched = inst.sched_id
                return of(  # type: ignore[no-any-return]
                    wf.uuid, inst.name, inst.seq, int(ts), inst.js_seq, None,
                    UNSET if sched is None else sched, sent, level, wf.fixed,
                )  # fmt: skip

        else:

            def build(wf: JobActions, inst: JobInstance, ts: float) -> StampedeEvent:
                sched = inst.sched_id
                return of(  # type: ignore[no-any-return]
                    wf.uuid, inst.name, inst.seq, int(ts), inst.js_seq, None,
                    UNSET if sched is None else sched, sent, level, UNSET, wf.fixed,
                )  # fmt: skip

    return build


class JobActions:
    """Job instances, their events and the per-state actions (mixed into the workflow machine)."""

    # Owned by the workflow machine.
    ctx: Any
    opts: Any
    uuid: str
    run_dir: str
    bd: Any
    dag: Any
    orig_submit_dir: str
    dagman_version: int
    state_ts: float
    job_seq: int
    latest: NodeTable
    out_counters: dict[str, int]
    texts: TextTable
    submit_dirs: dict[str, str]  # _submit_dir's, by the submit file's path to its last "/"
    fixed: Any
    emit: Callable[[StampedeEvent], None]

    # ------------------------------------------------------------------ job instances
    def _new_instance(self, name: str) -> JobInstance:
        seq = self.job_seq
        self.job_seq += 1
        node = self.latest.node(name)
        if node is not None:
            name = node.name  # the DAG's copy, not the line's: kept per job to the end
        pmc = self.dag is not None and self.dag.is_pmc
        if not pmc and (node is None or not (node.submit_file or node.is_subdag)):
            log.error("job not found in the .dag file", job=name, workflow=self.uuid)
        inst = JobInstance(name=name, seq=seq, submit_dir=self._submit_dir(node))
        if node is not None and node.is_subdag:
            inst.site = "local"
        latest = self.latest
        replaced = latest.get(name)
        if replaced is not None:
            self._keep_out_count(name, replaced)
        latest[name] = inst
        return inst

    def _submit_dir(self, node: Any) -> str:
        """The submit directory of a node's instances (``node``: its ``.dag`` entry, or None)."""
        if self.dag is not None and self.dag.is_pmc:
            return self.run_dir
        submit_file = node.submit_file if node is not None else None
        if not submit_file:
            return self.run_dir
        # The directory depends only on the file's path up to its last "/": made once per
        # directory (twice per instance otherwise: a join, a dirname and an intern each).
        key = submit_file[: submit_file.rfind("/") + 1]
        found = self.submit_dirs.get(key)
        if found is None:
            found = shared(os.path.dirname(os.path.join(self.run_dir, submit_file)))
            self.submit_dirs[key] = found
        return found

    def _finished(self, inst: JobInstance) -> JobInstance | bytes:
        """The record the workflow keeps of a retired instance (its submit directory left
        out when the node's ``.dag`` entry gives it)."""
        node = self.latest.node(inst.name)
        return finished(inst, self._submit_dir(node), self.texts)

    def _latest_instance(self, name: str) -> JobInstance | None:
        found = self.latest.get(name)
        if not isinstance(found, bytes):
            return found
        # A later state of a finished instance (duplicated lines): the whole instance again.
        node = self.latest.node(name)
        inst = revive(
            found, node.name if node is not None else name, self._submit_dir(node), self.texts
        )
        self.latest[inst.name] = inst
        return inst

    def _reuse_or_new(self, name: str, reuse: Callable[[JobInstance | bytes], bool]) -> JobInstance:
        """The node's latest instance if ``reuse`` takes it (asked of a finished one as it is
        kept: a retry of a failed instance does not revive it), else a new instance."""
        found = self.latest.get(name)
        if found is not None and reuse(found):
            if type(found) is JobInstance:
                return found
            inst = self._latest_instance(name)  # a finished record, revived
            if inst is not None:
                return inst
        return self._new_instance(name)

    def _parse_submit_file(self, inst: JobInstance) -> None:
        node = self.latest.node(inst.name)
        if node is None or not node.submit_file:
            return
        path = os.path.join(self.run_dir, node.submit_file)
        sub = self.ctx.reader.submit_file(path, inst.name, self.orig_submit_dir)
        if sub is None:
            log.warning("cannot read submit file", path=path, job=inst.name)
            return
        inst.sub = sub
        if sub.site:
            inst.site = shared(sub.site)
        if sub.time_requirement_seconds is not None:
            inst.time_req = sub.time_requirement_seconds

    # ------------------------------------------------------------------ output counters
    # A node's output counter (how many of its attempts have had an output number: the
    # next one's files are <job>.out.<N>) is its latest instance's ``out_num`` (its record's,
    # once finished), not a table of its own (38 B a job at 100,000 jobs: bench/README.md,
    # "memory30i"). ``out_counters`` keeps only the counts the latest instance does not
    # give: a retry made but not yet numbered, a node a rescue restart dropped
    # (``_drop_finished_jobs``), one a clean stop's monitord.info names; it is asked first.

    def out_count(self, name: str) -> int | None:
        """The node's output counter (None: no attempt of it has had an output number)."""
        kept = self.out_counters
        if kept:
            n = kept.get(name)
            if n is not None:
                return n
        found = self.latest.get(name)
        return None if found is None else out_num_of(found)

    def _keep_out_count(self, name: str, replaced: JobInstance | bytes) -> None:
        """``replaced`` leaves ``latest`` (a new instance, a rescue restart): its count kept."""
        kept = self.out_counters
        if name not in kept:
            n = out_num_of(replaced)
            if n is not None:
                kept[name] = n

    def _bump_out_counter(self, inst: JobInstance) -> None:
        name = inst.name
        n = self.out_count(name)
        n = 0 if n is None else n + 1
        inst.out_num = n
        kept = self.out_counters
        if self.latest.get(name) is not inst:
            kept[name] = n  # (not the node's latest: no such path today, but kept right)
        elif kept:
            kept.pop(name, None)

    def out_counts(self) -> Iterator[tuple[str, int]]:
        """Every node's output counter (monitord.info): in ``latest``'s order, then the nodes
        only ``out_counters`` knows."""
        kept = self.out_counters
        latest = self.latest
        for name, found in latest.items():
            n = kept.get(name) if kept else None
            if n is None:
                n = out_num_of(found)
            if n is not None:
                yield name, n
        for name, n in kept.items():
            if name not in latest:
                yield name, n

    # ------------------------------------------------------------------ event builders
    def _state_keys(self, inst: JobInstance, ts: float) -> dict[str, Any]:
        """The leading fields of every event a job state produces (and the fixed ones)."""
        return {
            "xwf_id": self.uuid,
            "job_id": inst.name,
            "job_inst_id": inst.seq,
            "ts": int(ts),
            "js_id": inst.js_seq,
            "fixed": self.fixed,
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
        exitcode: Any = UNSET,
    ) -> None:
        """A job state's event ``name`` (the job state table's: one of the brief kinds), built
        positionally: its attributes are :data:`BRIEF` and the tail :data:`BRIEF_TAILS` names
        for their count (tests/test_catalogue.py checks every kind sent here)."""
        cls: Any = EVENT_CLASSES[name]
        sched: Any = inst.sched_id
        if sched is None:
            sched = UNSET
        n = len(cls.fields)
        if n == 7:
            event = cls.of(
                self.uuid, inst.name, inst.seq, int(ts), inst.js_seq, reason, sched, self.fixed
            )
        elif n == 8:  # site
            where = inst.site if site and inst.site is not None else UNSET
            event = cls.of(
                self.uuid, inst.name, inst.seq, int(ts), inst.js_seq, reason, sched, where,
                self.fixed,
            )  # fmt: skip
        else:  # status, level[, exitcode]: as the keyword build had it, none when no status
            level = "Error" if status is not None and status != 0 else UNSET
            sent: Any = UNSET if status is None else status
            if n == 9:
                event = cls.of(
                    self.uuid, inst.name, inst.seq, int(ts), inst.js_seq, reason, sched, sent,
                    level, self.fixed,
                )  # fmt: skip
            else:
                event = cls.of(
                    self.uuid, inst.name, inst.seq, int(ts), inst.js_seq, reason, sched, sent,
                    level, exitcode, self.fixed,
                )  # fmt: skip
        self.emit(event)

    def _main_start(self, inst: JobInstance, ts: float) -> None:
        sub = inst.sub
        self.emit(
            JobInstMainStart.of(
                self.uuid,
                inst.name,
                inst.seq,
                int(ts),
                inst.js_seq,
                sub.stdin or UNSET if sub is not None else UNSET,  # stdin_file
                sub.stdout or UNSET if sub is not None else UNSET,  # stdout_file
                sub.stderr or UNSET if sub is not None else UNSET,  # stderr_file
                _opt(inst.sched_id),
                self.fixed,
            )  # fmt: skip
        )

    def build_main_end(self, inst: JobInstance, ts: float, status: int) -> dict[str, Any]:
        """The fields of ``main.end`` fixed when the job's outcome is known (doc §5.5)."""
        fields = self._state_keys(inst, ts)
        fields["site"] = inst.site or ""
        fields["user"] = inst.user if inst.user is not None else self.bd.user
        if inst.main_start is not None and inst.main_end is not None:
            fields["local_dur"] = int(inst.main_end - inst.main_start)
        sub = inst.sub
        if sub is not None and sub.stdin:
            fields["stdin_file"] = sub.stdin
        if sub is not None and sub.cores is not None:
            fields["multiplier_factor"] = str(sub.cores)
        fields["exitcode"] = str(inst.main_exitcode)
        if inst.sched_id is not None:
            fields["sched_id"] = inst.sched_id
        fields["status"] = status
        if status != 0:
            fields["level"] = "Error"
        return fields

    def send_main_end(self, inst: JobInstance, fields: dict[str, Any]) -> None:
        """Complete ``main.end`` with what the output parse found, send it and ``composite``."""
        fields["work_dir"] = inst.work_dir or self.orig_submit_dir
        if inst.cluster_start is not None:
            fields["cluster_start"] = inst.cluster_start
        if inst.cluster_dur is not None:
            fields["cluster_dur"] = inst.cluster_dur
        sub = inst.sub
        # No SUBMIT seen (lines lost): the files read were the .000 ones, and so say the paths.
        suffix = f".{inst.out_num or 0:03d}" if (inst.kickstart_parsed or inst.rotated) else ""
        if inst.stdout_file is not None:
            fields["stdout_file"] = inst.stdout_file
        else:
            fields["stdout_file"] = (sub.stdout + suffix) if sub is not None and sub.stdout else ""
        fields["stderr_file"] = (sub.stderr + suffix) if sub is not None and sub.stderr else ""
        if self.opts.store_stdout:
            if inst.stdout_text is not None:
                fields["stdout_text"] = _cap_text(inst.stdout_text, "stdout", inst)
            if inst.stderr_text is not None:
                fields["stderr_text"] = _cap_text(inst.stderr_text, "stderr", inst)
        fixed = fields.get("fixed")
        self.emit(_MAIN_END_OF(*map(fields.get, _MAIN_END, _UNSETS), fixed))
        own, extra = composite_extras(inst, getattr(self.bd, "app", None), self.bd.dax_label)
        fields.update(own)
        self.emit(_COMPOSITE_OF(*map(fields.get, _COMPOSITE, _UNSETS), fixed, extra))

    def script_invocation(self, inst: JobInstance, which: str) -> None:
        """inv.start / inv.end of a PRE (−1) or POST (−2) script."""
        node = self.latest.node(inst.name)
        script = (
            (node.pre_script if which == "pre" else node.post_script) if node is not None else None
        )
        if which == "pre":
            start, end, code, inv_id = inst.pre_start, inst.pre_end, inst.pre_exitcode, -1
        else:
            start, end, code, inv_id = inst.post_start, inst.post_end, inst.post_exitcode, -2
        uuid, job, seq, fixed = self.uuid, inst.name, inst.seq, self.fixed
        ts = int(start) if start is not None else UNSET
        self.emit(InvStart.of(uuid, job, seq, inv_id, ts, fixed))
        # The script's start line lost: it starts when it ended, with no CPU time (as the
        # reference; its inv.start then has no ts).
        begin = start if start is not None else end
        dur = int(end - begin) if (begin is not None and end is not None) else 0
        exitcode = str(code)
        inv_end = InvEnd.of(
            uuid, job, seq, inv_id,
            f"dagman::{which}",  # transformation
            UNSET,  # task_id
            int(begin) if begin is not None else None,  # start_time
            dur,
            dur if start is not None else UNSET,  # remote_cpu_time
            UNSET,  # avg_cpu
            UNSET,  # maxrss
            int(end) if end is not None else UNSET,  # ts
            exitcode,
            script.executable if script is not None else "",  # executable
            script.arguments if script is not None else UNSET,  # argv: '' without arguments
            "Error" if exitcode != "0" else UNSET,  # level
            fixed,
        )  # fmt: skip
        # The reference sends a script's ts after its argv, unlike a kickstart record's.
        self.emit(inv_end.sent_last("ts", "level"))

    # ------------------------------------------------------------------ job outputs
    def job_files(self, inst: JobInstance) -> JobFiles:
        """Where the instance's files are and how to read them, for the output parse."""
        node = self.latest.node(inst.name)
        return JobFiles(
            read_text=self.ctx.read_text,
            run_dir=self.run_dir,
            wf_uuid=self.uuid,
            is_subdag=bool(node is not None and node.is_subdag),
            rotated=(node is not None and node.has_post_script) or bool(self.dag.is_pmc),
            store_stdout=self.opts.store_stdout,
            fixed=self.fixed,
            reader=self.ctx.reader,
        )

    def read_pre_script_log(self, inst: JobInstance) -> None:
        """A failed PRE script's log becomes the instance's stdout (doc §5.5)."""
        node = self.latest.node(inst.name)
        log_path = node.pre_script_log if node is not None else None
        read_pre_script_log(inst, log_path, self.job_files(inst))

    def read_job_output(self, inst: JobInstance, ts: float) -> None:
        """Parse the finished job's files, send what they gave, then tell the hooks."""
        found = parse_job_output(inst, self.job_files(inst), ts)
        for event in found.events:
            self.emit(event)
        for task, record in found.invocations:
            self.on_invocation(inst, task, record)
        self.on_job_output(inst, found.records)

    # Job notification hooks (doc §11.2): they only tell ctx.notifier, in live mode.
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


# main.end's and composite's fields in their ``of`` order: send_main_end builds both from its
# dict of fields positionally (by keyword, binding ~20 and ~40 of them cost as much as the rest
# of the two events), a field it does not have UNSET.
_MAIN_END, _MAIN_END_OF = JobInstMainEnd.fields, cast(Any, JobInstMainEnd.of)
_COMPOSITE, _COMPOSITE_OF = JobInstComposite.fields, cast(Any, JobInstComposite.of)
_UNSETS = (UNSET,) * len(_COMPOSITE)


def _opt(value: Any) -> Any:
    """``None`` read from a file or the instance: the attribute is not sent."""
    return UNSET if value is None else value


def _cap_text(text: str, which: str, inst: JobInstance) -> str:
    if len(text) > 65535:
        log.warning("job text truncated", which=which, job=inst.name)
        return text[:65535]
    return text
