"""One executor interface: a thread and a service lane run the same delivery, and report the
same typed health record (``sinks.runtime.executor``).

Each test runs against both executors: events reach the sink in order, a down sink's
batches wait in the spool and arrive once it is back, and the health record says so the
same way (state, spooled, masked last error).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent, make_event
from sinks.plugins.host import PluginHost, SinksAndPlugins
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities
from sinks.runtime.executor import Executor
from sinks.runtime.executor import SinkSet as AnySinkSet
from sinks.runtime.health import SinkHealth
from sinks.runtime.lanes import LaneHandle, SinkLane
from sinks.runtime.runner import SinkWorker
from sinks.runtime.sinkset import SharedSinkSet, SinkSet
from sinks.runtime.spool import SpoolSettings
from tests.event_check import wire

SECRET = "s3cr3t-pw"


class FileSink:
    """Appends each event's stamp to a file; down, with an error naming a URL with a
    password, while the flag file exists."""

    def __init__(self, directory: str) -> None:
        self.name = "recorder"
        self.display_url = f"file://{directory}"
        self.destination = f"recorder://u:{SECRET}@{directory}"  # what it writes to
        self.out = os.path.join(directory, "out")
        self.flag = os.path.join(directory, "down")

    def _check(self) -> None:
        if os.path.exists(self.flag):
            raise SinkError(f"postgresql://u:{SECRET}@db/x: connection refused", retryable=True)

    def open(self) -> None:
        self._check()

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self._check()
        with open(self.out, "a") as fh:
            fh.writelines(f"{wire(e)['ts']}\n" for e in events)

    def flush(self) -> None:
        self._check()

    def close(self) -> None:
        pass


def ev(i: int) -> StampedeEvent:
    return make_event("xwf.start", {"xwf.id": "w", "ts": float(i), "restart_count": 0})


def written(sink: FileSink) -> list[float]:
    if not os.path.exists(sink.out):
        return []
    with open(sink.out) as fh:
        return [float(line) for line in fh]


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


Make = Callable[[FileSink, SpoolSettings], Executor]


def _lane(lanes: list[SinkLane]) -> Make:
    def make(sink: FileSink, spool: SpoolSettings) -> Executor:
        lane = SinkLane("test")
        lanes.append(lane)
        return LaneHandle(sink, lane, "wf-1", spool)

    return make


@pytest.fixture(params=["thread", "lane"])
def make(request: pytest.FixtureRequest) -> Iterator[Make]:
    lanes: list[SinkLane] = []
    makers: dict[str, Make] = {
        "thread": lambda sink, spool: SinkWorker(sink, spool=spool),
        "lane": _lane(lanes),
    }
    yield makers[request.param]
    for lane in lanes:
        lane.stop()


def spool_of(tmp_path: Path) -> SpoolSettings:
    return SpoolSettings(str(tmp_path / "spool"), first_backoff=0.02, max_backoff=0.1)


def test_every_executor_delivers_in_order_and_reports_the_same_record(
    make: Make, tmp_path: Path
) -> None:
    sink = FileSink(str(tmp_path))
    executor = make(sink, spool_of(tmp_path))
    assert isinstance(executor, Executor)
    executor.start()
    for n in range(5):
        executor.put([ev(n * 3 + k) for k in range(3)])
    executor.flush()
    assert written(sink) == [float(i) for i in range(15)]
    wait_for(lambda: executor.health().events_written == 15)  # (a child reports it)
    health = executor.health()
    assert isinstance(health, SinkHealth)
    assert (health.name, health.state, health.spooled, health.failures) == ("recorder", "up", 0, 0)
    assert health.destination == f"recorder://u:***@{tmp_path}"  # declared, password masked
    executor.stop()
    assert not executor.failed and executor.health().events_written == 15


def test_every_executor_spools_a_down_sink_and_says_so_without_the_password(
    make: Make, tmp_path: Path
) -> None:
    sink = FileSink(str(tmp_path))
    Path(sink.flag).touch()
    executor = make(sink, spool_of(tmp_path))
    executor.start()
    for n in range(4):
        executor.put([ev(n * 2), ev(n * 2 + 1)])
    executor.flush()  # returns during the outage: the spool holds the batches durably
    wait_for(lambda: executor.health().spooled == 8)
    health = executor.health()
    assert health.state == "down" and health.since is not None and health.retries >= 1
    assert health.last_error is not None and "connection refused" in health.last_error
    assert SECRET not in health.last_error and "u:***@db" in health.last_error
    assert written(sink) == []
    os.unlink(sink.flag)
    wait_for(lambda: executor.health().state == "up" and executor.health().spooled == 0)
    executor.put([ev(8)])
    executor.flush()
    executor.stop()
    assert written(sink) == [float(i) for i in range(9)]
    assert not executor.failed


class DurableSink(FileSink):
    """A sink whose writes are durable on return (``Capabilities.durable_writes``, as SQL's
    and AMQP's): its flush, which would do nothing, only counts its calls."""

    capabilities = Capabilities(durable_writes=True)

    def __init__(self, directory: str) -> None:
        super().__init__(directory)
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def test_a_sink_durable_on_write_is_never_flushed_nor_taken_as_back_by_a_flush(
    make: Make, tmp_path: Path
) -> None:
    """A write fails: the runtime calls no flush (before, the no-op flush after the failed
    write was taken for the sink's answer: "sink answers again" while it was down, and the
    backoff started over); each retry's attempt is one more, until a write works."""
    sink = DurableSink(str(tmp_path))
    executor = make(sink, spool_of(tmp_path))
    executor.start()
    executor.put([ev(0)])
    executor.flush()
    Path(sink.flag).touch()
    with capture_logs() as logs:
        executor.put([ev(1)])
        wait_for(lambda: executor.health().attempts >= 4)
        executor.flush()  # a flush request during the outage: the batch is spooled
        while_down = [x["event"] for x in logs if x["event"].startswith("sink answers")]
        os.unlink(sink.flag)
        wait_for(lambda: executor.health().state == "up" and executor.health().spooled == 0)
    executor.stop()
    assert while_down == []
    attempts = [x["attempt"] for x in logs if x["event"] == "sink call failed: decision"]
    assert len(attempts) >= 4 and attempts == list(range(1, len(attempts) + 1)), attempts
    assert sink.flushes == 0
    assert written(sink) == [0.0, 1.0]


def test_the_three_sink_sets_share_one_interface(tmp_path: Path) -> None:
    """(mypy checks the list's type; the run checks each publishes to its sinks.)"""
    sinks = [FileSink(str(tmp_path / name)) for name in ("a", "b", "c")]
    for sink in sinks:
        os.makedirs(os.path.dirname(sink.out))
    lane = SinkLane("test")
    handle = LaneHandle(sinks[1], lane, "wf", None)
    handle.start()  # (the service's pool starts the handles it makes)
    try:
        sets: list[AnySinkSet] = [
            SinkSet([sinks[0]]),
            SharedSinkSet([handle]),
            SinksAndPlugins(SinkSet([sinks[2]]), PluginHost([], [])),
        ]
        for sink_set in sets:
            assert isinstance(sink_set, AnySinkSet)
            sink_set.start()
            sink_set.publish([ev(0), ev(1)])
            sink_set.flush()
            assert [h.name for h in sink_set.health()] == ["recorder"]
            sink_set.close()
    finally:
        lane.stop()
    assert [written(s) for s in sinks] == [[0.0, 1.0]] * 3


class GatedSink(FileSink):
    """Its first write waits for ``gate`` (a batch in hand when the interrupt comes)."""

    def __init__(self, directory: str) -> None:
        super().__init__(directory)
        self.writing = threading.Event()
        self.gate = threading.Event()

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self.writing.set()
        assert self.gate.wait(30)
        super().write_batch(events)


def test_an_interrupt_ends_after_the_batch_in_hand_dropping_the_queue(
    make: Make, tmp_path: Path
) -> None:
    """An interrupted replay (issue 29): the batch being written completes, the queued ones
    are dropped (not spooled: the rerun rewrites everything), a producer waiting on the full
    queue is let go at once, and nothing is logged as lost."""
    sink = GatedSink(str(tmp_path))
    executor = make(sink, spool_of(tmp_path))
    executor.start()
    executor.put([ev(0), ev(1)])
    assert sink.writing.wait(30)
    for n in range(1, 4):  # with the batch in hand, the queue is full (4)
        executor.put([ev(n * 2), ev(n * 2 + 1)])
    blocked = threading.Thread(target=executor.put, args=([ev(10)],))
    blocked.start()
    time.sleep(0.05)
    assert blocked.is_alive()  # back-pressure
    with capture_logs() as logs:
        executor.interrupt()
        blocked.join(5)
        assert not blocked.is_alive()
        executor.put([ev(11)])  # returns at once too
        sink.gate.set()
        executor.join()
    assert written(sink) == [0.0, 1.0]
    assert executor.health().spooled == 0 and executor.health().left_behind == 6
    assert not [e for e in logs if e["log_level"] in ("error", "warning")], logs
