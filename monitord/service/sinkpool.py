"""Which lane each sink of each workflow goes to, and the engines and connections they share.

The lanes themselves (many deliveries on a few threads) are an executor of the delivery
runtime (:mod:`sinks.runtime.lanes`); a workflow's sinks on them are a
:class:`~sinks.runtime.sinkset.SharedSinkSet`.  Here, the service's policy:

* Workflows writing to the same database server share its lane and one
  SQLAlchemy engine (one connection pool per server URL); each workflow keeps
  its own loader, so id caches stay per workflow.
* Per-workflow SQLite files and event files go to a fixed pool of local lanes;
  their SQLite connections are not pooled, so an idle workflow holds no
  connection, no thread and no process.
* AMQP sinks of one broker share its lane and one connection, OTLP sinks of one endpoint
  share its lane and one HTTP connection: a sink that declares ``shares_connection`` takes
  its client from the pool's :class:`~sinks.runtime.clients.SharedClients`
  (:class:`~sinks.amqp.connection.BrokerLink`, the OTLP exporter); each workflow keeps its
  own delivery, spool, producer numbers (AMQP) or trace model (OTLP).
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

import threading
import time
import zlib
from dataclasses import replace
from typing import Any, cast

from sinks.runtime.base import Sink
from sinks.runtime.capabilities import SharedResources, SharingSink, capabilities_of
from sinks.runtime.clients import SharedClients
from sinks.runtime.health import SinkHealth, merge_health
from sinks.runtime.lanes import (
    DestinationReporter,
    LaneHandle,
    LaneStats,
    SinkLane,
    add_counters,
)
from sinks.runtime.sinkset import SharedSinkSet
from sinks.runtime.spool import SpoolSettings

__all__ = [
    "DestinationReporter",
    "EngineCache",
    "LaneHandle",
    "LaneStats",
    "SharedSinkSet",
    "SinkLane",
    "SinkPool",
    "destination_name",
    "merge_health",
    "share_key",
]


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

    def __init__(self, local_lanes: int = 4, keep_ended: float = 86400.0) -> None:
        self.keep_ended = keep_ended  # seconds a destination no workflow uses stays listed
        self.local = [SinkLane(f"local-{i}", destination_name) for i in range(local_lanes)]
        self.shared: dict[str, SinkLane] = {}
        self.engines = EngineCache()
        self.clients = SharedClients()
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
                lane = self.shared[key] = SinkLane(key, destination_name)
            return lane

    def sink_set(self, key: str, wf_uuid: str | None) -> Any:
        """A factory for ``Monitor.make_sink_set`` binding one workflow's sinks to lanes.

        ``key`` (the workflow's dagman.out) picks its local lane; ``wf_uuid`` is for the logs;
        the factory's ``spool`` (the Monitor's spool settings) is where its sinks spool.
        """

        shared = SharedResources(engines=self.engines, clients=self.clients)

        def make(sinks: list[Sink], spool: SpoolSettings | None = None) -> SharedSinkSet:
            handles = []
            for sink in sinks:
                if capabilities_of(sink).takes_shared:
                    cast(SharingSink, sink).use_shared(shared)
                lane = self.lane_for(sink, key)
                destination = destination_name(sink) if share_key(sink) else None
                handles.append(LaneHandle(sink, lane, wf_uuid, spool, destination=destination))
            for handle in handles:
                handle.start()
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

    def health(self) -> list[SinkHealth]:
        """Per destination (sink name), over every workflow's delivery to it (see
        :func:`merge_health`); the counters include those of the deliveries that ended, so a
        destination stays listed, and its totals never drop, when its workflows end (for
        ``keep_ended`` seconds after the last one, so per-workflow databases do not pile up)."""
        self._forget_idle()
        by_name: dict[str, list[SinkHealth]] = {}
        ended: dict[str, SinkHealth] = {}
        for lane in self.lanes():
            live, lane_ended = lane.health()
            for handle, snap in live:
                snap = replace(snap, workflow=handle.wf_uuid)
                by_name.setdefault(destination_name(handle.sink), []).append(snap)
            for name, counters in lane_ended.items():
                ended[name] = add_counters(ended[name], counters) if name in ended else counters
        merged = []
        for name in sorted(by_name.keys() | ended.keys()):
            snaps = by_name.get(name)
            health = merge_health(name, snaps) if snaps else SinkHealth(name=name, workflows=0)
            merged.append(add_counters(health, ended[name]) if name in ended else health)
        return merged

    def _forget_idle(self) -> None:
        lanes = self.lanes()
        live = {destination_name(h.sink) for h in self.handles()}
        last: dict[str, float] = {}
        for lane in lanes:
            for name, at in lane.ends().items():
                last[name] = max(at, last.get(name, 0.0))
        cutoff = time.time() - self.keep_ended
        idle = {name for name, at in last.items() if at < cutoff and name not in live}
        if idle:
            for lane in lanes:
                lane.forget_ended(idle)

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
        self.clients.close()


def destination_name(sink: Sink) -> str:
    """What health and metrics call a destination: its server (password-free), or for the
    per-workflow files (SQLite, event files) their kind."""
    return share_key(sink) or f"{sink.name}: per-workflow files"


def share_key(sink: Sink) -> str | None:
    """Lane key of a sink that talks to a server shared by many workflows, else None (what
    the sink declares: ``Capabilities.shared``, :class:`SharingSink`)."""
    if not capabilities_of(sink).shared:
        return None
    return cast(SharingSink, sink).lane_key
