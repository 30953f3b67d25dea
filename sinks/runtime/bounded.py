"""A delivery's memory queue under its bound: what waits, what the sink has in hand, what a
full queue does (room, drops), as one object the delivery holds.

:class:`~sinks.runtime.delivery.Delivery` owns a :class:`BoundedQueue` (composition): the
producer side asks it for room (:meth:`BoundedQueue.has_room`) or, under a dropping bound,
to cut a batch to fit (:meth:`BoundedQueue.make_room`); the executor side takes its head.
The policies themselves are the data and pure functions of :mod:`sinks.runtime.overflow`.
No lock of its own: the delivery calls it with its ``cond`` held.
"""

from __future__ import annotations

from collections import deque

import structlog

from sinks.runtime.items import Batch, _Flush, _Item
from sinks.runtime.overflow import DROP_LOG_EVERY, UNBOUNDED, QueueBound, has_room, make_room

log = structlog.get_logger("sinks.runtime.delivery")


class BoundedQueue:
    """One sink's memory queue: batches and flush requests in order, bounded by ``bound``
    (in events, with its overflow policy) or, without a bound in events, ``max_queue``
    batches.  ``in_hand``: the queued batch the sink is writing (never counted or dropped);
    ``head_first``: a spooling bound spilled past the head, which goes before the spool;
    ``dropped``: events a dropping bound lost."""

    def __init__(self, name: str, bound: QueueBound = UNBOUNDED, max_queue: int = 4) -> None:
        self.name = name  # the sink's, for the drop warning
        self.bound = bound
        self.max_queue = max_queue
        self.items: deque[_Item] = deque()
        self.in_hand: Batch | None = None
        self.head_first = False
        self.dropped = 0

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def batches(self) -> int:
        """Batches waiting in memory."""
        return sum(1 for item in list(self.items) if isinstance(item, Batch))

    def pending(self) -> list[Batch]:
        """The batches waiting in memory (a copy)."""
        return [item for item in self.items if isinstance(item, Batch)]

    def events(self) -> int:
        """Events in the batches waiting (the batch in hand included)."""
        return sum(item.count for item in self.items if isinstance(item, Batch))

    def has_room(self, batch: Batch) -> bool:
        """Whether ``batch`` joins the queue now (else it waits, or a spooling bound spools
        it): :func:`sinks.runtime.overflow.has_room`."""
        return has_room(self.bound, self.items, self.in_hand, batch, self.max_queue)

    def make_room(self, batch: Batch) -> Batch | None:
        """A dropping bound: cut the batch or the oldest waiting events (counted, logged)."""
        kept, lost = make_room(self.bound, self.items, self.in_hand, batch)
        if lost:
            before = self.dropped
            self.dropped += lost
            if before == 0 or before // DROP_LOG_EVERY != self.dropped // DROP_LOG_EVERY:
                log.warning(
                    "buffer full, events dropped",
                    sink=self.name,
                    policy=self.bound.overflow,
                    dropped=self.dropped,
                )
        return kept

    def take_head(self, batch: Batch) -> None:
        """``batch`` (the head) is written: it leaves the queue, unless it was abandoned
        meanwhile (:meth:`abandon_head`)."""
        if self.items and self.items[0] is batch:
            self.items.popleft()
        self.head_first = False

    def abandon_head(self) -> bool:
        """The sink keeps the batch in hand (its executor is stuck in it): True when there
        is one, now out of the queue."""
        head = self.in_hand
        if head is not None and self.items and self.items[0] is head:
            self.items.popleft()
            self.head_first = False
            return True
        return False

    def release_waiters(self) -> bool:
        """Empty the queue, answering its flush requests; False when it was empty already."""
        if not self.items:
            return False
        for item in self.items:
            if isinstance(item, _Flush):
                item.done.set()
        self.items.clear()
        return True
