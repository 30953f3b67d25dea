"""One followed root workflow inside the service: its Monitor, its task, its subscribers.

:class:`ServiceMonitor` is the per-workflow daemon's :class:`~monitord.daemon.monitor.Monitor`
with the service's shared parts plugged in (sink lanes, the one file watcher) and
an event-driven supervisor loop instead of a once-a-second tick, so an idle
workflow costs a few sleeping coroutines and nothing else.  Its outputs are
those of the per-workflow daemon, because everything that produces them is the
daemon's own code.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.daemon.following import SNAPSHOT_KEY
from monitord.daemon.monitor import Monitor, MonitorConfig, MonitordError, Tracked
from monitord.daemon.resume import ResumeStore, SnapshotClock
from monitord.service.jobcounts import progress_for
from monitord.service.sinkpool import SharedSinkSet, SinkPool
from monitord.service.status import EventRate
from monitord.service.watcher import FileWatcher
from monitord.system import ownership
from sinks.runtime.capabilities import capabilities_of

log = structlog.get_logger(__name__)


@dataclass
class TrackedStats:
    """What the status page needs about one (sub-)workflow of a Monitor."""

    tracked: Tracked
    ended: bool = False


class ServiceMonitor(Monitor):
    """A Monitor driven by the service: shared sinks and watcher, wakes only on work."""

    scripts_as_owner = True  # notification scripts run as the submit dir's owner

    def __init__(
        self,
        config: MonitorConfig,
        *,
        watcher: FileWatcher,
        pool: SinkPool,
        key: str,
        wf_uuid: str | None = None,
    ) -> None:
        super().__init__(config)
        self.watcher = watcher
        self.wait_for_change = watcher.wait
        make = pool.sink_set(key, wf_uuid)
        # Each sink spools where the per-workflow daemon's would (settings made by start()).
        self.make_sink_set = lambda sinks: make(sinks, self.spool_settings)
        self.stats: list[TrackedStats] = []
        self._stats_of: dict[int, TrackedStats] = {}
        self.rate = EventRate()
        self.events_total = 0
        self.shutting_down = False  # service stop: leave monitord.recover for the successor
        self._loop: asyncio.AbstractEventLoop | None = None
        self._new_work: asyncio.Event | None = None
        self.following_over = asyncio.Event()  # follow_all returned (or never ran)

    # Called from worker threads (start, sub-workflow discovery in _feed).
    def _adopt(self, tracked: Tracked) -> None:
        super()._adopt(tracked)
        stats = TrackedStats(tracked, ended=tracked in self.done)
        self._stats_of[id(tracked)] = stats
        self.stats.append(stats)
        if self._loop is not None and self._new_work is not None:
            self._loop.call_soon_threadsafe(self._new_work.set)

    def _feed(self, tracked: Tracked, lines: list[str]) -> None:
        if tracked.wf is not None:
            progress = progress_for(tracked.wf)
            for line in lines:
                progress.feed(line)
        super()._feed(tracked, lines)

    def _publish(self) -> None:
        count = len(self.events)
        if count:
            self.events_total += count
            self.rate.add(count)
        super()._publish()

    async def close(self, stop: asyncio.Event | None = None) -> None:
        """Monitor.close, but the wait for the sinks to deliver (as long as a server is down)
        holds no worker thread: many workflows may end during one outage."""
        sinks = self.sinks
        if isinstance(sinks, SharedSinkSet):
            sinks.request_close()
            pause = 0.05
            while not sinks.closed:
                await asyncio.sleep(pause)
                pause = min(1.0, pause * 2)
        await super().close(stop)
        root = self.tracked_all[0].wf if self.tracked_all else None
        if self.marks_stream and root is not None and root.finished:
            await asyncio.to_thread(self._forget_marks, root.uuid)

    def _forget_marks(self, root_uuid: str) -> None:
        """The workflow ended in order: a sink that delivered everything drops its marks."""
        for handle in getattr(self.sinks, "handles", []):
            if (
                capabilities_of(handle.sink).keeps_marks
                and handle.finished.is_set()
                and not handle.failed
                and handle.left_behind == 0
            ):
                handle.sink.forget_marks(root_uuid)

    async def follow_all(self, stop: asyncio.Event) -> None:
        """Monitor.follow_all, woken by new sub-workflows instead of a one-second tick."""
        self._loop = asyncio.get_running_loop()
        self._new_work = asyncio.Event()
        await super().follow_all(stop)
        if self.shutting_down and self.resume_store is not None:
            await self._last_snapshot()

    async def _last_snapshot(self) -> None:
        """Service stop: a snapshot of where every workflow stands, written once the sinks
        hold (or have spooled) everything, so the next start resumes right there."""

        def take() -> None:
            with self._feed_lock:
                self._snapshot_clock = SnapshotClock()  # due now
                self._take_snapshot()

        await asyncio.to_thread(take)
        snapshot, self._fresh_snapshot = self._fresh_snapshot, None
        if snapshot is not None:
            self._checkpointer().request(SNAPSHOT_KEY, snapshot, 0)
            await self._checkpointer().barrier()

    def _start_following(self, tracked: Tracked) -> None:
        super()._start_following(tracked)
        self.watcher.add(tracked.dagman_out)

    async def _next_ended(
        self, tasks: dict[asyncio.Task[None], Tracked]
    ) -> set[asyncio.Task[None]]:
        assert self._new_work is not None
        self._new_work.clear()
        if self.pending:
            return set()
        waker: asyncio.Future[Any] = asyncio.ensure_future(self._new_work.wait())
        done, _ = await asyncio.wait([*tasks, waker], return_when=asyncio.FIRST_COMPLETED)
        waker.cancel()
        return {task for task in tasks if task in done}

    async def _finish(
        self, tracked: Tracked, task: asyncio.Task[None], stop: asyncio.Event
    ) -> None:
        self.watcher.discard(tracked.dagman_out)
        stats = self._stats_of.get(id(tracked))
        if stats is not None:
            stats.ended = True
        if not self.shutting_down:
            await super()._finish(tracked, task, stop)
            return
        # Service stop: no orderly end; monitord.recover stays, and the successor resumes
        # from the last snapshot (follow_all), or re-processes from line 1 (doc §4.7).
        self._follower_outcome(tracked, task)
        if tracked.jobstate is not None:
            await asyncio.to_thread(self._close_jobstate, tracked)
        self.done.append(tracked)

    def _close_jobstate(self, tracked: Tracked) -> None:
        with self._feed_lock:  # a snapshot of another workflow may be measuring it
            if tracked.jobstate is not None:
                tracked.jobstate.close()


@dataclass
class Followed:
    """A root workflow the service follows, and who waits for its end."""

    dagman_out: str
    config: MonitorConfig
    source: str  # attach | watch | dropin | restart
    uid: int
    wf_uuid: str | None = None
    started: float = field(default_factory=time.time)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    monitor: ServiceMonitor | None = None
    task: asyncio.Task[int] | None = None
    exit_code: int | None = None
    subscribers: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)
    error: str | None = None
    outcome: str | None = None  # once ended: one of status.OUTCOMES; None when only stopped
    dagman_exit: int | None = None

    @property
    def run_dir(self) -> str:
        return os.path.dirname(self.dagman_out)

    def notify(self, message: dict[str, Any]) -> None:
        for callback in list(self.subscribers):
            try:
                callback(message)
            except Exception as exc:  # a broken client never hurts the service
                log.debug("subscriber failed", error=str(exc))


async def run_followed(
    item: Followed,
    *,
    watcher: FileWatcher,
    pool: SinkPool,
    shutting_down: Callable[[], bool],
    resume: ResumeStore | None = None,
) -> int:
    """Follow one root workflow to its end; the exit code the per-workflow daemon would give."""
    structlog.contextvars.bind_contextvars(wf_uuid=item.wf_uuid, dagman_out=item.dagman_out)
    # Everything done for this workflow (this task, its worker threads, its sink lane
    # turns) creates files as the submit directory's owner when the service is root.
    ownership.set_owner(ownership.owner_of(item.run_dir))
    monitor = ServiceMonitor(
        item.config, watcher=watcher, pool=pool, key=item.dagman_out, wf_uuid=item.wf_uuid
    )
    monitor.resume_store = resume
    item.monitor = monitor
    code = 0
    try:
        await asyncio.to_thread(monitor.start)
        log.info(
            "following workflow",
            source=item.source,
            recovering=monitor.restart,
            resumed=monitor.resumed is not None,
        )
        await monitor.follow_all(item.stop)
        if item.stop.is_set() and not shutting_down():
            code = 1  # interrupted like SIGINT of the per-workflow daemon
    except MonitordError as exc:
        log.error("workflow not followed", error=str(exc), exit_code=exc.exit_code)
        item.error = str(exc)
        code = exc.exit_code
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # contained: one workflow, logged with its id
        log.exception("workflow failed", error=repr(exc))
        item.error = repr(exc)
        code = 1
    finally:
        monitor.following_over.set()
        monitor.shutting_down = monitor.shutting_down or shutting_down()
        try:
            await monitor.close()
        except Exception as exc:
            log.error("closing the workflow's sinks failed", error=repr(exc))
    root = monitor.stats[0].tracked.wf if monitor.stats else None
    item.dagman_exit = root.dagman_exit if root is not None and root.state == "end" else None
    if shutting_down() and not (root is not None and root.finished):
        # Only the service stopped: the workflow goes on, and the next start resumes it.
        log.info("workflow stopped", reason="service stopping", events=monitor.events_total)
        return code
    item.outcome = outcome_of(item, root, code, interrupted=item.stop.is_set())
    (log.warning if item.outcome in ("incomplete", "error") else log.info)(
        "workflow ended",
        outcome=item.outcome,
        dagman_exit=item.dagman_exit,
        exit_code=code,
        events=monitor.events_total,
    )
    return code


def root_finished(item: Followed) -> bool:
    """The root workflow was ended in order (monitord.done written, monitord.recover gone)."""
    monitor = item.monitor
    if monitor is None or not monitor.stats:
        return False
    wf = monitor.stats[0].tracked.wf
    return wf is not None and bool(wf.finished)


def outcome_of(item: Followed, root: Any, code: int, *, interrupted: bool) -> str:
    """How the workflow ended (status.OUTCOMES): the root workflow's final xwf.end status
    (DAGMan's exit code) when DAGMan wrote its exit line; else why following stopped."""
    if item.error is not None:
        return "error"
    if root is not None and root.state == "end" and root.dagman_exit is not None:
        return "success" if root.dagman_exit == 0 else "failure"
    if interrupted and code != 0:
        return "interrupted"
    return "incomplete"
