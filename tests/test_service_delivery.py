"""The service's shared lanes on the delivery runtime: outages spool, drain in order, log twice."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent, make_event
from monitord.service.sinkpool import SinkPool
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities, SharedResources
from sinks.runtime.spool import SpoolSettings
from tests.event_check import wire


class ServerSink:
    """One workflow's sink on a shared server (one lane): down while ``down`` is set."""

    def __init__(self, wf: str, down: threading.Event) -> None:
        self.name = "postgresql://u@db/stampede"
        self.display_url = f"{self.name}#{wf}"
        self.lane_key = "sql:postgresql://u@db/stampede"
        self.capabilities = Capabilities(shares_engine=True)
        self.down = down
        self.stamps: list[float] = []
        self.closed = False

    def use_shared(self, shared: SharedResources) -> None:
        self.shared = shared

    def open(self) -> None:
        if self.down.is_set():
            raise SinkError("connection refused", retryable=True)

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if self.down.is_set():
            raise SinkError("server closed the connection", retryable=True)
        self.stamps.extend(float(wire(e)["ts"]) for e in events)

    def flush(self) -> None:
        if self.down.is_set():
            raise SinkError("server closed the connection", retryable=True)

    def close(self) -> None:
        self.closed = True


def ev(i: int) -> StampedeEvent:
    return make_event("xwf.start", {"xwf.id": "w", "ts": float(i), "restart_count": 0})


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_an_outage_spools_every_workflow_then_drains_in_order(tmp_path: Path) -> None:
    """Three workflows on one server lane; the server is down through more failed attempts
    than the old lanes' budget (10), with 3 batches each in memory at most; all lands in order,
    a workflow's close waits for its spool, and the log has one "down" and one "back" line."""
    down = threading.Event()
    down.set()
    pool = SinkPool(local_lanes=1)
    try:
        sinks, sets = [], []
        for w in range(3):
            spool = SpoolSettings(str(tmp_path / f"wf{w}"), first_backoff=0.01, max_backoff=0.02)
            sink = ServerSink(f"wf{w}", down)
            sinks.append(sink)
            sets.append(pool.sink_set(f"/run{w}/x.dagman.out", f"wf{w}")([sink], spool))
        handles = [s.handles[0] for s in sets]
        assert len({h.lane for h in handles}) == 1
        with capture_logs() as logs:
            for n in range(200):
                for s in sets:
                    s.publish([ev(n * 2), ev(n * 2 + 1)])
                assert all(h.queued <= 4 for h in handles)  # memory stays bounded
            for s in sets:
                s.flush()  # returns during the outage: the spool holds it durably
            wait_for(lambda: all(h.policy.retries > 10 for h in handles))
            health = pool.health()
            assert [(h.name, h.state, h.workflows) for h in health] == [
                ("sql:postgresql://u@db/stampede", "down", 3)
            ]
            assert health[0].spooled == 3 * 400 and health[0].spooled_bytes > 0
            assert health[0].since is not None and health[0].permanent_failures == 0
            assert all(sink.stamps == [] for sink in sinks)
            assert all(s.undelivered == 400 for s in sets)
            closer = threading.Thread(target=sets[0].close)
            closer.start()  # an ended workflow waits for its events to be delivered
            time.sleep(0.3)
            assert closer.is_alive() and not handles[0].finished.is_set()
            down.clear()
            closer.join(30)
            assert not closer.is_alive() and sinks[0].closed and handles[0].finished.is_set()
            for s in sets[1:]:
                s.close()
        assert all(sink.stamps == [float(i) for i in range(400)] for sink in sinks)
        # closed deliveries leave the lane; their destination stays listed with its totals
        (ended,) = pool.health()
        assert (ended.name, ended.state, ended.workflows) == (health[0].name, "up", 0)
        assert (ended.spooled, ended.events_written) == (0, 1200)
        assert ended.retries >= health[0].retries > 30
        pool.keep_ended = 0.0  # ([service] keep_finished_seconds) nothing uses it any more:
        assert pool.health() == []  # the destination is no longer listed
        downs = [e for e in logs if e["event"].startswith("sink down")]
        backs = [e for e in logs if e["event"] == "sink is back"]
        assert len(downs) == 1 and len(backs) == 1, [e["event"] for e in logs]
        assert backs[0]["drained_events"] == 1200 and backs[0]["workflows"] == 3
        assert not list(tmp_path.rglob("*.seg"))  # every spool drained and removed
    finally:
        pool.close()


def test_a_service_stop_leaves_a_down_sinks_events_spooled(tmp_path: Path) -> None:
    down = threading.Event()
    down.set()
    pool = SinkPool(local_lanes=1)
    spool = SpoolSettings(str(tmp_path / "wf"), first_backoff=0.01, max_backoff=0.02)
    sink = ServerSink("wf", down)
    sinks = pool.sink_set("/run/x.dagman.out", "wf")([sink], spool)
    for n in range(10):
        sinks.publish([ev(n)])
    sinks.flush()
    closer = threading.Thread(target=sinks.close)
    closer.start()
    time.sleep(0.2)
    assert closer.is_alive()
    started = time.monotonic()
    pool.begin_close()  # service stop: no more waiting
    closer.join(10)
    assert not closer.is_alive() and time.monotonic() - started < 5
    assert sinks.undelivered == 10 and sink.stamps == []
    pool.close()
    assert list(tmp_path.rglob("*.seg"))  # left for the next start


async def test_workflows_waiting_for_delivery_hold_no_worker_thread(tmp_path: Path) -> None:
    """Many workflows ending during one outage: their waits must not starve the service's
    worker threads (which parse every other workflow's lines)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from monitord.daemon.monitor import MonitorConfig
    from monitord.service.workflows import ServiceMonitor

    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(2))
    down = threading.Event()
    down.set()
    pool = SinkPool(local_lanes=1)
    try:
        monitors, sinks = [], []
        for w in range(6):
            spool = SpoolSettings(str(tmp_path / f"wf{w}"), first_backoff=0.01, max_backoff=0.02)
            monitor = ServiceMonitor(
                MonitorConfig(str(tmp_path / f"wf{w}.dag.dagman.out")),
                watcher=SimpleNamespace(wait=None),  # type: ignore[arg-type]
                pool=pool,
                key=f"/run{w}",
            )
            sink = ServerSink(f"wf{w}", down)
            inner = monitor.monitor
            inner.sinks = inner.outputs.sink_set([sink], spool)
            inner.sinks.publish([ev(1), ev(2)])
            monitors.append(monitor)
            sinks.append(sink)
        closing = [asyncio.create_task(m.monitor.close()) for m in monitors]
        await asyncio.sleep(0.3)
        assert not any(task.done() for task in closing)  # all wait for their events
        assert await asyncio.wait_for(asyncio.to_thread(lambda: 42), 5) == 42  # threads free
        down.clear()
        await asyncio.wait_for(asyncio.gather(*closing), 30)
        assert all(sink.stamps == [1.0, 2.0] for sink in sinks)
    finally:
        pool.close()


class CountingSink(ServerSink):
    """A server sink keeping its own tallies, as the SQL sink does (``SQLSink.counters``)."""

    def __init__(self, wf: str, down: threading.Event, batches: int, rows: int) -> None:
        super().__init__(wf, down)
        self.counters = {"row_by_row_batches": batches, "rows_rejected": rows}
        self.capabilities = Capabilities(shares_engine=True, tallies=True)


def test_a_sinks_counters_reach_the_metrics_summed_per_destination() -> None:
    """Row-by-row fallbacks of two workflows writing to one server: one series in /metrics."""
    from monitord.service.metrics import render_metrics
    from monitord.service.status import ServiceSnapshot, from_json, to_json

    pool = SinkPool(local_lanes=1)
    try:
        down = threading.Event()
        sinks = [CountingSink("wf0", down, 1, 3), CountingSink("wf1", down, 2, 0)]
        sets = [pool.sink_set(f"/run{i}/x.dagman.out", f"wf{i}")([s]) for i, s in enumerate(sinks)]
        sinks[1].counters["rows_rejected"] += 4  # read at every look, not copied once
        (health,) = pool.health()
        assert (health.row_by_row_batches, health.rows_rejected) == (3, 7)
        snapshot = ServiceSnapshot(started_at=1.0, sinks=[health])
        assert to_json(from_json(to_json(snapshot))) == to_json(snapshot)
        text = render_metrics(snapshot)
        name = "sql:postgresql://u@db/stampede"
        assert f'monitord_sink_row_by_row_batches_total{{sink="{name}"}} 3.0' in text
        assert f'monitord_sink_rows_rejected_total{{sink="{name}"}} 7.0' in text
        for s in sets:
            s.close()
    finally:
        pool.close()
