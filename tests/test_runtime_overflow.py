"""The overflow options of the runtime's one queue (``sinks/runtime/overflow.py``): a bound in
events, and what a full queue does (block, drop-newest, drop-oldest, spool), with the batch in
hand never counted, cut or reordered; and the idle tick a sink can declare.

What the event plugins build on (tests/test_plugins_contract.py runs them through the
plugin host); here with plain sinks, so the rules are the runtime's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import pytest

from monitord.core.events import StampedeEvent, make_event
from sinks.runtime.base import SinkError
from sinks.runtime.bounded import BoundedQueue
from sinks.runtime.capabilities import Capabilities
from sinks.runtime.items import Batch, _Item
from sinks.runtime.overflow import QueueBound, make_room
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import SpoolSettings
from tests.event_check import wire

pytestmark = pytest.mark.quick


def ev(i: int) -> StampedeEvent:
    return make_event("job.info", {"xwf.id": "W", "job.id": f"j{i}", "ts": float(i)})


def batch(*ids: int) -> Batch:
    events = [ev(i) for i in ids]
    return Batch(len(events), events=events)


def stamps(items: Sequence[_Item]) -> list[list[int]]:
    return [[int(wire(e)["ts"]) for e in i.decoded()] for i in items if isinstance(i, Batch)]


@pytest.mark.parametrize(
    ("overflow", "kept", "queue", "lost"),
    [
        ("drop-newest", [4], [[0], [1, 2, 3], [4]], 2),
        ("drop-oldest", [4, 5, 6], [[0], [3], [4, 5, 6]], 2),
    ],
)
def test_make_room_cuts_at_event_granularity_and_spares_the_batch_in_hand(
    overflow: str, kept: list[int], queue: list[list[int]], lost: int
) -> None:
    in_hand = batch(0)
    items: deque[_Item] = deque([in_hand, batch(1, 2, 3)])
    got, dropped = make_room(QueueBound(4, overflow), items, in_hand, batch(4, 5, 6))
    assert got is not None and stamps([got]) == [kept] and dropped == lost
    if got is not items[-1]:
        items.append(got)
    assert stamps(items) == queue
    assert items[0] is in_hand


def test_a_batch_bigger_than_the_bound_keeps_its_newest_under_drop_oldest() -> None:
    items: deque[_Item] = deque([batch(0)])
    got, dropped = make_room(QueueBound(2, "drop-oldest"), items, None, batch(1, 2, 3))
    assert got is not None and stamps([got]) == [[2, 3]] and dropped == 2 and not items


class Gated:
    """Records each event's stamp; every write waits for ``gate``; fails once if ``fail``."""

    def __init__(self, *, fail_first: bool = False, ticks: float = 0.0) -> None:
        self.name = "gated"
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.seen: list[int] = []
        self.fail_first = fail_first
        self.ticks = 0
        self.capabilities = Capabilities(ticks=ticks)

    def open(self) -> None: ...

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self.entered.set()
        self.gate.wait()
        if self.fail_first:
            self.fail_first = False
            raise SinkError("child died", retryable=True)
        self.seen += [int(wire(e)["ts"]) for e in events]

    def tick(self) -> None:
        self.ticks += 1

    def flush(self) -> None: ...

    def close(self) -> None: ...


def _wait(cond, seconds: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.parametrize("fail_first", [False, True])
def test_spool_overflow_never_blocks_and_keeps_the_order(fail_first: bool, tmp_path: Path) -> None:
    """The queue is full behind a batch in hand: what waits and what comes go to the spool,
    the producer never waits; the batch in hand goes first even when it fails and is retried
    (a process-isolated plugin's child dying), then the spool, in order."""
    sink = Gated(fail_first=fail_first)
    spool = SpoolSettings(root=str(tmp_path / "spool"), first_backoff=0.05, max_backoff=0.1)
    worker = SinkWorker(sink, spool=spool, bound=QueueBound(4, "spool"))
    worker.start()
    worker.put([ev(0), ev(1)])
    assert sink.entered.wait(10)
    began = time.monotonic()
    for i in range(1, 20):
        worker.put([ev(2 * i), ev(2 * i + 1)])
    assert time.monotonic() - began < 2, "the producer waited"
    assert worker.spooled > 0 and worker.health().state == "draining"
    sink.gate.set()
    _wait(lambda: len(sink.seen) >= 40 and not worker.spooled)
    worker.stop()
    assert sink.seen == list(range(40))
    assert worker.health().retries == (1 if fail_first else 0)
    assert worker.health().state == "up"


@pytest.mark.parametrize("overflow", ["drop-newest", "drop-oldest"])
def test_a_dropping_queue_never_blocks_and_counts(overflow: str) -> None:
    sink = Gated()
    worker = SinkWorker(sink, bound=QueueBound(3, overflow))
    worker.start()
    worker.put([ev(0)])
    assert sink.entered.wait(10)
    for i in range(1, 10):  # nine batches of one: far more than max_queue (4) too
        worker.put([ev(i)])
    assert worker.health().dropped == 6
    sink.gate.set()
    worker.stop()
    assert sink.seen == ([0, 1, 2, 3] if overflow == "drop-newest" else [0, 7, 8, 9])


def test_the_queue_handed_to_a_delivery_is_the_one_it_bounds_and_counts_with() -> None:
    """Composition: a delivery holds the queue it is given; that queue's bound decides the
    drops, its count is the delivery's health, and its head leaves only once written."""
    queue = BoundedQueue("gated", QueueBound(3, "drop-oldest"))
    sink = Gated()
    worker = SinkWorker(sink, queue=queue)
    assert worker.queue is queue
    worker.start()
    worker.put([ev(0)])
    assert sink.entered.wait(10)
    assert queue.in_hand is not None and stamps(queue.pending()) == [[0]]
    for i in range(1, 6):
        worker.put([ev(i)])
    assert queue.dropped == worker.health().dropped == 2
    assert stamps(queue.pending()) == [[0], [3], [4], [5]]  # the batch in hand never dropped
    sink.gate.set()
    worker.stop()
    assert sink.seen == [0, 3, 4, 5] and not queue


def test_a_dropping_queue_retries_a_failing_sink_for_ever() -> None:
    """It never holds the producer, so the memory-only retry budget does not apply: a
    process-isolated plugin whose child keeps dying is retried, not disabled."""
    fails = [True, True]

    class Failing(Gated):
        def write_batch(self, events: Sequence[StampedeEvent]) -> None:
            if fails:
                fails.pop()
                raise SinkError("child died", retryable=True)
            super().write_batch(events)

    sink = Failing()
    sink.gate.set()
    # retries=0: a memory-only queue that can hold its producer gives up at the first failure
    worker = SinkWorker(sink, retries=0, bound=QueueBound(3, "drop-newest"))
    worker.start()
    worker.put([ev(0)])
    _wait(lambda: sink.seen == [0], 20)
    worker.stop()
    assert sink.seen == [0] and not worker.failed and worker.health().retries == 2


def test_an_unbounded_queue_still_blocks_the_producer() -> None:
    """Native sinks keep their back-pressure: the bound is an option, not a new default."""
    sink = Gated()
    worker = SinkWorker(sink, max_queue=2)
    worker.start()
    worker.put([ev(0)])
    assert sink.entered.wait(10)
    worker.put([ev(1)])  # the queue: the batch in hand and this one
    blocked = threading.Thread(target=worker.put, args=([ev(2)],), daemon=True)
    blocked.start()
    blocked.join(0.5)
    assert blocked.is_alive(), "a full unbounded queue must hold the producer"
    sink.gate.set()
    blocked.join(10)
    worker.stop()
    assert sink.seen == [0, 1, 2]


@pytest.mark.parametrize("overflow", ["drop-newest", "drop-oldest", "spool"])
def test_a_policy_without_a_bound_never_blocks_nor_drops(overflow: str) -> None:
    """Upstream's ``queue_size <= 0``: unbounded, whatever the policy."""
    sink = Gated()
    worker = SinkWorker(sink, max_queue=2, bound=QueueBound(0, overflow))
    worker.start()
    worker.put([ev(0)])
    assert sink.entered.wait(10)

    def put_nine() -> None:
        for i in range(1, 10):
            worker.put([ev(i)])

    putter = threading.Thread(target=put_nine, daemon=True)
    putter.start()
    putter.join(5)
    assert not putter.is_alive(), "the producer waited"
    sink.gate.set()
    worker.stop()
    assert sink.seen == list(range(10)) and worker.health().dropped == 0


def test_a_ticking_sink_is_opened_at_once_and_ticked_while_idle() -> None:
    sink = Gated(ticks=0.05)
    sink.gate.set()
    worker = SinkWorker(sink)
    worker.start()
    _wait(lambda: sink.ticks >= 3, 10)
    assert sink.ticks >= 3, "no tick without events"
    worker.stop()
    after = sink.ticks
    time.sleep(0.2)
    assert sink.ticks == after, "a tick after the stop"
