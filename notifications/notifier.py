"""The daemon's notification manager: ``.notify`` files per workflow, matching, the script pool.

The state machine (:class:`monitord.core.workflow.Workflow`) calls the hook
methods below from the worker thread that feeds it; matching happens there
(pure, cheap) and each firing is handed to the :class:`ScriptPool` on the
event loop with ``call_soon_threadsafe``, so scripts start as soon as the
chunk is processed and in the order the events happened.  Created only for
live following: replay never notifies (doc §11.4).
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from dataclasses import dataclass
from typing import Any

import structlog

from notifications.grammar import NotifyTable, parse_notify
from notifications.logfile import NotificationsLog
from notifications.matching import (
    Firing,
    JobFacts,
    WorkflowFacts,
    invocation_firings,
    job_end_firings,
    job_end_status,
    job_start_firings,
    wfid,
    workflow_firings,
)
from notifications.pool import ScriptLoad, ScriptPool

log = structlog.get_logger(__name__)


@dataclass
class _Tracked:
    table: NotifyTable
    facts: WorkflowFacts
    # Lines a crashed predecessor already handled: their notifications were sent (doc §4.7).
    suppress_until: int = 0


class Notifier:
    def __init__(
        self,
        pool: ScriptPool,
        notify_log: NotificationsLog | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.pool = pool
        self.log = notify_log
        self.loop = loop
        self.workflows: dict[str, _Tracked] = {}
        # PM-1176: the single record's exit code, from the output parse to the job's end.
        self._record_exitcodes: dict[tuple[str, str, int], int] = {}
        self._early: deque[Firing] = deque()

    @classmethod
    def create(
        cls,
        *,
        run_dir: str,
        output_dir: str | None,
        max_running: int,
        timeout: float,
        loop: asyncio.AbstractEventLoop | None,
        full_log: bool = True,
        kill_grace: float = 5.0,
        run_as: tuple[int, int] | None = None,
    ) -> Notifier:
        """Open the notifications log (OSError if it cannot be) and build the pool."""
        from notifications.logfile import log_path

        notify_log = NotificationsLog(log_path(run_dir, output_dir), full=full_log)
        pool = ScriptPool(
            max_running=max_running,
            timeout=timeout,
            cwd=run_dir,
            record=notify_log.write,
            kill_grace=kill_grace,
            run_as=run_as,
        )
        return cls(pool, notify_log, loop)

    # ------------------------------------------------------------------ workflows
    def open_workflow(
        self, run_dir: str, braindump: Any, dagman_out: str, recover_path: str | None = None
    ) -> None:
        """Load the workflow's ``.notify`` (none, or no valid entry: nothing to notify)."""
        name = getattr(braindump, "notify", None)
        if not name:
            return
        path = os.path.join(run_dir, str(name))
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            log.info("no notifications for this workflow", path=path, error=exc.strerror)
            return
        table, diags = parse_notify(text, wf_uuid=braindump.wf_uuid, path=path)
        for diag in diags:
            log.warning(
                "notification line kept" if diag.kept else "notification line skipped",
                path=diag.path,
                line=diag.line_no,
                reason=diag.message,
                text=diag.text,
            )
        if not table:
            return
        log.info("notifications loaded", path=path, definitions=len(table))
        facts = WorkflowFacts(
            wf_uuid=braindump.wf_uuid,
            wfid=wfid(braindump.dax_label, braindump.dax_index),
            submit_dir=str(braindump.submit_dir or run_dir),
            dagman_out=os.path.abspath(dagman_out),
        )
        self.workflows[run_dir] = _Tracked(table, facts, _recover_line(recover_path))

    def _lookup(self, wf: Any) -> _Tracked | None:
        tracked = self.workflows.get(wf.run_dir)
        if tracked is None or wf.line_no <= tracked.suppress_until:
            return None
        return tracked

    # ------------------------------------------------------------------ hooks (worker thread)
    def workflow_state(self, wf: Any, state: str, ts: float) -> None:
        tracked = self._lookup(wf)
        if tracked is not None and tracked.table.workflow:
            self._submit(
                workflow_firings(tracked.table.workflow, tracked.facts, state, ts, wf.dagman_exit)
            )

    def job_start(self, wf: Any, inst: Any, ts: float) -> None:
        tracked = self._job_table(wf, inst)
        if tracked is not None:
            self._submit(job_start_firings(tracked.table, tracked.facts, _job_facts(inst), ts))

    def job_output(self, wf: Any, inst: Any, records: list[Any]) -> None:
        """After an output parse: remember a single invocation record's exit code (PM-1176)."""
        if wf.run_dir not in self.workflows or not wf.opts.events_enabled:
            return  # without an event sink no job notification follows (doc §5.4)
        key = (wf.run_dir, inst.name, inst.seq)
        code = None
        if len(records) == 1 and records[0].kind == "invocation":
            code = _int_or_none(records[0].data.get("exitcode"))
        if code is None:
            self._record_exitcodes.pop(key, None)
        else:
            self._record_exitcodes[key] = code

    def invocation(self, wf: Any, inst: Any, task: int, record: dict[str, Any], ts: float) -> None:
        tracked = self._lookup(wf)
        if tracked is None or not tracked.table.invocations:
            return
        raw = record["raw"] if "raw" in record else inst.main_exitcode
        self._submit(
            invocation_firings(tracked.table, tracked.facts, _job_facts(inst), task, ts, raw)
        )

    def job_end(self, wf: Any, inst: Any, ts: float, status: int | None) -> None:
        code = self._record_exitcodes.pop((wf.run_dir, inst.name, inst.seq), None)
        tracked = self._job_table(wf, inst)
        if tracked is None:
            return
        success = inst.state in ("JOB_SUCCESS", "POST_SCRIPT_SUCCESS")
        self._submit(
            job_end_firings(
                tracked.table,
                tracked.facts,
                _job_facts(inst),
                ts,
                success=success,
                status=job_end_status(success, status, code),
            )
        )

    def _job_table(self, wf: Any, inst: Any) -> _Tracked | None:
        tracked = self._lookup(wf)
        if tracked is None or inst.name not in tracked.table.jobs:
            return None
        dag = getattr(wf, "dag", None)
        if dag is not None and inst.name not in dag.nodes:
            return None  # a node unknown to the .dag (doc §11.2)
        return tracked

    # ------------------------------------------------------------------ hand-over to the loop
    def _submit(self, firings: list[Firing]) -> None:
        for firing in firings:
            if self.loop is None:
                self._early.append(firing)
            else:
                self.loop.call_soon_threadsafe(self.pool.submit, firing)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Attach to the running loop; firings matched before are queued now."""
        self.loop = loop
        while self._early:
            loop.call_soon_threadsafe(self.pool.submit, self._early.popleft())

    def load(self) -> ScriptLoad:
        """Scripts running, and firings waiting (in the pool, or for the loop to bind)."""
        load = self.pool.load()
        return ScriptLoad(load.running, load.queued + len(self._early))

    async def aclose(self, stop: asyncio.Event | None = None) -> None:
        """Let queued and running scripts finish (each within its timeout), unless ``stop`` is
        or becomes set: then pending ones are skipped and running ones terminated."""
        if self.loop is None:
            self.bind(asyncio.get_running_loop())
        await asyncio.sleep(0)  # deliver call_soon_threadsafe hand-overs still in flight
        try:
            if stop is not None and stop.is_set():
                await self.pool.abort()
            elif self.pool.busy:
                log.info("waiting for notifications", pending=len(self.pool.pending))
                if not await self.pool.drain(stop):
                    await self.pool.abort()
        finally:
            if self.log is not None:
                self.log.close()


def _job_facts(inst: Any) -> JobFacts:
    sub = inst.sub
    return JobFacts(
        name=inst.name,
        out_num=inst.out_num,
        stdout=getattr(sub, "stdout", None),
        stderr=getattr(sub, "stderr", None),
    )


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _recover_line(path: str | None) -> int:
    """``line_processed N`` from a crashed predecessor's ``monitord.recover`` (0 if none)."""
    if not path:
        return 0
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[0] == "line_processed":
                    return int(parts[1])
    except (OSError, ValueError):
        pass
    return 0
