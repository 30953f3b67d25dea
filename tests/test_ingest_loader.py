"""The ingest's database writes on the delivery runtime (monitord/ingest/loader.py): each
writer a SinkWorker with the runtime's one RECONNECT policy; a lane's batch is settled (so
acknowledged) only once committed; a database outage is retried for ever, one warning and one
"back" line for all writers; a broker failure fails the batch, never the writer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Iterator
from typing import Any, cast

import pytest
from structlog.testing import capture_logs

from monitord.core.events import make_event
from monitord.ingest.batch import Item
from monitord.ingest.loader import Load, writers
from monitord.ingest.metrics import IngestStats
from monitord.ingest.store import Store
from sinks.runtime.base import SinkError
from sinks.runtime.executor import Executor
from sinks.runtime.policy import RECONNECT

pytestmark = pytest.mark.quick


class FlakyStore:
    """A database that refuses its first ``failures`` calls, commits or pings (retryable: an
    outage that lasts that many attempts), then answers."""

    display_url = "postgresql://u:***@h/central"

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.committed: list[list[str]] = []
        self.forgot = 0
        self.pings = 0
        self.held = False  # inside reading()
        self.reads: list[bool] = []  # per read: whether it was inside reading()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        self.held = True
        try:
            yield
        finally:
            self.held = False

    def marks(self, names: Iterable[str]) -> dict[str, Any]:
        self.reads.append(self.held)
        return {}

    def streams(self, keys: Iterable[Any]) -> dict[Any, Any]:
        self.reads.append(self.held)
        return {}

    def workflows(self, uuids: Iterable[str]) -> set[str]:
        return set(uuids)

    def _down(self) -> None:
        if self.failures:
            self.failures -= 1
            raise SinkError("connection refused", retryable=True)

    def ping(self) -> None:
        self._down()
        self.pings += 1

    def commit(self, events: list[Any], marks: list[Any], streams: list[Any]) -> None:
        self._down()
        self.committed.append([str(e.xwf_id) for e in events])

    def forget_caches(self) -> None:
        self.forgot += 1


def item(uuid: str, reason: str | None = None) -> Item:
    event = make_event("wf.plan", {"xwf.id": uuid, "ts": 1, "root.xwf.id": uuid})
    return Item(tag=None, routing_key="k", body=b"", user="u", event=event, reason=reason)


async def _no_dead_letters(items: list[Item], published: set[int]) -> None:
    published.update(id(i) for i in items)


def test_a_database_outage_is_waited_out_by_the_runtime_once_for_all_writers() -> None:
    stores = [FlakyStore(failures=2), FlakyStore(failures=2)]
    stats = IngestStats()
    workers = writers(cast(list[Store], stores), _no_dead_letters, stats)
    assert all(isinstance(w, Executor) and w.policy.policy is RECONNECT for w in workers)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loads = [Load([item(f"wf{i}")], loop, loop.create_future()) for i in range(2)]
        for worker, load in zip(workers, loads, strict=True):
            worker.start()
            worker.put_batch(load.batch())
        await asyncio.sleep(0.2)
        assert stats.db_down_since is not None and stats.db_error == "connection refused"
        assert not any(load.done.done() for load in loads), "settled before its commit"
        await asyncio.wait_for(asyncio.gather(*(load.done for load in loads)), 30)
        for worker in workers:
            worker.interrupt()
            await asyncio.to_thread(worker.join)

    with capture_logs() as logs:
        asyncio.run(main())
    assert [s.committed for s in stores] == [[["wf0"]], [["wf1"]]]
    assert [s.forgot for s in stores] == [1, 1]  # its id caches dropped after the failed batch
    lines = [(e["log_level"], e["event"]) for e in logs if e["event"].startswith("ingest:")]
    assert lines == [
        ("warning", "ingest: database unavailable, consumption paused"),
        ("info", "ingest: database back"),
    ]
    assert stats.db_down_since is None and stats.db_error is None
    assert [(w.health().retries, w.health().state, w.failed) for w in workers] == [
        (2, "up", False),
        (2, "up", False),
    ]


def test_an_outage_seen_by_one_writer_is_said_back_only_once_the_database_answers() -> None:
    """One writer alone in an outage of several attempts: after its failed batch the runtime
    flushes before writing again, and takes a flush that returns for the sink being back.  The
    ingest's flush asks the database; a no-op said "database back" at each first retry in the
    middle of the outage, and each next attempt "unavailable" again (the flaky outage test of
    issue 30: two warnings for one outage)."""
    store = FlakyStore(failures=3)
    stats = IngestStats()
    (worker,) = writers([cast(Store, store)], _no_dead_letters, stats)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        load = Load([item("wf0")], loop, loop.create_future())
        worker.start()
        worker.put_batch(load.batch())
        await asyncio.wait_for(load.done, 60)
        worker.interrupt()
        await asyncio.to_thread(worker.join)

    with capture_logs() as logs:
        asyncio.run(main())
    lines = [(e["log_level"], e["event"]) for e in logs if e["event"].startswith("ingest:")]
    assert lines == [
        ("warning", "ingest: database unavailable, consumption paused"),
        ("info", "ingest: database back"),
    ]
    assert store.committed == [["wf0"]] and store.pings >= 1 and store.forgot == 1
    assert store.reads and all(store.reads)  # a batch's reads on one connection: reading()
    assert (worker.health().retries, worker.health().state) == (3, "up")
    assert stats.db_down_since is None and stats.db_error is None


def test_a_broker_failure_fails_the_batch_not_the_writer_and_an_abandoned_one_waits() -> None:
    store = FlakyStore()
    stats = IngestStats()

    async def broker_gone(items: list[Item], published: set[int]) -> None:
        raise ConnectionError("the connection to the broker closed")

    (worker,) = writers([cast(Store, store)], broker_gone, stats)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        worker.start()
        refused = Load([item("wf0", reason="undecodable")], loop, loop.create_future())
        worker.put_batch(refused.batch())
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(refused.done, 30)
        gone = Load([item("wf1")], loop, loop.create_future(), abandoned=True)
        fine = Load([item("wf2")], loop, loop.create_future())
        worker.put_batch(gone.batch())
        worker.put_batch(fine.batch())
        await asyncio.wait_for(fine.done, 30)
        assert not gone.done.done()  # its lane is gone: the broker delivers it again
        worker.interrupt()
        await asyncio.to_thread(worker.join)

    asyncio.run(main())
    assert store.committed == [["wf2"]] and not worker.failed


def test_a_lanes_batch_carries_its_events_and_anything_else_is_refused_by_name() -> None:
    """Load.batch hands the runtime the lane's decoded events (a refused message has none),
    carrying the Load; a batch not from a lane is a permanent SinkError, not an
    AttributeError deep in the writer."""
    loop = asyncio.new_event_loop()
    try:
        load = Load([item("wf0"), item("wf1", reason="undecodable")], loop, loop.create_future())
        batch = load.batch()
        assert batch.count == 2 and [str(e.xwf_id) for e in batch.decoded()] == ["wf0", "wf1"]
        load.items[1].event = None  # as the consumer leaves a message it could not decode
        assert [str(e.xwf_id) for e in Load(load.items, loop, load.done).batch().decoded()] == [
            "wf0"
        ]
        (writer,) = writers(cast(list[Store], [FlakyStore()]), _no_dead_letters, IngestStats())
        sink: Any = writer.sink  # type: ignore[attr-defined]
        with pytest.raises(SinkError, match="not from an ingest lane") as raised:
            sink.write_batch([load.items[0].event])
        assert not raised.value.retryable
    finally:
        loop.close()
