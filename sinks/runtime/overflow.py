"""What a delivery's memory queue does when it is full: the overflow policies, as data.

A queue bounded in events (:class:`QueueBound`) either blocks the producer (``block``: the
back-pressure every native sink gets), loses events as upstream Pegasus's plugin buffer does
(``drop-newest``, ``drop-oldest``: counted by the delivery), or sends what does not fit to the
delivery's durable spool (``spool``: nothing lost, the producer never waits).  The batch the
executor has in hand is never counted or dropped: the sink has taken it.  Pure functions on
the queue, no lock of their own: the delivery's queue
(:class:`sinks.runtime.bounded.BoundedQueue`) calls them with the delivery's ``cond`` held.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from monitord.core.events import StampedeEvent
from sinks.runtime.items import Batch, _Item

BLOCK = "block"
DROP_NEWEST = "drop-newest"
DROP_OLDEST = "drop-oldest"
SPOOL = "spool"
OVERFLOWS = (BLOCK, DROP_NEWEST, DROP_OLDEST, SPOOL)
DROP_LOG_EVERY = 1000  # a drop is logged at the 1st and every 1000th event dropped


@dataclass(frozen=True)
class QueueBound:
    """``events``: how many events may wait in memory (<= 0: no bound in events, only the
    delivery's ``max_queue`` batches); ``overflow``: what a full queue does."""

    events: int = 0
    overflow: str = BLOCK

    def __post_init__(self) -> None:
        if self.overflow not in OVERFLOWS:
            raise ValueError(f"unknown overflow policy {self.overflow!r}")

    @property
    def drops(self) -> bool:
        return self.events > 0 and self.overflow in (DROP_NEWEST, DROP_OLDEST)

    @property
    def spools(self) -> bool:
        return self.events > 0 and self.overflow == SPOOL


UNBOUNDED = QueueBound()


def waiting_events(items: deque[_Item], in_hand: Batch | None) -> int:
    """Events queued in memory, the batch in hand not counted."""
    return sum(item.count for item in items if isinstance(item, Batch) and item is not in_hand)


def has_room(
    bound: QueueBound, items: deque[_Item], in_hand: Batch | None, batch: Batch, max_queue: int
) -> bool:
    """Whether ``batch`` joins the queue now (else it waits, or a spooling bound spools it).

    ``block`` without a bound in events: at most ``max_queue`` batches (the native sinks'
    back-pressure); any other policy without a bound: always (upstream's ``queue_size <= 0``,
    unbounded); a dropping bound: always (the batch was cut to fit); a spooling one: while the
    events wait within the bound (a batch bigger than the bound fits an empty queue)."""
    if bound.events <= 0:
        return bound.overflow != BLOCK or len(items) < max_queue
    if bound.drops:
        return True
    waiting = waiting_events(items, in_hand)
    return waiting == 0 or waiting + batch.count <= bound.events


def make_room(
    bound: QueueBound, items: deque[_Item], in_hand: Batch | None, batch: Batch
) -> tuple[Batch | None, int]:
    """A drop policy: what of ``batch`` joins ``items`` (None: nothing) and how many events are
    lost.  ``drop-newest`` keeps the queue and cuts the batch; ``drop-oldest`` takes the batch
    (its newest ``bound.events`` at most) and cuts the oldest waiting events (in place)."""
    limit = bound.events
    room = limit - waiting_events(items, in_hand)
    if batch.count <= room:
        return batch, 0
    events = batch.decoded()
    if bound.overflow == DROP_NEWEST:
        keep = max(0, room)
        return (_part(events[:keep]) if keep else None), batch.count - keep
    lost = 0
    if batch.count > limit:
        lost = batch.count - limit
        batch = _part(events[-limit:])
    need = waiting_events(items, in_hand) + batch.count - limit
    kept: list[_Item] = []
    for item in items:
        if need > 0 and isinstance(item, Batch) and item is not in_hand:
            if item.count <= need:
                need -= item.count
                lost += item.count
                continue
            item = _part(item.decoded()[need:])
            lost += need
            need = 0
        kept.append(item)
    items.clear()
    items.extend(kept)
    return batch, lost


def _part(events: Sequence[StampedeEvent]) -> Batch:
    """A batch of what is left (no marks: a dropping queue's sink keeps none)."""
    return Batch(len(events), events=list(events))
