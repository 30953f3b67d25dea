"""Between a delivery's memory queue and its spool: what goes to disk, and the drain back.

A delivery with spool settings sends batches to its spool (:class:`SpoolSide`) when the
sink is down (the queue is spilled, in order, freeing the producer), when a spooling bound
(:mod:`sinks.runtime.overflow`) is full, or while the spool still holds older batches; the
executor then drains the spool, oldest first, one batch per step
(:meth:`SpoolSide.deliver_head`), before what waits in memory.  The delivery's ``cond`` is
held around every call but :meth:`SpoolSide.deliver_head`'s sink calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import structlog

from monitord.core.events import StampedeEvent
from sinks.runtime.bounded import BoundedQueue
from sinks.runtime.codec import decode_marked
from sinks.runtime.items import Batch
from sinks.runtime.marks import Marks
from sinks.runtime.spool.held import HeldSpool

log = structlog.get_logger("sinks.runtime.delivery")


class SpoolSide:
    """One delivery's spool seen from its queue: ``notify`` wakes the producers and the
    executor (``cond`` held)."""

    def __init__(
        self,
        held: HeldSpool,
        queue: BoundedQueue,
        cond: threading.Condition,
        notify: Callable[[], None],
    ) -> None:
        self.held = held
        self.queue = queue
        self._cond = cond
        self._notify = notify

    def takes_new(self, down: bool) -> bool:
        """New batches go to the spool: it holds older ones, or the sink is down."""
        if not self.held.ready or self.queue:
            return False
        return down or self.held.backlog

    def append(self, batch: Batch) -> bool:
        return self.held.append(batch.count, batch.encoded())

    def overflows(self, batch: Batch) -> bool:
        """A spooling bound: ``batch`` goes to the spool, because the queue is full (what
        waits in memory is spilled first, the batch in hand kept) or the spool already holds
        newer batches than that one."""
        queue = self.queue
        if not queue.bound.spools:
            return False
        if not queue.head_first and queue.has_room(batch):
            return False
        if not self.held.ensure():
            return False
        if not queue.head_first:
            self.spill(keep_head=True)
        return True

    def spill_waiting(self) -> bool:
        """A spooling bound: make what the sink has not taken durable now (a flush that would
        wait for a slow sink); False when there is no spool to take it."""
        if not self.queue.bound.spools or not self.queue or not self.held.ensure():
            return False
        self.spill(keep_head=True)
        return True

    def spill(self, *, keep_head: bool = False) -> None:
        """The sink is down: move the queue into the spool, in order, freeing the producer.
        ``keep_head``: a first batch stays in memory and is written before the spool."""
        if not self.held.ensure():
            return
        items = self.queue.items
        keep = 1 if keep_head and items and isinstance(items[0], Batch) else 0
        if keep:
            self.queue.head_first = True
        if len(items) > keep:
            log.debug(
                "the queue goes to the spool",
                sink=self.queue.name,
                batches=sum(1 for i in items if isinstance(i, Batch)) - keep,
            )
        while len(items) > keep:
            item = items[keep]
            if isinstance(item, Batch):
                if not self.append(item):
                    return  # the rest stays in memory, after what the spool holds
            else:
                self.held.sync()
                item.done.set()
            del items[keep]
        self.held.sync()
        self._notify()

    def deliver_head(
        self,
        write: Callable[[Sequence[StampedeEvent], Marks | None], None],
        flush: Callable[[], None],
    ) -> int:
        """Write the spool's oldest batch (``cond`` not held) and forget it once the sink made
        it durable (``flush``); the events delivered (0: the head was unreadable, skipped)."""
        spool = self.held.spool
        assert spool is not None
        head = spool.head()
        if head is None:  # counted but unreadable (damaged frames were skipped)
            with self._cond:
                spool.forget_damaged()
            return 0
        count, data = head
        began = time.perf_counter()
        write(*decode_marked(data))
        flush()  # durable in the sink before the spool forgets it
        spool.commit()
        log.debug(
            "spooled batch delivered",
            sink=self.queue.name,
            events=count,
            seconds=round(time.perf_counter() - began, 4),
            spooled=spool.events,
        )
        return count
