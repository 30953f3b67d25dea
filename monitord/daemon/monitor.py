"""The daemon around the state machine: workflows, their files, and the sinks.

Pipeline::

    dagman.out --(parser thread: chunks)--> lines --> Workflow.feed
        --> events --> sink set (an executor per sink)      jobstate lines --> jobstate.log

In a replay one worker thread (``to_thread``) reads dagman.out in chunks and does all the
parsing, state-machine work and job-file reading; live, the event loop waits for and reads the
new lines and hands each chunk to a worker thread.  Every sink writes from its own thread.
Memory stays flat: dagman.out is streamed in fixed-size chunks and events leave per chunk.

One :class:`Monitor` class serves the per-workflow daemon, the service and the command line;
what differs between them is handed to it (:mod:`monitord.daemon.parts`): its outputs, its
waiter, its crash resume, its observers.  The follow loop is a collaborator
(:class:`~monitord.daemon.following.FollowLoop`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import structlog

from monitord.core.events import StampedeEvent
from monitord.core.linerecords import Record
from monitord.core.readers.braindump import BraindumpError, read_braindump
from monitord.core.readers.dagfile import DagInfo, read_dag
from monitord.core.workflow import SubworkflowRequest, Workflow, WorkflowContext, WorkflowOptions
from monitord.daemon.chunks import whole_lines
from monitord.daemon.config import MonitorConfig
from monitord.daemon.debuglog import DebugLog
from monitord.daemon.errors import MonitordError
from monitord.daemon.following import FollowLoop
from monitord.daemon.jobfiles import read_text
from monitord.daemon.jobstate_log import JobstateLog, jobstate_log_path
from monitord.daemon.notifying import Notifications
from monitord.daemon.outputs import Destinations, build_outputs, log_plugins
from monitord.daemon.parts import (
    ChangeWaiter,
    LineRecords,
    MonitorObserver,
    Outputs,
    SinkSetLike,
    WatchWaiter,
)
from monitord.daemon.plan_events import BATCH, emit_plan, emit_static, emit_subwf_map, open_static
from monitord.daemon.registry import Registry
from monitord.daemon.resume import ResumePoint, Snapshot, describe
from monitord.daemon.resuming import CrashResume
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
from monitord.daemon.tracked import Tracked
from monitord.daemon.zonewarning import warn_if_zone_differs
from monitord.system.heap import HeapTrimmer
from sinks.plugins.host import with_plugins
from sinks.runtime.base import Sink
from sinks.runtime.sinkset import SinkSet
from sinks.runtime.spool import SPOOL_DIR_NAME, SpoolSettings

log = structlog.get_logger(__name__)

OutputsT = TypeVar("OutputsT", bound=Outputs)


class Monitor(Generic[OutputsT]):
    """One workflow and its sub-workflows: start-up, replay or follow, outputs, shutdown.

    ``outputs``: which sink set it publishes to; ``waiter``: how it waits for dagman.out to
    grow (default: a watch per file); ``resume``: whether and how it snapshots (default:
    never); ``observers``: told what it processes; ``scripts_as_owner``: notification
    scripts run as the submit directory's owner (a root service); ``feed_thread``: followed
    chunks are fed on one thread of their own (the per-workflow daemon), else on the loop's
    default executor (the service, whose pool is bounded).
    """

    def __init__(
        self,
        config: MonitorConfig,
        outputs: OutputsT,
        *,
        waiter: ChangeWaiter | None = None,
        resume: CrashResume | None = None,
        observers: Sequence[MonitorObserver] = (),
        scripts_as_owner: bool = False,
        feed_thread: bool = True,
    ) -> None:
        self.cfg = config
        self.outputs = outputs
        self.waiter: ChangeWaiter = waiter or WatchWaiter(polling=True if config.polling else None)
        self.resume = resume or CrashResume()
        self.debuglog = DebugLog(chunks=config.replay)  # what -v/-vv show
        self._heap = HeapTrimmer()
        self.observers = (*observers, self.debuglog)
        self.notifications = Notifications(config, scripts_as_owner=scripts_as_owner)
        self.registry = Registry()
        self.options = WorkflowOptions(
            replay=config.replay,
            events_enabled=config.events,
            store_stdout=config.store_stdout,
            keep_state=config.keep_state,
            follow_subworkflows=config.follow_subworkflows
            and not (config.jobstate_name and os.path.isabs(config.jobstate_name)),
            adjust=config.adjust,
        )
        self._events: list[StampedeEvent] = []  # the machines' events not yet published
        self.ctx = WorkflowContext(
            read_text=read_text,
            events=self._events,
            on_subworkflow=self._on_subworkflow,
            options=self.options,
        )
        self.sinks: SinkSetLike = SinkSet([])  # made by start(), with the event plugins
        self.line_records: LineRecords | None = None  # a replay's lines classified ahead
        self.destinations = Destinations()  # the events outputs asked for
        self.spool_settings: SpoolSettings | None = None  # where sinks spool while down
        self.restart = config.replay  # the outputs start over (a replay, or a recovery)
        self.pid_path: str | None = None
        self.shutting_down = False  # a service stop: leave monitord.recover for a successor
        self.zone_warnings = 0  # start-ups that warned its times are read in the wrong zone
        # Followers process their chunks in worker threads; the pending event list, the
        # tracking lists and the sinks' batch order are shared, so one chunk at a time.
        self.feed_lock = threading.Lock()
        self.follow_loop = FollowLoop(
            self, self.registry, self.waiter, self.observers, feed_thread=feed_thread
        )

    @property
    def resumed(self) -> ResumePoint | None:
        """The snapshot this start resumed from (None: none)."""
        return self.resume.resumed

    # ------------------------------------------------------------------ start-up
    def start(self) -> None:
        dagman_out, run_dir, bd = self._root()
        if warn_if_zone_differs(bd, run_dir, adjust=self.cfg.adjust):  # once per root workflow
            self.zone_warnings += 1
        self.pid_path = os.path.join(run_dir, "monitord.pid")
        if not self.cfg.force and other_instance_running(self.pid_path):
            raise MonitordError(
                f"another monitord is running for {run_dir} (use -f to override)", 43
            )
        write_pid(self.pid_path)
        self.registry.root_uuid = bd.wf_uuid
        # A crashed predecessor left monitord.recover: resume from its snapshot, or outputs
        # start over as in a replay (doc §4.7).
        recover = state_path(
            run_dir, "monitord.recover", output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
        )
        point, self.restart, sinks = self.resume.decide(
            crashed=not self.cfg.replay and os.path.exists(recover),
            replay=self.cfg.replay,
            run_dir=run_dir,
            dagman_out=dagman_out,
            root_uuid=bd.wf_uuid,
            info=state_path(
                run_dir, "monitord.info", output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
            ),
            build=lambda restart: self._build_outputs(run_dir, bd, restart),
        )
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
                self.outputs.sink_set(sinks, self.spool_settings),
                self.cfg.properties,
                restart=self.restart,
                spool=self.spool_settings,
            )
            self.sinks.start()
        self.options.events_enabled = self.cfg.events and bool(self.sinks)
        self.notifications.start(run_dir, self.ctx)  # notifications (issue 6)
        if point is not None:
            self._restore(point)
            return
        tracked = self._open_workflow(run_dir, dagman_out, bd, parent=None)
        if tracked.wf is None:
            raise MonitordError(f"cannot follow the workflow in {run_dir}")

    def _root(self) -> tuple[str, str, Any]:
        """The root dagman.out (absolute), its submit directory and braindump; MonitordError
        when they are not a Pegasus workflow's."""
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
        return dagman_out, run_dir, bd

    def _build_outputs(self, run_dir: str, bd: Any, restart: bool) -> list[Sink]:
        """The events outputs asked for (-d, properties, the default DB), not opened yet."""
        if not self.cfg.events:
            return []
        self.destinations = build_outputs(self.cfg, run_dir, bd, restart=restart)
        return list(self.destinations.sinks)

    def _adopt(self, tracked: Tracked, *, opened: bool, ended: bool = False) -> None:
        """A (sub-)workflow joins the Monitor (opened, or restored from a snapshot)."""
        self.registry.tracked.append(tracked)
        for observer in self.observers:
            observer.added(tracked, opened=opened, ended=ended)

    def _restore(self, point: ResumePoint) -> None:
        """Every workflow of the snapshot, as it was then; the followers go on from there."""
        self.registry.seen_dagman_outs = set(point.seen_dagman_outs)
        self.registry.seen_dirs = dict(point.seen_dirs)
        for tracked, p in self.resume.restore(point, self.ctx):
            self._adopt(tracked, opened=False, ended=p.ended)
            if p.ended:
                self.registry.done.append(tracked)
                continue
            self.notifications.open_workflow(
                p.run_dir, p.wf.bd, p.dagman_out, p.files.get("recover")
            )
            self.registry.queue(tracked)
        log.info("resuming from a snapshot, not from line 1", **describe(point))
        self.resume.rewrite(point)

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
        # notifications (issue 6): before recover is rewritten
        self.notifications.open_workflow(
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
        wf = self._machine(run_dir, bd, parent, wf_ts, info)
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
        self._adopt(tracked, opened=True)
        self.registry.queue(tracked)
        self._publish()
        return tracked

    def _machine(
        self,
        run_dir: str,
        bd: Any,
        parent: SubworkflowRequest | None,
        wf_ts: int,
        info: dict[str, Any],
    ) -> Workflow:
        """The workflow's state machine, on its .dag, going on where ``info`` (a clean stop's
        monitord.info) says."""
        wf = Workflow(
            self.ctx,
            run_dir=run_dir,
            braindump=bd,
            dag=read_dag(os.path.join(run_dir, bd.dag)) or DagInfo(),
            root_uuid=self.registry.root_uuid or bd.wf_uuid,
            parent_uuid=parent.parent.uuid if parent else None,
            wf_ts=wf_ts,
        )
        self.registry.seen_dirs[run_dir] = (bd.wf_uuid, wf.parent_uuid)
        if info:
            wf.last_processed_line = info.pop("monitord_dagman_out_sequence", 0)
            wf.job_seq = info.pop("monitord_job_sequence", 1)
            wf.restart_count = info.pop("monitord_workflow_restart_count", 0)
            wf.out_counters.update(info)
        return wf

    def _on_subworkflow(self, req: SubworkflowRequest) -> None:
        base_dir, fname = os.path.split(req.dagman_out)
        candidate = f"{base_dir}.{req.retry:03d}"
        if not os.path.isdir(candidate):
            candidate = f"{base_dir}.000"
            if not os.path.isdir(candidate):
                log.warning("sub-workflow directory not found", path=base_dir)
                return
        dagman_out = os.path.join(candidate, fname)
        if dagman_out in self.registry.seen_dagman_outs:
            # The same sub-workflow submitted again: its map event is stamped with the
            # parent's braindump time, as the reference does.
            seen = self.registry.seen_dirs.get(candidate)
            if seen is not None:
                emit_subwf_map(req, seen[0], req.parent.wf_ts or 0)
            return
        self.registry.seen_dagman_outs.add(dagman_out)
        try:
            bd = read_braindump(candidate)
        except BraindumpError as exc:
            log.error("sub-workflow skipped", path=candidate, error=str(exc))
            return
        if not bd.wf_uuid or not bd.dag:
            log.error("sub-workflow skipped: braindump has no wf_uuid or dag", path=candidate)
            return
        self._open_workflow(candidate, dagman_out, bd, parent=req)

    # ------------------------------------------------------------------ feeding
    def _publish(self) -> None:
        """Hand the pending events to the sinks in batches of at most BATCH events."""
        events = self._events
        if not events:
            return
        for observer in self.observers:
            observer.published(events)
        for start in range(0, len(events), BATCH):
            self.sinks.publish(self.resume.mark(events[start : start + BATCH]))
        events.clear()
        self._heap.due_trim()  # what the sinks wrote since is freed: give its pages back

    def _feed(
        self,
        tracked: Tracked,
        lines: list[str],
        *,
        publish: bool = True,
        records: list[Record] | None = None,
    ) -> None:
        """Feed ``lines`` (``records``: classified already); ``publish`` False (a follow
        between publishes): the events stay pending for a later chunk's publish, unless a
        line fails."""
        wf = tracked.wf
        assert wf is not None
        for observer in self.observers:
            observer.fed(tracked, lines)
        kinds = self.debuglog.line_kinds()  # -vv: the kinds the machine classified, counted
        failed = True
        try:
            if kinds is None:
                wf.feed_lines(lines, records)
            else:
                for line in lines:
                    kinds[wf.feed(line) or "other"] += 1
            failed = False
        finally:
            if kinds is not None:
                self.debuglog.classified(tracked, kinds)
            # Also when a line ends the daemon (a sub-workflow that cannot be followed): what
            # the lines fed so far produced reaches jobstate.log and the sinks.
            self._drain_jobstate(tracked)
            if publish or failed:
                self._publish()

    def _drain_jobstate(self, tracked: Tracked) -> None:
        wf = tracked.wf
        if wf is not None and wf.jobstate_lines and tracked.jobstate is not None:
            tracked.jobstate.extend(wf.jobstate_lines)
            wf.jobstate_lines.clear()
            tracked.jobstate.flush()

    # ------------------------------------------------------------------ replay
    async def replay_all(self, stop: asyncio.Event | None = None) -> None:
        """Replay every tracked workflow; ``stop`` set (an interrupt): no further chunk is
        read and no workflow ends (its outputs are left incomplete, for a rerun)."""
        stop = stop or asyncio.Event()
        pending = self.registry.pending
        while pending and not stop.is_set():
            tracked = pending.popleft()
            await self._replay_one(tracked, stop)
            if stop.is_set():
                return
            for observer in self.observers:
                observer.ended(tracked)
            await asyncio.to_thread(self.end_workflow, tracked)
            self.registry.done.append(tracked)

    async def _replay_one(self, tracked: Tracked, stop: asyncio.Event) -> None:
        if not os.path.exists(tracked.dagman_out):
            log.warning("workflow not started: dagman.out missing", path=tracked.dagman_out)
            return
        await asyncio.to_thread(self._replay_file, tracked, stop)

    def _replay_file(self, tracked: Tracked, stop: asyncio.Event) -> None:
        """Parser thread: read dagman.out in chunks and feed each; a replay hands a line over
        once here and once to the sinks' queues (docs/architecture.md).  ``stop`` (set by the
        event loop's signal handler) is looked at between two chunks.  With ``line_records``
        (the read-ahead worker), each chunk's lines come classified when it has them."""
        wf, ahead = tracked.wf, self.line_records
        assert wf is not None
        with open(tracked.dagman_out, "rb") as fh:
            inode = os.fstat(fh.fileno()).st_ino
            for piece in whole_lines(fh):
                if stop.is_set():
                    break
                lines = piece.decode("utf-8", errors="replace").split("\n")
                records = None
                if ahead is not None:
                    place = (inode, wf.line_no, len(lines), len(piece))
                    records = ahead.records(tracked.dagman_out, place)
                self._feed(tracked, lines, records=records)

    # ------------------------------------------------------------------ live (FollowHost)
    async def follow_all(self, stop: asyncio.Event) -> None:
        """Follow every tracked workflow (sub-workflows as they appear) until each has ended;
        after a service stop, a last snapshot where every workflow stands."""
        await self.follow_loop.run(stop)
        if self.shutting_down and self.resume.store is not None:
            await self._last_snapshot()

    async def _last_snapshot(self) -> None:
        """Written once the sinks hold (or have spooled) everything, so the next start
        resumes right there."""

        def take() -> Snapshot | None:
            with self.feed_lock:
                self._publish()  # a snapshot covers only what the sinks were handed
                return self.resume.take(self.registry, now=True)

        snapshot = await asyncio.to_thread(take)
        if snapshot is not None:
            await self.follow_loop.checkpoint_now(snapshot)

    def feed_chunk(
        self, tracked: Tracked, lines: list[str], offset: int, publish: bool
    ) -> tuple[Snapshot | None, bool]:
        """Feed a chunk; its events go to the sinks when ``publish``, when BATCH events are
        pending or when a snapshot is due (it covers only what the sinks were handed).
        Returns the snapshot, if one was due, and whether the pending events were published."""
        with self.feed_lock:
            self._feed(tracked, lines, publish=False)
            tracked.offset = offset
            if not (publish or len(self._events) >= BATCH or self.resume.due()):
                return None, False
            self._publish()
            return self.resume.take(self.registry), True

    def end_workflow(self, tracked: Tracked) -> None:
        with self.feed_lock:
            self._end_workflow(tracked)

    def stop_workflow(self, tracked: Tracked) -> None:
        with self.feed_lock:  # a snapshot of another workflow may be measuring it
            if tracked.jobstate is not None:
                tracked.jobstate.close()

    def flush(self) -> None:
        self.sinks.flush()

    def checkpoint(self, target: Tracked | Snapshot, line_no: int) -> None:
        if isinstance(target, Snapshot):
            self.resume.write(target, self.registry, self.feed_lock)
            return
        with self.feed_lock:  # never after _end_workflow removed monitord.recover
            if target.wf is not None and not target.wf.finished:
                write_recover(target.files["recover"], line_no)

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
            counters=wf.out_counts(),
        )
        remove(tracked.files["recover"])
        if tracked is self.registry.root:
            self.resume.ended(tracked.dagman_out)  # ended in order: nothing to resume
        write_done(tracked.files["done"], tracked.started_at)
        self._publish()

    # ------------------------------------------------------------------ shutdown
    async def close(self, stop: asyncio.Event | None = None) -> None:
        """Scripts, checkpoints and watches end; the sinks deliver and close; a workflow
        ended in order has its delivery marks dropped by every sink that holds them all."""
        await self.outputs.settle()  # holds no worker thread while a server is down
        await self.notifications.close(self.ctx, stop, shutting_down=self.shutting_down)
        await self.follow_loop.close()
        await self.waiter.close()
        await asyncio.to_thread(self.sinks.close)
        log_plugins(self.sinks)
        if self.pid_path:
            remove(self.pid_path)
        root = self.registry.root
        if self.resume.stream and root is not None and root.wf is not None and root.wf.finished:
            await asyncio.to_thread(self.outputs.forget_marks, root.wf.uuid)
