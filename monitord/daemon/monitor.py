"""The daemon around the state machine: workflows, their files, and the sinks.

Pipeline::

    dagman.out --(aiofiles, chunks)--> lines --(worker thread)--> Workflow.feed
        --> events --> SinkSet (one thread per sink)      jobstate lines --> jobstate.log

The event loop only reads chunks and waits; all parsing, state-machine work
and job-file reading of a chunk runs in one worker thread (``to_thread``),
and every sink writes from its own thread.  Memory stays flat: dagman.out is
streamed in fixed-size chunks and events leave per chunk.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import aiofiles
import structlog

from monitord.core.readers.braindump import BraindumpError, read_braindump
from monitord.core.readers.dagfile import parse_dag
from monitord.core.readers.default_db import default_db_url
from monitord.core.workflow import SubworkflowRequest, Workflow, WorkflowContext, WorkflowOptions
from monitord.daemon.checkpoint import Checkpointer
from monitord.daemon.config import MonitorConfig
from monitord.daemon.errors import MonitordError
from monitord.daemon.following import LiveFollowing
from monitord.daemon.jobfiles import read_text
from monitord.daemon.jobstate_log import JobstateLog, jobstate_log_path
from monitord.daemon.plan_events import BATCH, emit_plan, emit_static, emit_subwf_map, open_static
from monitord.daemon.resume import ResumePoint, ResumeStore, Snapshot, SnapshotClock
from monitord.daemon.statefiles import (
    other_instance_running,
    read_info,
    remove,
    state_path,
    write_done,
    write_info,
    write_pid,
    write_recover,
    write_started,
)
from monitord.daemon.tail import ChangeWatch
from monitord.daemon.tracked import Tracked
from notifications.notifier import Notifier
from sinks.plugins.host import plugin_snapshot, with_plugins
from sinks.registry import build_dashboard_sink, build_sink
from sinks.runtime.marks import MarkedBatch, Marks, count_batch
from sinks.runtime.sinkset import SinkSet
from sinks.runtime.spool import SPOOL_DIR_NAME, SpoolSettings

log = structlog.get_logger(__name__)

CHUNK = 1 << 18  # dagman.out read size in a replay (BATCH, the largest batch: plan_events.py)


class Monitor(LiveFollowing):
    """One workflow and its sub-workflows: start-up, replay, outputs and sinks, shutdown."""

    def __init__(self, config: MonitorConfig) -> None:
        self.cfg = config
        self.events: list[Any] = []
        self.sinks = SinkSet([])
        self.pending: deque[Tracked] = deque()
        self.done: list[Tracked] = []
        self.seen_dagman_outs: set[str] = set()
        self.seen_dirs: dict[str, tuple[str, str | None]] = {}
        self.root_uuid: str | None = None
        self.options = WorkflowOptions(
            replay=config.replay,
            events_enabled=config.events,
            store_stdout=config.store_stdout,
            keep_state=config.keep_state,
            follow_subworkflows=config.follow_subworkflows
            and not (config.jobstate_name and os.path.isabs(config.jobstate_name)),
            adjust=config.adjust,
        )
        self.ctx = WorkflowContext(
            read_text=read_text,
            events=self.events,
            on_subworkflow=self._on_subworkflow,
            options=self.options,
        )
        self.pid_path: str | None = None
        self.restart = config.replay
        # Service mode (monitord/service) swaps these: shared sink lanes, one shared watcher.
        self.wait_for_change: Callable[[str, float], Awaitable[None]] = self._watched_wait
        self._watches: dict[str, ChangeWatch] = {}
        self._followed: dict[str, Workflow] = {}  # wf_uuid -> workflow, for sub-workflows
        # Followers process their chunks in worker threads; the pending event list, the
        # tracking lists and the sinks' batch order are shared, so one chunk at a time.
        self._feed_lock = threading.Lock()
        self._checkpoints: Checkpointer | None = None
        self.make_sink_set: Callable[[list[Any]], Any] = self._local_sink_set
        self.spool_settings: SpoolSettings | None = None  # where sinks spool while down
        self.requested_outputs = 0  # events destinations asked for (-d, properties, default)
        self.output_errors: list[str] = []  # why some could not even be created
        # --- notifications (issue 6): created by start() in live mode only ---
        self.notifier: Notifier | None = None
        try:
            self._notify_loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._notify_loop = None
        # --- end notifications ---
        # --- crash resume (resume.py): the service and the live daemon set ``resume_store`` ---
        self.resume_store: ResumeStore | None = None
        self.resumed: ResumePoint | None = None  # the snapshot this start resumed from
        self.marks_stream: str | None = None  # delivery marks' stream (sinks/runtime/marks.py)
        self.event_counts: dict[str, int] = {}  # per workflow: events published
        self.tracked_all: list[Tracked] = []  # every (sub-)workflow, the root first
        self._snapshot_clock = SnapshotClock()
        self._fresh_snapshot: Snapshot | None = None

    # ------------------------------------------------------------------ start-up
    def start(self) -> None:
        dagman_out = os.path.abspath(self.cfg.dagman_out)
        if not dagman_out.endswith(".dagman.out"):
            raise MonitordError(f"{self.cfg.dagman_out}: not a DAGMan output file (*.dagman.out)")
        run_dir = os.path.dirname(dagman_out)
        if not os.path.isdir(run_dir):
            raise MonitordError(f"{run_dir}: no such directory")
        if self.cfg.replay and not os.path.exists(dagman_out):
            raise MonitordError(f"{dagman_out}: no such file")
        try:
            bd = read_braindump(run_dir)
        except BraindumpError as exc:
            raise MonitordError(f"{run_dir} is not a Pegasus submit directory: {exc}") from None
        if not bd.wf_uuid or not bd.dag:
            raise MonitordError(f"{run_dir}: braindump has no wf_uuid or dag")
        self.pid_path = os.path.join(run_dir, "monitord.pid")
        if not self.cfg.force and other_instance_running(self.pid_path):
            raise MonitordError(
                f"another monitord is running for {run_dir} (use -f to override)", 43
            )
        write_pid(self.pid_path)
        self.root_uuid = bd.wf_uuid
        # A crashed predecessor left monitord.recover: resume from its snapshot, or outputs
        # start over as in a replay (doc §4.7).
        point, sinks = self._resume_or_recover(run_dir, dagman_out, bd)
        # a sink's spool left by a clean stop is delivered first; on restart it is stale
        self.spool_settings = SpoolSettings.from_properties(
            state_path(run_dir, SPOOL_DIR_NAME, output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid),
            restart=self.restart,
            workflow=bd.wf_uuid,
            properties=self.cfg.properties,
        )
        if self.cfg.events:
            # event plugins (issue 13): beside the sinks, per workflow, on the same runtime
            self.sinks = with_plugins(
                self.make_sink_set(sinks),
                self.cfg.properties,
                restart=self.restart,
                spool=self.spool_settings,
            )
            self.sinks.start()
        self.options.events_enabled = self.cfg.events and bool(self.sinks)
        self._start_notifications(run_dir)  # notifications (issue 6)
        if point is not None:
            self._restore(point)
            return
        tracked = self._open_workflow(run_dir, dagman_out, bd, parent=None)
        if tracked.wf is None:
            raise MonitordError(f"cannot follow the workflow in {run_dir}")

    def _build_outputs(self, run_dir: str, bd: Any) -> list[Any]:
        """The events outputs asked for (-d, properties, the default DB), not opened yet."""
        dests = [d or default_db_url(run_dir, bd) for d in (self.cfg.dests or [None])]
        self.requested_outputs = len(dests)
        self.output_errors = []
        sinks = []
        for dest in dests:
            try:
                sinks.append(
                    build_sink(
                        dest,
                        run_dir=run_dir,
                        restart=self.restart,
                        encoding=self.cfg.encoding,
                        root_wf_uuid=bd.wf_uuid,
                        pegasus_version=bd.planner_version,
                        properties=self.cfg.properties,
                    )
                )
            except Exception as exc:  # a bad destination disables only itself
                log.error("cannot create events output, disabling it", error=str(exc))
                self.output_errors.append(str(exc))
        if self.cfg.dashboard and sinks:
            from sinks.sql.dashboard import default_dashboard_url

            try:
                sinks.append(
                    build_dashboard_sink(
                        self.cfg.dashboard_url or default_dashboard_url(),
                        root_wf_uuid=bd.wf_uuid,
                        db_url=dests[0],
                        restart=self.restart,
                        pegasus_version=bd.planner_version,
                    )
                )
            except Exception as exc:
                log.warning("dashboard disabled", error=str(exc))
        return sinks

    def check_outputs(self) -> None:
        """After the run: every requested events destination failed for good (could not be
        created or opened, or was disabled) -> one clear error, a non-zero exit status."""
        if not self.requested_outputs:
            return
        reasons = list(self.output_errors)
        for worker in getattr(self.sinks, "workers", []):
            if worker.failed and getattr(worker.sink, "name", None) != "dashboard":
                reasons.append(str(worker.health().last_error or worker.sink.name))
        if len(reasons) >= self.requested_outputs:
            raise MonitordError("no events output could be written: " + "; ".join(reasons))

    def _local_sink_set(self, sinks: list[Any]) -> SinkSet:
        """The per-workflow daemon's sinks: a worker each, spooling while a sink is down."""
        return SinkSet(sinks, spool=self.spool_settings)

    def _open_workflow(
        self, run_dir: str, dagman_out: str, bd: Any, *, parent: SubworkflowRequest | None
    ) -> Tracked:
        files = {
            name: state_path(
                run_dir, f"monitord.{name}", output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
            )
            for name in ("started", "done", "info", "recover")
        }
        remove(os.path.join(run_dir, "monitord.done"))
        started_at = time.time()
        # Resume (doc §4.6/4.7): monitord.recover means a crash, so start over from line 1;
        # otherwise monitord.info says where a cleanly stopped predecessor left off.
        recovering = not self.cfg.replay and os.path.exists(files["recover"])
        info = {} if (self.cfg.replay or recovering) else read_info(files["info"])
        js_path = jobstate_log_path(
            run_dir, name=self.cfg.jobstate_name, output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
        )
        jobstate = JobstateLog(js_path, rotate=self.cfg.replay or recovering)
        jobstate.open()
        if self.notifier is not None:  # notifications (issue 6): before recover is rewritten
            self.notifier.open_workflow(
                run_dir, bd, dagman_out, files["recover"] if recovering else None
            )
        if not self.cfg.replay:
            # Marked from the first moment (the reference waits for the first chunk): a crash
            # at any point after this makes the next start recover instead of resuming.
            write_recover(files["recover"], info.get("monitord_dagman_out_sequence", 0))
        jobstate.monitord_started(started_at)
        write_started(files["started"], started_at)
        remove(files["done"])
        wf_ts = bd.epoch if bd.epoch is not None else int(started_at)
        dag_text = read_text(os.path.join(run_dir, bd.dag))
        if dag_text is None:
            log.warning("cannot read the .dag file", path=os.path.join(run_dir, bd.dag))
        dag = parse_dag(dag_text or "")
        wf = Workflow(
            self.ctx,
            run_dir=run_dir,
            braindump=bd,
            dag=dag,
            root_uuid=self.root_uuid or bd.wf_uuid,
            parent_uuid=parent.parent.uuid if parent else None,
            wf_ts=wf_ts,
        )
        self.seen_dirs[run_dir] = (bd.wf_uuid, wf.parent_uuid)
        if info:
            wf.last_processed_line = info.pop("monitord_dagman_out_sequence", 0)
            wf.job_seq = info.pop("monitord_job_sequence", 1)
            wf.restart_count = info.pop("monitord_workflow_restart_count", 0)
            wf.out_counters.update(info)
        if self.options.events_enabled and wf.last_processed_line == 0:
            try:
                static = open_static(run_dir, bd)
                emit_plan(wf, bd, wf_ts)
                emit_static(wf, static, self._publish)
            except MonitordError:
                # Fatal, as in the reference, but its jobstate.log keeps the started line.
                jobstate.close()
                raise
            if parent is not None:
                emit_subwf_map(parent, bd.wf_uuid, wf_ts)
        tracked = Tracked(wf, run_dir, dagman_out, jobstate, started_at, files)
        self._adopt(tracked)
        self.pending.append(tracked)
        self._publish()
        return tracked

    def _on_subworkflow(self, req: SubworkflowRequest) -> None:
        base_dir, fname = os.path.split(req.dagman_out)
        candidate = f"{base_dir}.{req.retry:03d}"
        if not os.path.isdir(candidate):
            candidate = f"{base_dir}.000"
            if not os.path.isdir(candidate):
                log.warning("sub-workflow directory not found", path=base_dir)
                return
        dagman_out = os.path.join(candidate, fname)
        if dagman_out in self.seen_dagman_outs:
            # The same sub-workflow submitted again: its map event is stamped with the
            # parent's braindump time, as the reference does.
            seen = self.seen_dirs.get(candidate)
            if seen is not None:
                emit_subwf_map(req, seen[0], req.parent.wf_ts or 0)
            return
        self.seen_dagman_outs.add(dagman_out)
        try:
            bd = read_braindump(candidate)
        except BraindumpError as exc:
            log.error("sub-workflow skipped", path=candidate, error=str(exc))
            return
        if not bd.wf_uuid or not bd.dag:
            log.error("sub-workflow skipped: braindump has no wf_uuid or dag", path=candidate)
            return
        self._open_workflow(candidate, dagman_out, bd, parent=req)

    # ------------------------------------------------------------------ following
    def _publish(self) -> None:
        """Hand the pending events to the sinks in batches of at most BATCH events."""
        events = self.events
        for start in range(0, len(events), BATCH):
            batch = events[start : start + BATCH]
            if self.marks_stream is not None:  # numbered for a crash resume (resume.py)
                counts = count_batch(batch, self.event_counts)
                batch = MarkedBatch(batch, Marks(self.marks_stream, counts))
            self.sinks.publish(batch)
        events.clear()

    def _feed(self, tracked: Tracked, lines: list[str]) -> None:
        wf = tracked.wf
        assert wf is not None
        feed = wf.feed
        try:
            for line in lines:
                feed(line)
        finally:
            # Also when a line ends the daemon (a sub-workflow that cannot be followed): what
            # the lines fed so far produced reaches jobstate.log and the sinks.
            self._drain_jobstate(tracked)
            self._publish()

    def _drain_jobstate(self, tracked: Tracked) -> None:
        wf = tracked.wf
        if wf is not None and wf.jobstate_lines and tracked.jobstate is not None:
            tracked.jobstate.extend(wf.jobstate_lines)
            wf.jobstate_lines.clear()
            tracked.jobstate.flush()

    async def replay_all(self) -> None:
        while self.pending:
            tracked = self.pending.popleft()
            await self._replay_one(tracked)
            await asyncio.to_thread(self._end_workflow, tracked)
            self.done.append(tracked)

    async def _replay_one(self, tracked: Tracked) -> None:
        if not os.path.exists(tracked.dagman_out):
            log.warning("workflow not started: dagman.out missing", path=tracked.dagman_out)
            return
        tail = b""
        async with aiofiles.open(tracked.dagman_out, "rb") as fh:
            while True:
                chunk = await fh.read(CHUNK)
                if not chunk:
                    break
                data = tail + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    tail = data
                    continue
                tail = data[cut + 1 :]
                lines = data[:cut].decode("utf-8", errors="replace").split("\n")
                await asyncio.to_thread(self._feed, tracked, lines)
        if tail:
            await asyncio.to_thread(self._feed, tracked, [tail.decode("utf-8", errors="replace")])

    def _end_workflow(self, tracked: Tracked) -> None:
        wf = tracked.wf
        if wf is None or wf.finished:
            return
        wf.finished = True
        self._drain_jobstate(tracked)
        if tracked.jobstate is not None:
            tracked.jobstate.monitord_finished(wf.monitord_exit)
            tracked.jobstate.close()
        write_info(
            tracked.files["info"],
            job_seq=wf.job_seq,
            line_no=max(wf.line_no, wf.last_processed_line),
            restart_count=wf.restart_count,
            counters=wf.out_counters,
        )
        remove(tracked.files["recover"])
        if self.resume_store is not None and tracked is self.tracked_all[0]:
            self.resume_store.remove(tracked.dagman_out)  # ended in order: nothing to resume
        write_done(tracked.files["done"], tracked.started_at)
        self._publish()

    # --- notifications (issue 6): doc §11; never in replay ---
    def _start_notifications(self, run_dir: str) -> None:
        cfg = self.cfg
        if cfg.replay or not cfg.notifications or cfg.notifications_max <= 0:
            return
        if 0 < cfg.notifications_timeout < 5:
            log.warning("notification timeout below 5 s", timeout=cfg.notifications_timeout)
        try:
            self.notifier = Notifier.create(
                run_dir=run_dir,
                output_dir=cfg.output_dir,
                max_running=cfg.notifications_max,
                timeout=cfg.notifications_timeout,
                loop=self._notify_loop,
                full_log=cfg.notifications_full_log,
                run_as=self._script_identity(run_dir),
            )
        except OSError as exc:
            raise MonitordError(f"cannot open the notifications log: {exc}") from None
        self.ctx.notifier = self.notifier

    # A service running as root runs each user's scripts as the owner of the submit dir.
    scripts_as_owner = False

    def _script_identity(self, run_dir: str) -> tuple[int, int] | None:
        if not self.scripts_as_owner:
            return None
        st = os.stat(run_dir)
        return st.st_uid, st.st_gid

    async def _close_notifications(self, stop: asyncio.Event | None) -> None:
        """Queued scripts run to their end (within their timeout) unless the daemon was stopped."""
        if self.notifier is None:
            return
        if stop is None and getattr(self, "shutting_down", False):
            stop = asyncio.Event()  # service stop: do not wait for scripts
            stop.set()
        self.ctx.notifier = None
        try:
            await self.notifier.aclose(stop)
        except Exception as exc:  # never fail the daemon's exit
            log.error("notifications shutdown failed", error=repr(exc))

    # --- end notifications ---

    async def close(self, stop: asyncio.Event | None = None) -> None:
        await self._close_notifications(stop)  # notifications (issue 6)
        if self._checkpoints is not None:
            await self._checkpoints.close()
        for watch in list(self._watches.values()):
            await watch.close()
        self._watches.clear()
        await asyncio.to_thread(self.sinks.close)
        _log_plugins(self.sinks)
        if self.pid_path:
            remove(self.pid_path)


def _log_plugins(sinks: Any) -> None:
    """The daemon's last word on its event plugins: each one's counters and delivery state
    (a warning when one was skipped, raised, dropped events or was not fed to the end)."""
    plugins = plugin_snapshot(sinks)
    if not plugins:
        return
    keys = ("state", "delivery", "delivered", "dropped", "spooled", "errors", "restarts")
    summary = {
        p["name"]: {
            **{k: p[k] for k in keys if p.get(k) is not None},
            **({"last_error": p["last_error"]} if p.get("last_error") else {}),
        }
        for p in plugins
    }
    troubled = any(
        p.get("state") in ("skipped", "stuck")
        or p.get("errors")
        or p.get("dropped")
        or p.get("delivery") not in (None, "up")
        for p in plugins
    )
    (log.warning if troubled else log.info)("event plugins at exit", plugins=summary)
