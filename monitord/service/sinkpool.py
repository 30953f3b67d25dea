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
  as root (:mod:`monitord.ownership`).
* A lane serves its handles round-robin, one queued batch at a time, and each
  handle holds at most a few batches, so a huge workflow never starves the
  others on its lane.  A retryable failure puts only that handle to sleep
  (backoff) while the lane goes on with the others; a permanent failure or
  exhausted retries disable that workflow's sink only.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from monitord import ownership
from monitord.events import StampedeEvent
from sinks.amqp.hub import HubRegistry
from sinks.base import Sink, SinkError

log = structlog.get_logger(__name__)

MAX_QUEUED = 4
RETRIES = 10


@dataclass
class LaneStats:
    """Counters of one lane, for the status endpoint."""

    name: str
    queued: int = 0
    failures: int = 0
    retries: int = 0
    events_written: int = 0
    handles: int = 0


class LaneHandle:
    """One sink of one workflow, driven by a lane."""

    def __init__(self, sink: Sink, lane: SinkLane, wf_uuid: str | None) -> None:
        self.sink = sink
        self.lane = lane
        self.wf_uuid = wf_uuid
        self.items: deque[tuple[str, Any]] = deque()
        self.opened = False
        self.failed = False
        self.attempts = 0
        self.retry_at = 0.0
        self.scheduled = False
        self.owner = ownership.current()  # of the workflow whose Monitor made the handle

    def put(self, kind: str, payload: Any, *, bounded: bool = True) -> None:
        """Queue an item; batches wait (in the caller's thread) while the handle is full."""
        lane = self.lane
        with lane.cond:
            while bounded and len(self.items) >= MAX_QUEUED and not self.failed and lane.alive:
                lane.cond.wait(1.0)
            if self.failed and kind == "batch":
                return
            self.items.append((kind, payload))
            lane.stats.queued += 1
            lane.schedule(self)


class SinkLane:
    """A thread serving many handles round-robin."""

    def __init__(self, name: str) -> None:
        self.stats = LaneStats(name)
        self.cond = threading.Condition()
        self.ready: deque[LaneHandle] = deque()
        self.sleeping: list[LaneHandle] = []
        self.alive = True
        self._thread = threading.Thread(target=self._run, name=f"lane-{name}", daemon=True)
        self._thread.start()

    def schedule(self, handle: LaneHandle) -> None:
        """Called with ``cond`` held."""
        if not handle.scheduled and handle.items:
            handle.scheduled = True
            if handle.retry_at > time.monotonic():
                self.sleeping.append(handle)
            else:
                self.ready.append(handle)
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.alive = False
            self.cond.notify_all()
        self._thread.join(timeout=30)

    def _next(self) -> LaneHandle | None:
        with self.cond:
            while self.alive:
                now = time.monotonic()
                if self.sleeping:
                    awake = [h for h in self.sleeping if h.retry_at <= now]
                    for h in awake:
                        self.sleeping.remove(h)
                        self.ready.append(h)
                if self.ready:
                    return self.ready.popleft()
                wait = None
                if self.sleeping:
                    wait = max(0.01, min(h.retry_at for h in self.sleeping) - now)
                self.cond.wait(wait)
            return None

    def _run(self) -> None:
        while True:
            handle = self._next()
            if handle is None:
                return
            with (
                structlog.contextvars.bound_contextvars(wf_uuid=handle.wf_uuid),
                ownership.owned_by(handle.owner),
            ):
                self._serve(handle)

    def _serve(self, handle: LaneHandle) -> None:
        item = handle.items[0]
        done = self._do(handle, item)
        with self.cond:
            if done:
                handle.items.popleft()
                self.stats.queued -= 1
            handle.scheduled = False
            if handle.failed:
                self._drop(handle)
            self.schedule(handle)
            self.cond.notify_all()

    def _drop(self, handle: LaneHandle) -> None:
        """A disabled handle: release flush/close waiters, forget batches."""
        while handle.items:
            kind, payload = handle.items.popleft()
            self.stats.queued -= 1
            if kind in ("flush", "close"):
                payload.set()

    def _do(self, handle: LaneHandle, item: tuple[str, Any]) -> bool:
        """Process one item; False means "retry it later"."""
        kind, payload = item
        sink = handle.sink
        if kind == "close":
            if handle.opened:
                try:
                    sink.close()
                except Exception as exc:  # isolation
                    log.error("sink close failed", sink=sink.name, error=str(exc))
            handle.opened = False
            payload.set()
            return True
        if handle.failed:
            if kind == "flush":
                payload.set()
            return True
        if not handle.opened:
            if not self._guard(handle, sink.open, "cannot create events output, disabling it"):
                return handle.failed
            handle.opened = True
        if kind == "flush":
            ok = self._guard(handle, sink.flush, "sink flush failed")
            if ok or handle.failed:
                payload.set()
            return ok or handle.failed
        batch: Sequence[StampedeEvent] = payload
        ok = self._guard(handle, lambda: sink.write_batch(batch), "sink failed, disabling it")
        if ok:
            self.stats.events_written += len(batch)
        return ok or handle.failed

    def _guard(self, handle: LaneHandle, call: Any, what: str) -> bool:
        try:
            call()
        except SinkError as exc:
            if exc.retryable and handle.attempts < RETRIES:
                handle.attempts += 1
                self.stats.retries += 1
                delay = min(0.5 * 2 ** (handle.attempts - 1), 30.0)
                handle.retry_at = time.monotonic() + delay
                log.warning(
                    "sink error, retrying",
                    sink=handle.sink.name,
                    error=str(exc),
                    attempt=handle.attempts,
                )
                return False
            self._fail(handle, what, exc)
            return False
        except Exception as exc:  # isolation: a sink bug stays with its sink
            self._fail(handle, what, exc)
            return False
        handle.attempts = 0
        handle.retry_at = 0.0
        return True

    def _fail(self, handle: LaneHandle, what: str, exc: Exception) -> None:
        log.error(what, sink=handle.sink.name, error=str(exc))
        handle.failed = True
        self.stats.failures += 1


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

        ``key`` (the workflow's dagman.out) picks its local lane; ``wf_uuid`` is for the logs.
        """

        def make(sinks: list[Sink]) -> SharedSinkSet:
            for sink in sinks:
                if hasattr(sink, "engine_source"):
                    sink.engine_source = self.engines
                if hasattr(sink, "hub_source"):
                    sink.hub_source = self.hubs
            return SharedSinkSet([LaneHandle(s, self.lane_for(s, key), wf_uuid) for s in sinks])

        return make

    def lanes(self) -> list[SinkLane]:
        return [*self.local, *self.shared.values()]

    def close(self) -> None:
        for lane in self.lanes():
            lane.stop()
        self.engines.dispose()
        self.hubs.close()


def share_key(sink: Sink) -> str | None:
    """Lane key of a sink that talks to a server shared by many workflows, else None."""
    server = getattr(sink, "server_url", None)
    if server is not None:
        from sinks.sql.database import safe_url

        return f"sql:{safe_url(server)}"
    if getattr(sink, "name", None) == "dashboard":
        # One master DB per user, written by many workflows: one lane, so no lock fights.
        return f"dashboard:{getattr(sink, 'display_url', '')}"
    broker = getattr(sink, "broker_url", None)
    if isinstance(broker, str) and broker:
        return f"amqp:{broker}"
    return None


class SharedSinkSet:
    """What one workflow's Monitor sees: the ``SinkSet`` interface over lane handles."""

    def __init__(self, handles: list[LaneHandle]) -> None:
        self.handles = handles
        self.events_published = 0

    def __bool__(self) -> bool:
        return bool(self.handles)

    def start(self) -> None:
        """Lanes open each sink on its first item."""

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            self.events_published += len(batch)
            for handle in self.handles:
                handle.put("batch", batch)

    def _all(self, kind: str) -> None:
        events = []
        for handle in self.handles:
            done = threading.Event()
            handle.put(kind, done, bounded=False)
            events.append((handle, done))
        for handle, done in events:
            while not done.wait(1.0):
                if not handle.lane.alive:
                    break

    def flush(self) -> None:
        self._all("flush")

    def close(self) -> None:
        self._all("close")

    @property
    def failed(self) -> bool:
        return any(h.failed for h in self.handles)
