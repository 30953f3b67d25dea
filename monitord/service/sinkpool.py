"""Sinks of many workflows on a few shared threads ("lanes"), engines shared per server.

The per-workflow daemon gives each sink a thread (the SQL sink even a process).
A service following a thousand workflows cannot: here every sink of every
workflow is a :class:`LaneHandle` on one of a few :class:`SinkLane` threads.

* Workflows writing to the same database server share its lane and one
  SQLAlchemy engine (one connection pool per server URL); each workflow keeps
  its own loader, so id caches stay per workflow.
* Per-workflow SQLite files and event files go to a fixed pool of local lanes;
  their SQLite connections are not pooled, so an idle workflow holds no
  connection, no thread and no process.
* AMQP sinks of one broker share its lane and one connection (one
  :class:`~sinks.amqp.hub.Hub` per broker, from the pool's registry); each
  workflow keeps its own spool and cursor.
* Every turn of a handle runs with its workflow's owner set, so the files a sink
  creates (SQLite file, event file, spool) are the owner's when the service runs
  as root (:mod:`monitord.system.ownership`).
* A lane serves its deliveries round-robin, one step (a batch, a flush, one
  spooled batch) per turn, and each holds at most a few batches in memory, so a
  huge workflow never starves the others on its lane.
* Each sink of each workflow is a :class:`~sinks.runtime.delivery.Delivery` -- the same
  runtime as the per-workflow daemon's: while its server is down, that
  delivery sleeps between jittered retries (never giving up on a retryable
  error) and its batches go to its workflow's on-disk spool, so memory stays
  bounded whatever the outage; when the server is back the spool drains in
  order.  A permanent error (wrong password, missing database) disables that
  workflow's sink only.
* A workflow that ends waits for its deliveries to drain (the status says
  "delivering"); a service stop leaves the rest spooled.
"""

from __future__ import annotations

import math
import threading
import time
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from monitord.system import ownership
from sinks.amqp.hubs import HubRegistry
from sinks.runtime.base import Sink
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.delivery import EXIT, Delivery, OutageReporter, Step, Wait
from sinks.runtime.policy import DISABLED, DOWN, DRAINING, UP
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)


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
        self, sink: Sink, lane: SinkLane, wf_uuid: str | None, spool: SpoolSettings | None
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
            reporter=lane.reporter_for(destination_name(sink)) if share_key(sink) else None,
        )

    def _schedule(self) -> None:
        self.lane.schedule(self)

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
        self.workflows.add(str(getattr(delivery, "wf_uuid", "")))

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


class SinkLane:
    """A thread serving many deliveries round-robin, one step each per turn."""

    def __init__(self, name: str) -> None:
        self.name = name
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
                    self.sleeping.pop(handle, None)
                    self.cond.notify_all()
                else:
                    self.schedule(handle)


class EngineCache:
    """One SQLAlchemy engine (connection pool) per database server URL; SQLite unpooled."""

    def __init__(self) -> None:
        self._engines: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, url: Any) -> Any:
        from sqlalchemy.pool import NullPool

        from sinks.sql.database import is_sqlite, make_engine

        if is_sqlite(url):
            return make_engine(url, poolclass=NullPool)
        key = url.render_as_string(hide_password=False)
        with self._lock:
            engine = self._engines.get(key)
            if engine is None:
                engine = self._engines[key] = make_engine(url)
            return engine

    def count(self) -> int:
        return len(self._engines)

    def dispose(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()


class SinkPool:
    """Every lane of the service, and the shared engines."""

    def __init__(self, local_lanes: int = 4) -> None:
        self.local = [SinkLane(f"local-{i}") for i in range(local_lanes)]
        self.shared: dict[str, SinkLane] = {}
        self.engines = EngineCache()
        self.hubs = HubRegistry()
        self.closing = False
        self._lock = threading.Lock()

    def lane_for(self, sink: Sink, workflow_key: str) -> SinkLane:
        key = share_key(sink)
        if key is None:
            index = zlib.crc32(workflow_key.encode()) % len(self.local)
            return self.local[index]
        with self._lock:
            lane = self.shared.get(key)
            if lane is None:
                lane = self.shared[key] = SinkLane(key)
            return lane

    def sink_set(self, key: str, wf_uuid: str | None) -> Any:
        """A factory for ``Monitor.make_sink_set`` binding one workflow's sinks to lanes.

        ``key`` (the workflow's dagman.out) picks its local lane; ``wf_uuid`` is for the logs;
        the factory's ``spool`` (the Monitor's spool settings) is where its sinks spool.
        """

        def make(sinks: list[Sink], spool: SpoolSettings | None = None) -> SharedSinkSet:
            handles = []
            for sink in sinks:
                caps = capabilities_of(sink)
                if caps.shares_engine:
                    sink.engine_source = self.engines  # type: ignore[attr-defined]
                if caps.shares_hub:
                    sink.hub_source = self.hubs  # type: ignore[attr-defined]
                lane = self.lane_for(sink, key)
                handles.append(LaneHandle(sink, lane, wf_uuid, spool))
            for handle in handles:
                handle.lane.add(handle)
            return SharedSinkSet(handles, self)

        return make

    def lanes(self) -> list[SinkLane]:
        return [*self.local, *self.shared.values()]

    def handles(self) -> list[LaneHandle]:
        out: list[LaneHandle] = []
        for lane in self.lanes():
            with lane.cond:
                out.extend(lane.members)
        return out

    def health(self) -> list[dict[str, Any]]:
        """Per destination (sink name), over every workflow's delivery to it (see
        :func:`merge_health`)."""
        by_name: dict[str, list[dict[str, Any]]] = {}
        for handle in self.handles():
            snap = handle.health()
            snap["workflow"] = handle.wf_uuid
            by_name.setdefault(destination_name(handle.sink), []).append(snap)
        return [merge_health(name, snaps) for name, snaps in sorted(by_name.items())]

    def begin_close(self) -> None:
        """Service stop: no more waiting for down sinks; what they hold stays spooled."""
        self.closing = True
        for handle in self.handles():
            handle.request_stop(0.0, abort=True)

    def close(self) -> None:
        self.closing = True
        for lane in self.lanes():
            lane.stop()
        self.engines.dispose()
        self.hubs.close()


_SEVERITY = {UP: 0, DRAINING: 1, DOWN: 2, DISABLED: 3}


def merge_health(name: str, snaps: list[dict[str, Any]]) -> dict[str, Any]:
    """One destination's health from its deliveries: the worst state (and since when), the
    backlog summed, the oldest undelivered event, the workflows not delivering."""
    worst = max(snaps, key=lambda s: _SEVERITY.get(s["state"], 0))
    state = worst["state"]
    since = [s["since"] for s in snaps if s["state"] == state and s.get("since")]
    return {
        "name": name,
        "state": state,
        "since": min(since) if since else None,
        "last_error": worst.get("last_error") if state != UP else None,
        "workflows": len(snaps),
        "workflows_not_up": sorted(
            str(s["workflow"]) for s in snaps if s["state"] != UP and s.get("workflow")
        ),
        "spooled_events": sum(int(s.get("spooled_events", 0)) for s in snaps),
        "spooled_bytes": sum(int(s.get("spooled_bytes", 0)) for s in snaps),
        "oldest_age": max(float(s.get("oldest_age", 0.0)) for s in snaps),
        "queued_batches": sum(int(s.get("queued_batches", 0)) for s in snaps),
        "retries": sum(int(s.get("retries", 0)) for s in snaps),
        "permanent_failures": sum(int(s.get("permanent_failures", 0)) for s in snaps),
        "events_written": sum(int(s.get("events_written", 0)) for s in snaps),
        "row_by_row_batches": sum(int(s.get("row_by_row_batches", 0)) for s in snaps),
        "rows_rejected": sum(int(s.get("rows_rejected", 0)) for s in snaps),
    }


def destination_name(sink: Sink) -> str:
    """What health and metrics call a destination: its server (password-free), or for the
    per-workflow files (SQLite, event files) their kind."""
    return share_key(sink) or f"{sink.name}: per-workflow files"


def share_key(sink: Sink) -> str | None:
    """Lane key of a sink that talks to a server shared by many workflows, else None."""
    server = getattr(sink, "server_url", None)
    if server is not None:
        from sinks.sql.database import safe_url

        return f"sql:{safe_url(server)}"
    if capabilities_of(sink).dashboard:
        # One master DB per user, written by many workflows: one lane, so no lock fights.
        return f"dashboard:{getattr(sink, 'display_url', '')}"
    broker = getattr(sink, "broker_url", None)
    if isinstance(broker, str) and broker:
        return f"amqp:{broker}"
    return None


class SharedSinkSet:
    """What one workflow's Monitor sees: the ``SinkSet`` interface over lane deliveries."""

    def __init__(self, handles: list[LaneHandle], pool: SinkPool | None = None) -> None:
        self.handles = handles
        self.pool = pool
        self.events_published = 0
        self.closing = False  # the workflow ended: its deliveries drain, then close

    def __bool__(self) -> bool:
        return bool(self.handles)

    def start(self) -> None:
        """Lanes open each sink on their first turn."""

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            self.events_published += len(batch)
            for handle in self.handles:
                handle.put(batch)

    def flush(self) -> None:
        """Every batch handed over is in its sink or durably spooled (all sinks at once)."""
        requests = [(h, h.request_flush()) for h in self.handles]
        for handle, request in requests:
            handle.wait_flushed(request)

    def close(self) -> None:
        """Deliver everything (as long as the service runs), then close the sinks.

        A service stop (the pool closing) cuts the wait short: the rest stays spooled.
        """
        self.request_close()
        for handle in self.handles:
            while not handle.finished.wait(1.0):
                if not handle.lane.thread_alive():
                    break

    def request_close(self) -> None:
        """Start :meth:`close` without waiting (see :attr:`closed`)."""
        self.closing = True
        closing = self.pool is not None and self.pool.closing
        for handle in self.handles:
            handle.request_stop(0.0 if closing else math.inf, abort=closing)

    @property
    def closed(self) -> bool:
        """Every delivery is over (or its lane is gone)."""
        return all(h.finished.is_set() or not h.lane.thread_alive() for h in self.handles)

    @property
    def undelivered(self) -> int:
        """Events handed over and not yet in their sinks (memory and spool)."""
        total = 0
        for handle in self.handles:
            snap = handle.health()
            total += int(snap.get("spooled_events", 0))
            total += sum(b.count for b in handle.pending_batches())
        return total

    def health(self) -> list[dict[str, Any]]:
        return [h.health() for h in self.handles]

    @property
    def failed(self) -> bool:
        return any(h.failed for h in self.handles)
