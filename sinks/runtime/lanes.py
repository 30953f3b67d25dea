"""Many deliveries on a few shared threads ("lanes"): the service's executor.

The per-workflow daemon gives each sink a thread (:class:`~sinks.runtime.runner.SinkWorker`,
the SQL sink even a process).  A service following a thousand workflows cannot: there every
sink of every workflow is a :class:`LaneHandle` (a :class:`~sinks.runtime.delivery.Delivery`,
so the same queue, spool and policy) on one of a few :class:`SinkLane` threads.

* A lane serves its deliveries round-robin, one step (a batch, a flush, one spooled batch)
  per turn, and each holds at most a few batches in memory, so a huge workflow never starves
  the others on its lane.
* Every turn runs with its workflow's owner set, so the files a sink creates (SQLite file,
  event file, spool) are the owner's when the service runs as root
  (:mod:`monitord.system.ownership`).
* Deliveries to one shared server report one "down" and one "back" line for all its
  workflows (:class:`DestinationReporter`).

Which lane a sink goes to, and the shared engines and broker connections, are the service's
business (:mod:`monitord.service.sinkpool`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import structlog

from monitord.system import ownership
from sinks.runtime.base import Sink
from sinks.runtime.delivery import EXIT, Delivery, OutageReporter, Step, Wait
from sinks.runtime.health import SinkHealth
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger("monitord.service.sinkpool")


@dataclass
class LaneStats:
    """Counters of one lane, for the status endpoint."""

    name: str
    handles: int = 0
    queued: int = 0
    failures: int = 0
    retries: int = 0
    events_written: int = 0


class LaneHandle(Delivery):
    """One sink of one workflow, driven by a lane (a :class:`Delivery` without a thread)."""

    def __init__(
        self,
        sink: Sink,
        lane: SinkLane,
        wf_uuid: str | None,
        spool: SpoolSettings | None,
        *,
        destination: str | None = None,
    ) -> None:
        self.lane = lane
        self.wf_uuid = wf_uuid
        self.scheduled = False
        self.owner = ownership.current()  # of the workflow whose Monitor made the handle
        super().__init__(
            sink,
            spool=spool,
            cond=lane.cond,
            wake=self._schedule,
            # a shared server: one "down"/"back" pair for all its workflows; else per sink
            reporter=lane.reporter_for(destination) if destination else None,
        )

    def _schedule(self) -> None:
        self.lane.schedule(self)

    # the executor interface (sinks.runtime.executor): the lane is the thread
    def start(self) -> None:
        """Join the lane; it opens the sink on its first turn."""
        self.lane.add(self)

    def join(self) -> None:
        """Wait for the delivery to end (or for its lane to be gone)."""
        while not self.finished.wait(1.0):
            if not self.lane.thread_alive():
                return

    def stop(self) -> None:
        self.request_stop()
        self.join()

    def _running(self) -> bool:
        return not self.finished.is_set() and self.lane.thread_alive()


class DestinationReporter(OutageReporter):
    """One "down" and one "back" line per destination, not one per workflow writing to it.

    Called with the lane's ``cond`` held (every delivery to a destination is on one lane).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.down: set[int] = set()  # deliveries down now
        self.since = 0.0
        self.drained = 0
        self.workflows: set[str] = set()

    def went_down(
        self, delivery: Delivery, error: str, never_opened: bool, retry_in: float
    ) -> None:
        if not self.down:
            self.since, self.drained = time.monotonic(), 0
            self.workflows.clear()
            log.warning(
                "sink down, spooling its events until it is back",
                sink=self.name,
                error=error,
                retry_in=round(retry_in, 2),
            )
        self.down.add(id(delivery))
        self.workflows.add(str(delivery.wf_uuid) if isinstance(delivery, LaneHandle) else "")

    def came_back(
        self, delivery: Delivery, *, outage: float, drained: int, drain_seconds: float
    ) -> None:
        self.drained += drained
        self._left(delivery, back=True)

    def gone(self, delivery: Delivery) -> None:
        self._left(delivery, back=False)  # stopped or disabled while down: not "back"

    def _left(self, delivery: Delivery, *, back: bool) -> None:
        if id(delivery) not in self.down:
            return
        self.down.discard(id(delivery))
        if not self.down and back:
            log.info(
                "sink is back",
                sink=self.name,
                down_seconds=round(time.monotonic() - self.since, 1),
                drained_events=self.drained,
                workflows=len(self.workflows),
            )


def _by_sink_name(sink: Sink) -> str:
    return str(sink.name)


def add_counters(total: SinkHealth, ended: SinkHealth) -> SinkHealth:
    """``total`` with the counters of an ended delivery added (so a counter never goes back)."""
    return replace(
        total,
        retries=total.retries + ended.retries,
        permanent_failures=total.permanent_failures + ended.permanent_failures,
        events_written=total.events_written + ended.events_written,
        row_by_row_batches=total.row_by_row_batches + ended.row_by_row_batches,
        rows_rejected=total.rows_rejected + ended.rows_rejected,
    )


class SinkLane:
    """A thread serving many deliveries round-robin, one step each per turn.

    ``group`` names the destination a sink's counters add up under once its delivery ends
    (:attr:`ended_health`), so the totals a status page or ``/metrics`` shows never drop when a
    workflow ends."""

    def __init__(self, name: str, group: Callable[[Sink], str] = _by_sink_name) -> None:
        self.name = name
        self.group = group
        self.ended_health: dict[str, SinkHealth] = {}  # counters of ended deliveries, by group
        self.ended_at: dict[str, float] = {}  # when the group's last delivery here ended
        self.cond = threading.Condition()
        self.ready: deque[LaneHandle] = deque()
        self.sleeping: dict[LaneHandle, float] = {}
        self.members: list[LaneHandle] = []
        self.ended = LaneStats(name)  # counters of the deliveries that ended
        self.reporters: dict[str, DestinationReporter] = {}
        self.alive = True
        self._thread = threading.Thread(target=self._run, name=f"lane-{name}", daemon=True)
        self._thread.start()

    @property
    def stats(self) -> LaneStats:
        with self.cond:
            live, ended = self.members, self.ended
            return LaneStats(
                self.name,
                handles=len(live),
                queued=sum(h.queued for h in live),
                failures=ended.failures + sum(h.policy.permanent_failures for h in live),
                retries=ended.retries + sum(h.policy.retries for h in live),
                events_written=ended.events_written + sum(h.events_written for h in live),
            )

    def reporter_for(self, name: str) -> DestinationReporter:
        with self.cond:
            reporter = self.reporters.get(name)
            if reporter is None:
                reporter = self.reporters[name] = DestinationReporter(name)
            return reporter

    def health(self) -> tuple[list[tuple[LaneHandle, SinkHealth]], dict[str, SinkHealth]]:
        """Each live delivery's health and the ended ones' counters, read at one instant (a
        delivery ending meanwhile is counted once)."""
        with self.cond:
            return [(h, h.health()) for h in self.members], dict(self.ended_health)

    def ends(self) -> dict[str, float]:
        """When each group's last delivery on this lane ended."""
        with self.cond:
            return dict(self.ended_at)

    def forget_ended(self, groups: set[str]) -> None:
        """Drop the kept counters of ``groups`` (destinations nothing has delivered to lately)."""
        with self.cond:
            for group in groups:
                self.ended_health.pop(group, None)
                self.ended_at.pop(group, None)

    def thread_alive(self) -> bool:
        return self._thread.is_alive()

    def add(self, handle: LaneHandle) -> None:
        with self.cond:
            if not self.alive:
                raise RuntimeError(f"the sink lane {self.name} is stopped")
            self.members.append(handle)
            self.schedule(handle)

    def schedule(self, handle: LaneHandle) -> None:
        """A delivery has (or may have) work: give it a turn.  Called with ``cond`` held."""
        if not handle.scheduled and not handle.finished.is_set():
            handle.scheduled = True
            self.sleeping.pop(handle, None)
            self.ready.append(handle)
            self.cond.notify_all()

    def stop(self, timeout: float = 30.0) -> None:
        """Service stop: every delivery ends at once, leaving what it could not write spooled."""
        with self.cond:
            self.alive = False
            for handle in list(self.members):
                handle.request_stop(0.0, abort=True)
            self.cond.notify_all()
        self._thread.join(timeout=timeout)

    def _next(self) -> tuple[LaneHandle, Step] | None:
        with self.cond:
            while True:
                now = time.monotonic()
                for handle, at in list(self.sleeping.items()):
                    if at <= now:
                        del self.sleeping[handle]
                        self.schedule(handle)
                while self.ready:
                    handle = self.ready.popleft()
                    handle.scheduled = False
                    step = handle.decide()
                    if isinstance(step, Wait):
                        if step.timeout is not None:
                            self.sleeping[handle] = now + step.timeout
                        continue
                    return handle, step
                if not self.alive and not self.members:
                    return None
                wait = min(self.sleeping.values()) - now if self.sleeping else None
                self.cond.wait(max(0.01, wait) if wait is not None else None)

    def _add_ended(self, handle: LaneHandle) -> None:
        """``cond`` held: keep the ended delivery's counters under its group."""
        try:
            final = handle.health()
        except Exception:  # a sink that cannot say: its counters are lost, not the lane
            log.exception("no counters from an ended delivery", sink=handle.sink.name)
            return
        key = self.group(handle.sink)
        total = self.ended_health.get(key) or SinkHealth(name=key, workflows=0)
        self.ended_health[key] = add_counters(total, final)
        self.ended_at[key] = time.time()

    def _run(self) -> None:
        while True:
            turn = self._next()
            if turn is None:
                return
            handle, step = turn
            with (
                structlog.contextvars.bound_contextvars(wf_uuid=handle.wf_uuid),
                ownership.owned_by(handle.owner),
            ):
                try:
                    if step is EXIT:
                        handle.finish()
                    else:
                        handle.run(step)  # type: ignore[arg-type]
                except Exception as exc:  # isolation: a bug stays with its sink
                    handle.crashed(exc)
                    if step is EXIT:
                        handle.finished.set()
            with self.cond:
                if handle.finished.is_set():
                    if handle in self.members:
                        self.members.remove(handle)
                        self.ended.failures += handle.policy.permanent_failures
                        self.ended.retries += handle.policy.retries
                        self.ended.events_written += handle.events_written
                        self._add_ended(handle)
                    self.sleeping.pop(handle, None)
                    self.cond.notify_all()
                else:
                    self.schedule(handle)
