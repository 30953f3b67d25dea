"""One followed root workflow inside the service: its Monitor, its task, its subscribers.

:class:`ServiceMonitor` runs the per-workflow daemon's :class:`~monitord.daemon.monitor.Monitor`
with the service's parts handed to it: its sinks on the shared lanes (:class:`LaneOutputs`),
the one file watcher (:class:`WatcherWaiter`), the service's state directory for snapshots, and
itself as the observer that keeps the status page's figures.  The follow loop is the daemon's,
event-driven, so an idle workflow costs a few sleeping coroutines and nothing else.  Its
outputs are those of the per-workflow daemon, because everything that produces them is the
daemon's own code.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from monitord.core.events import StampedeEvent
from monitord.daemon.monitor import Monitor, MonitorConfig, MonitordError, Tracked
from monitord.daemon.parts import MarkKeeper, SinkSetLike
from monitord.daemon.resume import ResumeStore
from monitord.daemon.resuming import CrashResume
from monitord.service.jobcounts import progress_for
from monitord.service.sinkpool import SharedSinkSet, SinkPool
from monitord.service.status import EventRate
from monitord.service.watcher import FileWatcher
from monitord.system import ownership
from monitord.system.secrets import mask_url_passwords
from notifications.notifier import Notifier
from sinks.runtime.base import Sink
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)


class LaneOutputs:
    """One workflow's sinks on the pool's lanes (``key``, its dagman.out, picks the local
    lane); waiting for them to deliver holds no worker thread: many workflows may end
    during one outage."""

    def __init__(self, pool: SinkPool, key: str, wf_uuid: str | None) -> None:
        self._make: Callable[[list[Sink], SpoolSettings | None], SharedSinkSet] = pool.sink_set(
            key, wf_uuid
        )
        self.set: SharedSinkSet | None = None

    def sink_set(self, sinks: list[Sink], spool: SpoolSettings | None) -> SinkSetLike:
        self.set = self._make(sinks, spool)
        return self.set

    async def settle(self) -> None:
        if self.set is None:
            return
        self.set.request_close()
        pause = 0.05
        while not self.set.closed:
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)

    @property
    def undelivered(self) -> int:
        """Events of the workflow its sinks have not taken yet (spooled or queued)."""
        return self.set.undelivered if self.set is not None else 0

    def forget_marks(self, root_uuid: str) -> None:
        for handle in self.set.handles if self.set is not None else []:
            if (
                capabilities_of(handle.sink).keeps_marks
                and handle.finished.is_set()
                and not handle.failed
                and handle.left_behind == 0
            ):
                cast(MarkKeeper, handle.sink).forget_marks(root_uuid)


class WatcherWaiter:
    """The service's one file watcher, for a Monitor's follow loop."""

    def __init__(self, watcher: FileWatcher) -> None:
        self.watcher = watcher

    def watch(self, path: str) -> None:
        self.watcher.add(path)

    async def wait(self, path: str, timeout: float) -> None:
        await self.watcher.wait(path, timeout)

    async def unwatch(self, path: str) -> None:
        self.watcher.discard(path)

    async def close(self) -> None:
        """Nothing: the watcher is the service's."""


@dataclass
class TrackedStats:
    """What the status page needs about one (sub-)workflow of a Monitor."""

    tracked: Tracked
    ended: bool = False


class ServiceMonitor:
    """A workflow's Monitor in the service, and what the status page reads of it (it
    observes the Monitor: workflows added and ended, lines fed, events published)."""

    def __init__(
        self,
        config: MonitorConfig,
        *,
        watcher: FileWatcher,
        pool: SinkPool,
        key: str,
        wf_uuid: str | None = None,
        resume: ResumeStore | None = None,
    ) -> None:
        self.stats: list[TrackedStats] = []
        self._stats_of: dict[int, TrackedStats] = {}
        self.rate = EventRate()
        self.events_total = 0
        self.following_over = asyncio.Event()  # follow_all returned (or never ran)
        self.outputs = LaneOutputs(pool, key, wf_uuid)
        self.monitor = Monitor(
            config,
            self.outputs,
            waiter=WatcherWaiter(watcher),
            resume=CrashResume(resume),
            observers=[self],
            scripts_as_owner=True,  # notification scripts run as the submit dir's owner
            feed_thread=False,  # the service's bounded pool, not a thread per workflow
        )

    @property
    def sinks(self) -> SinkSetLike:
        return self.monitor.sinks

    @property
    def notifier(self) -> Notifier | None:
        return self.monitor.notifications.notifier

    @property
    def zone_warnings(self) -> int:
        """Start-ups of the workflow that warned local time shifts its times (0 or 1)."""
        return self.monitor.zone_warnings

    @property
    def shutting_down(self) -> bool:
        """A service stop: the Monitor leaves monitord.recover and a last snapshot."""
        return self.monitor.shutting_down

    @shutting_down.setter
    def shutting_down(self, value: bool) -> None:
        self.monitor.shutting_down = value

    # MonitorObserver: called from worker threads (start, sub-workflows found, chunks)
    def added(self, tracked: Tracked, *, opened: bool, ended: bool) -> None:
        stats = TrackedStats(tracked, ended=ended)
        self._stats_of[id(tracked)] = stats
        self.stats.append(stats)

    def fed(self, tracked: Tracked, lines: list[str]) -> None:
        if tracked.wf is not None:
            progress = progress_for(tracked.wf)
            for line in lines:
                progress.feed(line)

    def published(self, events: Sequence[StampedeEvent]) -> None:
        self.events_total += len(events)
        self.rate.add(len(events))

    def ended(self, tracked: Tracked) -> None:
        stats = self._stats_of.get(id(tracked))
        if stats is not None:
            stats.ended = True


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
    service_monitor = ServiceMonitor(
        item.config,
        watcher=watcher,
        pool=pool,
        key=item.dagman_out,
        wf_uuid=item.wf_uuid,
        resume=resume,
    )
    item.monitor = service_monitor
    code = await _follow(item, service_monitor, shutting_down)
    return _ended(item, service_monitor, code, shutting_down())


async def _follow(
    item: Followed, service_monitor: ServiceMonitor, shutting_down: Callable[[], bool]
) -> int:
    """Start the Monitor, follow until the root workflow ends or is stopped, close it; the
    exit code (an error is contained, logged with the workflow's id)."""
    monitor = service_monitor.monitor
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
        item.error = mask_url_passwords(str(exc))  # (the attach client's "ended" line)
        log.error("workflow not followed", error=item.error, exit_code=exc.exit_code)
        code = exc.exit_code
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # contained: one workflow, logged with its id
        item.error = mask_url_passwords(repr(exc))
        log.exception("workflow failed", error=item.error)
        code = 1
    finally:
        service_monitor.following_over.set()
        monitor.shutting_down = monitor.shutting_down or shutting_down()
        try:
            await monitor.close()
        except Exception as exc:
            log.error("closing the workflow's sinks failed", error=repr(exc))
    return code


def _ended(item: Followed, service_monitor: ServiceMonitor, code: int, stopping: bool) -> int:
    """After following: the workflow's outcome (unless only the service stopped), logged."""
    root = service_monitor.stats[0].tracked.wf if service_monitor.stats else None
    item.dagman_exit = root.dagman_exit if root is not None and root.state == "end" else None
    if stopping and not (root is not None and root.finished):
        # Only the service stopped: the workflow goes on, and the next start resumes it.
        log.info("workflow stopped", reason="service stopping", events=service_monitor.events_total)
        return code
    item.outcome = outcome_of(item, root, code, interrupted=item.stop.is_set())
    (log.warning if item.outcome in ("incomplete", "error") else log.info)(
        "workflow ended",
        outcome=item.outcome,
        dagman_exit=item.dagman_exit,
        exit_code=code,
        events=service_monitor.events_total,
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
