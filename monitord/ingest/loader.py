"""The ingest's database writes as a sink of the delivery runtime: one :class:`LoadSink` per
database writer, each on a :class:`~sinks.runtime.runner.SinkWorker` (its thread, its
:class:`~sinks.runtime.delivery.Delivery`, the runtime's one retry policy ``RECONNECT``).

A lane hands its batch over as a :class:`Load` and acknowledges it only once the sink has
committed it (:meth:`Load.settle`, which the lane awaits).  The sink plans the batch, has its
refused messages dead-lettered on the event loop (published with confirms before anything is
committed), and commits the rest with the producers' marks in one transaction.  What the
runtime does not decide is kept here, because it is the ingest's, not a delivery's:

* a mark moved by another process (``MarkMoved``) is not a failure: the batch is planned
  again from the database at once;
* a batch the database refuses (a non-retryable error) is split: each message in its own
  transaction, a refused one dead-lettered and its marks moved past it; every other database
  error is retryable for the runtime, which waits it out for ever (``held_upstream``: the
  broker keeps the batch unacknowledged meanwhile, so nothing needs a spool);
* a dead letter the broker did not confirm (the connection went) fails the lane's batch, not
  the sink: the lane's session starts over and the broker delivers the batch again;
* a batch whose lane ended meanwhile (:attr:`Load.abandoned`) is not written: the broker
  delivers it again to the next session, as before there was a runtime.

The database's outage is one warning and one "back" line for all writers
(:class:`DatabaseReporter`), and ``/healthz`` says ``database down`` meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from monitord.ingest.batch import Item, plan, stream_key
from monitord.ingest.metrics import IngestStats
from monitord.ingest.store import MarkMoved, MarkUpdate, Store
from sinks.runtime.base import SinkError
from sinks.runtime.items import Batch
from sinks.runtime.outage import OutageReporter
from sinks.runtime.overflow import SPOOL, QueueBound
from sinks.runtime.policy import RECONNECT
from sinks.runtime.runner import SinkWorker

log = structlog.get_logger("monitord.ingest.consumer")

#: seconds a writer waits for the broker to confirm a batch's dead letters (then the batch
#: fails and its lane starts over: the broker delivers it again)
DEAD_LETTER_WAIT = 60.0
#: without a bound in events and not ``block``: the queue never holds a lane (the event loop);
#: the lanes bound it themselves (one batch each in flight, ``prefetch`` messages a channel)
LANES_BOUND = QueueBound(0, SPOOL)

DeadLetters = Callable[[list[Item], set[int]], Coroutine[Any, Any, None]]


@dataclass(eq=False)
class Load:
    """One lane's batch on its way to the database, and how the lane learns the outcome.

    ``published``: the ids of the items already dead-lettered (a retry does not publish them
    again); ``single``: the database refused the whole batch once, so it goes message by
    message from then on."""

    items: list[Item]
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]
    published: set[int] = field(default_factory=set)
    single: bool = False
    abandoned: bool = False  # the lane ended: do not write it (the broker redelivers it)

    def batch(self) -> Batch:
        """As the runtime's queue holds it (never encoded: there is no spool)."""
        return Batch(len(self.items), events=LaneBatch(self))

    def settle(self, error: BaseException | None = None) -> None:
        """Committed (``error`` None), or failed in a way only a new session can mend."""
        with contextlib.suppress(RuntimeError):  # (the loop is closed: nobody waits)
            self.loop.call_soon_threadsafe(_settle, self.done, error)


class LaneBatch(list[StampedeEvent]):
    """A lane's decoded events as the runtime carries them to :meth:`LoadSink.write_batch`,
    with the :class:`Load` they came in (as :class:`~sinks.runtime.marks.MarkedBatch` carries
    its marks): the sink needs the lane's items and future, not only the events."""

    def __init__(self, load: Load) -> None:
        super().__init__(item.event for item in load.items if item.event is not None)
        self.load = load


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


class LoadSink:
    """One database writer (a :class:`Store`: its loader's id caches are not shared)."""

    def __init__(
        self, name: str, store: Store, dead_letters: DeadLetters, stats: IngestStats
    ) -> None:
        self.name = name
        self.store = store
        self._dead_letters = dead_letters
        self.stats = stats

    def open(self) -> None:
        """The store is opened (its schema checked) before the ingest starts."""

    def flush(self) -> None:
        """Each batch is committed in its own transaction: nothing to flush.  But after a
        failed batch the runtime flushes before writing again and takes a flush that returns
        for the sink being back, so this asks the database (one round trip): a no-op said
        "database back" at each first retry in the middle of an outage (and reset the backoff),
        and the next attempt "unavailable" again."""
        self.store.ping()

    def close(self) -> None:
        """The store is closed by the process around the ingest."""

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if not isinstance(events, LaneBatch):  # (Load.batch: only lanes put batches here)
            raise SinkError(f"{self.name}: a batch not from an ingest lane", retryable=False)
        load = events.load
        if load.abandoned:
            return
        try:
            self._apply(load)
        except SinkError as exc:
            self.store.forget_caches()
            raise SinkError(str(exc), retryable=True) from exc  # the database: waited out
        except Exception as exc:  # the broker (a dead letter): the lane's session starts over
            load.settle(exc)
            return
        load.settle()

    def _apply(self, load: Load) -> None:
        while not load.abandoned:
            try:
                if load.single:
                    for item in load.items:
                        self._apply_one(item, load)
                else:
                    self._commit(load.items, load)
                return
            except SinkError as exc:
                if isinstance(exc.__cause__, MarkMoved):
                    self.store.forget_caches()
                    continue  # another process moved a mark: plan again from the database
                if not exc.retryable and not load.single:
                    self.store.forget_caches()
                    load.single = True  # find the message the database refuses
                    continue
                raise

    def _dead_letter(self, items: list[Item], load: Load) -> None:
        if not any(id(item) not in load.published for item in items):
            return
        future = asyncio.run_coroutine_threadsafe(
            self._dead_letters(items, load.published), load.loop
        )
        future.result(DEAD_LETTER_WAIT)

    def _commit(self, items: list[Item], load: Load) -> None:
        store = self.store
        producers = {i.producer for i in items if i.producer is not None}
        keys = {k for k in map(stream_key, items) if k is not None}
        with store.reading():
            todo = plan(items, store.marks(producers), store.workflows, store.streams(keys))
        self._dead_letter(todo.dead, load)
        store.commit(todo.events, list(todo.marks.values()), list(todo.streams.values()))
        self.stats.count(todo, len(items))

    def _apply_one(self, item: Item, load: Load) -> None:
        """One message in its own transaction; one the database refuses is dead-lettered
        and its producer's mark moves past it."""
        if item.reason is not None:
            self._dead_letter([item], load)
            return
        try:
            self._commit([item], load)
        except SinkError as exc:
            if exc.retryable or isinstance(exc.__cause__, MarkMoved):
                raise
            item.reason, item.detail = "rejected", str(exc)[:500]
            self._dead_letter([item], load)
            self._past(item)

    def _past(self, item: Item) -> None:
        """The marks of a message the database refused move past it (it is dead-lettered)."""
        store = self.store
        marks: list[MarkUpdate] = []
        stream_marks: list[MarkUpdate] = []
        key = stream_key(item)
        if item.producer is not None and item.seq is not None:
            old = store.marks({item.producer}).get(item.producer)
            if old is None or old.seq < item.seq:
                marks.append(
                    MarkUpdate(item.producer, item.user, old.seq if old else None, item.seq)
                )
        if key is not None and item.number is not None:
            was = store.streams({key}).get(key)
            if was is None or was.seq < item.number:
                stream_marks.append(
                    MarkUpdate(key, item.user, was.seq if was else None, item.number)
                )
        if marks or stream_marks:
            store.commit([], marks, stream_marks)


class DatabaseReporter(OutageReporter):
    """The database's outage, once for all writers: a warning when the first writer fails,
    an info line when the last is back; ``/healthz`` and ``/metrics`` see it in the stats.
    Called from the writers' threads (each with its delivery's ``cond`` held)."""

    def __init__(self, stats: IngestStats, db: str) -> None:
        self.stats = stats
        self.db = db
        self._lock = threading.Lock()
        self._down: set[int] = set()  # writers failing now

    def retrying(self, delivery: Any, error: str, attempt: int, retry_in: float | None) -> None:
        with self._lock:
            if not self._down:
                self.stats.db_down_since = time.time()
                log.warning("ingest: database unavailable, consumption paused", error=error)
            self._down.add(id(delivery))
            self.stats.db_error = error

    def answers(self, delivery: Any, down_seconds: float, failed_attempts: int) -> None:
        self._left(delivery, back=True)

    def came_back(
        self, delivery: Any, *, outage: float, drained: int, drain_seconds: float
    ) -> None:
        """(Said by :meth:`answers`: the ingest has no backlog of its own to drain.)"""

    def gone(self, delivery: Any) -> None:
        self._left(delivery, back=False)

    def _left(self, delivery: Any, *, back: bool) -> None:
        with self._lock:
            if id(delivery) not in self._down:
                return
            self._down.discard(id(delivery))
            if self._down:
                return
            self.stats.db_down_since, self.stats.db_error = None, None
            if back:
                log.info("ingest: database back", db=self.db)


def writers(stores: list[Store], dead_letters: DeadLetters, stats: IngestStats) -> list[SinkWorker]:
    """One runtime executor per store, sharing one outage reporter."""
    reporter = DatabaseReporter(stats, stores[0].display_url if stores[0] is not None else "")
    return [
        SinkWorker(
            LoadSink(f"ingest-db{i}", store, dead_letters, stats),
            bound=LANES_BOUND,
            retry=RECONNECT,
            held_upstream=True,
            reporter=reporter,
        )
        for i, store in enumerate(stores)
    ]
