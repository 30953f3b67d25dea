"""One sink's delivery: its memory queue, its spool and the retry policy, with no thread.

The core of the delivery runtime (see :mod:`sinks.runtime.runner` for the whole and its API): a
:class:`Delivery` knows what to do next (:meth:`Delivery.decide`) and does one step at a
time (:meth:`Delivery.run`); where the steps run (thread, child process, a service lane) is the
executor's business.  Decisions after a failure are the policy's, storage is the spool's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import cast

import structlog

from monitord.core.events import StampedeEvent
from sinks.runtime.base import MarkingSink, Sink, TallyingSink, TickingSink
from sinks.runtime.capabilities import capabilities_of, destination_of
from sinks.runtime.codec import decode_marked
from sinks.runtime.health import SinkHealth
from sinks.runtime.items import EXIT, Batch, Step, Wait, _Flush, _Item
from sinks.runtime.marks import HeldMarks, MarkedBatch, Marks, marks_of
from sinks.runtime.outage import OutageReporter
from sinks.runtime.overflow import DROP_LOG_EVERY, UNBOUNDED, QueueBound, has_room, make_room
from sinks.runtime.policy import DRAINING, UP, DeliveryState, RetryPolicy
from sinks.runtime.spool import BatchSpool, SpoolSettings
from sinks.runtime.spool.held import HeldSpool

log = structlog.get_logger(__name__)

MEMORY_FIRST_BACKOFF = 0.5
MEMORY_MAX_BACKOFF = 30.0


class Delivery:
    """One sink's delivery: memory queue, spool and policy, with no thread of its own.

    An executor runs it (:class:`SinkWorker`'s thread, a service lane among many others).
    ``cond`` is the lock the producer and the executor share (the lane's for every delivery on
    a lane); ``wake`` (called with it held) tells the executor this delivery has work.
    """

    def __init__(
        self,
        sink: Sink,
        *,
        max_queue: int = 4,
        retries: int = 10,
        spool: SpoolSettings | None = None,
        cond: threading.Condition | None = None,
        wake: Callable[[], None] | None = None,
        reporter: OutageReporter | None = None,
        bound: QueueBound = UNBOUNDED,
    ) -> None:
        self.sink = sink
        self.destination = destination_of(sink)
        self.max_queue = max_queue
        self.bound = bound  # the queue's bound in events and overflow policy (overflow.py)
        self.dropped = 0  # events a dropping bound lost
        self.settings = spool
        self.policy = DeliveryState(
            RetryPolicy(
                first=spool.first_backoff if spool else MEMORY_FIRST_BACKOFF,
                cap=spool.max_backoff if spool else MEMORY_MAX_BACKOFF,
                max_attempts=retries,  # memory mode only: a spool waits for ever
            )
        )
        self.events_written = 0
        self.drained_events = 0  # events written from the spool
        caps = capabilities_of(sink)
        self.keeps_marks = caps.keeps_marks
        self.tallies = caps.tallies
        self.best_effort = caps.dashboard  # not a destination: a failure is a warning
        self.tick_every = caps.ticks  # seconds between idle ``tick()`` calls (0: none)
        self._next_tick = 0.0
        self.held = HeldSpool(spool, sink)
        self.spool_path = spool.path_for(sink) if spool is not None else None
        self.already_held = 0  # events skipped because the sink held them (a resumed daemon)
        # per marks stream: what the sink holds
        marking = cast(MarkingSink, sink)
        self._marks = (
            HeldMarks(lambda stream: marking.read_marks(stream)) if caps.keeps_marks else None
        )
        self._cond = cond or threading.Condition()
        self._wake = wake
        self.reporter: OutageReporter = reporter or OutageReporter()
        self._items: deque[_Item] = deque()
        self._in_hand: Batch | None = None  # the queued batch the sink is writing
        self._head_first = False  # a spooling bound spilled past the head: it goes first
        self._opened = False
        self._recovered = False
        self._drained_before = 0
        self._needs_flush = False  # a sink flush failed: redo it before the next write
        self._unflushed = False  # batches written since the sink's last flush
        self._stopping = False
        self._abort = False
        self._discard = False  # interrupted: queued batches are dropped, not written
        self._stop_deadline = 0.0
        self.finished = threading.Event()  # ``finish`` ran: sink closed, spool released
        self.left_behind = 0  # events not delivered when it finished (spooled or lost)

    # ------------------------------------------------------------------ counters
    @property
    def spool(self) -> BatchSpool | None:
        return self.held.spool

    @property
    def failed(self) -> bool:
        return self.policy.disabled

    @property
    def down(self) -> bool:
        return self.policy.down_since is not None

    @property
    def failures(self) -> int:
        """Failed sink calls (retryable or not)."""
        return self.policy.retries + self.policy.permanent_failures

    @property
    def queued(self) -> int:
        """Batches waiting in memory."""
        return sum(1 for item in list(self._items) if isinstance(item, Batch))

    @property
    def spooled(self) -> int:
        """Events in the spool (not yet in the sink)."""
        return self.held.events

    def health(self) -> SinkHealth:
        """State, counters and backlog of this sink: the one record health checks, status
        pages, metrics and the end-of-run report read (:mod:`sinks.runtime.health`)."""
        snap = self.policy.health(self.sink.name)
        backlog = self.held.figures()
        snap = replace(
            snap,
            queued=self.queued,
            events_written=self.events_written,
            destination=self.destination,
            spooled=backlog[0],
            spooled_bytes=backlog[1],
            oldest=backlog[2],
            spool_path=self.spool_path,
            left_behind=self.left_behind,
        )
        if self.bound.events > 0:
            # a bounded queue that sent its overflow to the spool is draining it, not down
            state = DRAINING if snap.state == UP and backlog[0] else snap.state
            snap = replace(snap, state=state, dropped=self.dropped)
        if self.tallies:  # a sink's own tallies (SQL: sink.py)
            return snap.with_tallies(cast(TallyingSink, self.sink).counters)
        return snap

    # ------------------------------------------------------------------ producer side
    def _notify(self) -> None:
        """``cond`` held: wake the producers and the executor."""
        self._cond.notify_all()
        if self._wake is not None:
            self._wake()

    def put(self, batch: Sequence[StampedeEvent]) -> None:
        self.put_batch(Batch(len(batch), events=batch, marks=marks_of(batch)))

    def put_batch(self, batch: Batch) -> None:
        """Queue a batch; blocks only while a working sink's queue is full (back-pressure)."""
        with self._cond:
            if self.bound.drops:
                kept = self._make_room(batch)
                if kept is None:
                    return
                batch = kept
            while not self.failed and not self._discard:
                if self._spool_takes_new() or self._overflows(batch):
                    if self._append(batch):
                        self._notify()
                        return
                    continue  # the spool just broke: queue it in memory
                if self._has_room(batch) or not self._running():
                    self._items.append(batch)
                    self._notify()
                    return
                self._cond.wait(1.0)

    def _running(self) -> bool:
        """The executor still serves this delivery."""
        return not self.finished.is_set()

    # --- the queue's bound (sinks/runtime/overflow.py; cond held) ---
    def _has_room(self, batch: Batch) -> bool:
        return has_room(self.bound, self._items, self._in_hand, batch, self.max_queue)

    def _make_room(self, batch: Batch) -> Batch | None:
        """A dropping bound: cut the batch or the oldest waiting events (counted, logged)."""
        kept, lost = make_room(self.bound, self._items, self._in_hand, batch)
        if lost:
            before = self.dropped
            self.dropped += lost
            if before == 0 or before // DROP_LOG_EVERY != self.dropped // DROP_LOG_EVERY:
                log.warning(
                    "buffer full, events dropped",
                    sink=self.sink.name,
                    policy=self.bound.overflow,
                    dropped=self.dropped,
                )
        return kept

    def _overflows(self, batch: Batch) -> bool:
        """A spooling bound: ``batch`` goes to the spool, because the queue is full (what
        waits in memory is spilled first, the batch in hand kept) or the spool already holds
        newer batches than that one."""
        if not self.bound.spools:
            return False
        if not self._head_first and self._has_room(batch):
            return False
        if not self.held.ensure():
            return False
        if not self._head_first:
            self._spill(keep_head=True)
        return True

    def spill_waiting(self) -> bool:
        """A spooling bound: make what the sink has not taken durable now (a flush that would
        wait for a slow sink); False when there is no spool to take it."""
        with self._cond:
            if not self.bound.spools or not self._items or not self.held.ensure():
                return False
            self._spill(keep_head=True)
            return True

    def abandon(self) -> bool:
        """The executor is stuck in the sink (it did not return within its host's timeout):
        the queued batch in hand becomes the sink's (True: it has one, and says what it did not
        handle), the rest is spooled (or lost) by :meth:`finish`, which the caller runs."""
        with self._cond:
            self._abort = self._stopping = True
            head = self._in_hand
            if head is not None and self._items and self._items[0] is head:
                self._items.popleft()
                self._head_first = False
                return True
            return False

    def flush(self, timeout: float | None = None) -> None:
        """Return once every batch handed over is in the sink or durably in the spool."""
        self.wait_flushed(self.request_flush(), timeout)

    def request_flush(self) -> _Flush | None:
        """Ask for a flush; None when nothing needs waiting for (see :meth:`wait_flushed`)."""
        with self._cond:
            if self.failed or not self._running():
                return None
            if not self._items and self.held.ready:
                self.held.sync()
                if self.held.ready and (self.held.backlog or self.down):
                    return None  # the executor is draining or waiting: the spool holds the rest
            request = _Flush()
            self._items.append(request)
            self._notify()
            return request

    def wait_flushed(self, request: _Flush | None, timeout: float | None = None) -> None:
        if request is None:
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        while not request.done.wait(1.0):
            if not self._running() or (deadline and time.monotonic() > deadline):
                return

    def pending_batches(self) -> list[Batch]:
        """The batches waiting in memory (a copy)."""
        with self._cond:
            return [item for item in self._items if isinstance(item, Batch)]

    def request_stop(self, drain_timeout: float | None = None, *, abort: bool = False) -> None:
        """Stop once everything is delivered, or after ``drain_timeout`` seconds of trying a
        down sink (default: the spool settings'; the rest stays spooled for the next start).
        ``abort``: stop after the current step, spooling what is still in memory."""
        with self._cond:
            self._abort = self._abort or abort
            if drain_timeout is None:
                # memory mode: the retries bound the wait, nothing can be left behind
                drain_timeout = self.settings.drain_timeout if self.settings else float("inf")
            deadline = time.monotonic() + drain_timeout
            if not self._stopping or deadline < self._stop_deadline:
                self._stop_deadline = deadline
            self._stopping = True
            self._notify()

    def interrupt(self) -> None:
        """Stop after the step in hand (a batch being written commits), dropping the batches
        queued and any put later: an interrupted replay, whose rerun rewrites every output."""
        with self._cond:
            self._discard = True
            self.request_stop(abort=True)

    # ------------------------------------------------------------------ state (cond held)
    def _spool_takes_new(self) -> bool:
        """New batches go to the spool: it holds older ones, or the sink is down."""
        if not self.held.ready or self._items:
            return False
        return self.down or self.held.backlog

    def _append(self, batch: Batch) -> bool:
        return self.held.append(batch.count, batch.encoded())

    def _can_wait(self) -> bool:
        """Batches of a down sink can wait on disk (its spool)."""
        if self.bound.drops:
            return True  # a dropping queue never holds the producer: retry for ever
        return self.settings is not None and not self.held.broken

    def _spill(self, *, keep_head: bool = False) -> None:
        """The sink is down: move the queue into the spool, in order, freeing the producer.
        ``keep_head``: a first batch stays in memory and is written before the spool."""
        if not self.held.ensure():
            return
        keep = 1 if keep_head and self._items and isinstance(self._items[0], Batch) else 0
        if keep:
            self._head_first = True
        if len(self._items) > keep:
            log.debug(
                "the queue goes to the spool",
                sink=self.sink.name,
                batches=sum(1 for i in self._items if isinstance(i, Batch)) - keep,
            )
        while len(self._items) > keep:
            item = self._items[keep]
            if isinstance(item, Batch):
                if not self._append(item):
                    return  # the rest stays in memory, after what the spool holds
            else:
                self.held.sync()
                item.done.set()
            del self._items[keep]
        self.held.sync()
        self._notify()

    def _release_waiters(self) -> None:
        if not self._items:
            return
        for item in self._items:
            if isinstance(item, _Flush):
                item.done.set()
        self._items.clear()
        self._notify()

    # ------------------------------------------------------------------ the executor's side
    def decide(self) -> Step:
        """The next step (``cond`` held): an action to run without the lock, a wait, or EXIT."""
        if not self._recovered:
            return self._recover_spool
        if self.failed:
            self._release_waiters()
            return EXIT if self._stopping else Wait(None)
        backlog = self.held.backlog
        pending = backlog or bool(self._items) or self._needs_flush
        if self._stopping and (self._abort or not pending):
            return EXIT
        if not pending and self._opened:
            if self.down:
                self._caught_up()  # nothing left to retry with
            return self._idle()
        if not pending and not self.down:
            # not opened yet and nothing to write (a ticking sink is opened at once)
            return self._open if self.tick_every > 0 else Wait(None)
        now = time.monotonic()
        failing = self.policy.attempts > 0
        if self._stopping and failing and now >= self._stop_deadline:
            return EXIT  # the rest stays spooled for the next daemon
        wait = self.policy.wait()
        if wait > 0:
            if self._stopping:
                wait = min(wait, max(0.0, self._stop_deadline - now))
            return Wait(max(0.01, wait))
        if not self._opened:
            return self._open
        if self._needs_flush:
            return self._flush_sink
        if backlog and not (self._head_first and self._items):
            return self._deliver
        item = self._items[0]
        return self._write_item if isinstance(item, Batch) else self._flush_item

    def run(self, action: Callable[[], None]) -> None:
        """Run one action (``cond`` not held); a failure goes to the policy."""
        try:
            action()
        except Exception as exc:  # isolation: any sink error is contained
            if not self.finished.is_set():  # (a step that returned after its abandon: moot)
                self._failed(exc, action)
        else:
            if self.policy.attempts or self.policy.down_since is not None:
                with self._cond:
                    self._succeeded()

    def crashed(self, exc: BaseException) -> None:
        """The executor itself failed on this delivery (a runtime bug): disable the sink."""
        log.error("sink worker crashed, disabling the sink", sink=self.sink.name, error=repr(exc))
        with self._cond:
            self.policy.disable(exc)
            self._release_waiters()

    # --- the actions (cond not held) ---
    def _recover_spool(self) -> None:
        """A spool left by an earlier daemon: delivered first, or discarded on restart."""
        with self._cond:
            self._recovered = True
            self.held.recover()

    def _open(self) -> None:
        try:
            self.sink.open()
        except Exception:
            try:
                self.sink.close()  # a half-open sink releases what it holds before a retry
            except Exception:  # the open error is the one that matters
                pass
            raise
        self._opened = True
        self._next_tick = time.monotonic() + self.tick_every
        log.debug("sink opened", sink=self.sink.name)

    def _idle(self) -> Step:
        """Nothing to write: wait, or (a ticking sink, ``Capabilities.ticks``) tick."""
        if self.tick_every <= 0:
            return Wait(None)
        wait = self._next_tick - time.monotonic()
        return self._tick if wait <= 0 else Wait(wait)

    def _tick(self) -> None:
        cast(TickingSink, self.sink).tick()
        self._next_tick = time.monotonic() + self.tick_every

    def _deliver(self) -> None:
        spool = self.spool
        assert spool is not None
        head = spool.head()
        if head is None:  # counted but unreadable (damaged frames were skipped)
            with self._cond:
                spool.forget_damaged()
            return
        count, data = head
        began = time.perf_counter()
        self._write(*decode_marked(data))
        self.sink.flush()  # durable in the sink before the spool forgets it
        spool.commit()
        log.debug(
            "spooled batch delivered",
            sink=self.sink.name,
            events=count,
            seconds=round(time.perf_counter() - began, 4),
            spooled=spool.events,
        )
        with self._cond:
            self.events_written += count
            self.drained_events += count
            if not self.held.backlog:
                self._caught_up()
            self._notify()

    def _write_item(self) -> None:
        item = self._items[0]
        assert isinstance(item, Batch)
        self._unflushed = True
        began = time.perf_counter()
        self._in_hand = item
        try:
            self._write(item.decoded(), item.marks)
        finally:
            self._in_hand = None
        seconds = time.perf_counter() - began
        with self._cond:
            if self._items and self._items[0] is item:  # (not abandoned meanwhile)
                self._items.popleft()
            self._head_first = False
            self.events_written += item.count
            queued = len(self._items)
            self._notify()
        # one line per batch (at most 5,000 events), never per event
        log.debug(
            "batch written",
            sink=self.sink.name,
            events=item.count,
            seconds=round(seconds, 4),
            queued_batches=queued,
            written=self.events_written,
        )

    def _write(self, events: Sequence[StampedeEvent], marks: Marks | None) -> None:
        """Write a batch; a sink that keeps marks gets only the events it does not hold yet."""
        held = self._marks
        if marks is None or held is None:
            # a sink may number its output by the marks (AMQP: marks_of); else a plain list
            self.sink.write_batch(events if marks is None else MarkedBatch(events, marks))
            return
        fresh = held.fresh(events, marks)
        if len(fresh) < len(events):
            skipped = len(events) - len(fresh)
            log.info(
                "skipping events the sink already holds (resumed after a crash)",
                sink=self.sink.name,
                events=skipped,
            )
            with self._cond:
                self.already_held += skipped
        if fresh:
            try:
                cast(MarkingSink, self.sink).write_marked(fresh, marks)
            except BaseException:
                # it may have committed before failing (the answer to COMMIT lost with the
                # server): the retry asks the sink again rather than rewrite rows it holds
                held.forget(marks.stream)
                raise
        held.advance(marks)

    def _flush_item(self) -> None:
        item = self._items[0]
        assert isinstance(item, _Flush)
        self._flush_sink()
        with self._cond:
            self._items.popleft()
            self.held.sync()
            item.done.set()

    def _flush_sink(self) -> None:
        self.sink.flush()
        self._needs_flush = self._unflushed = False

    # --- outcomes ---
    def _failed(self, exc: BaseException, action: Callable[[], None]) -> None:
        opening = action == self._open
        with self._cond:
            verdict = self.policy.failed(exc, can_wait=self._can_wait())
            log.debug(
                "sink call failed: decision",
                sink=self.sink.name,
                call=getattr(action, "__name__", "?").lstrip("_"),
                decision="disable"
                if verdict.disable
                else ("spool and retry" if self._can_wait() and self.settings else "retry"),
                attempt=verdict.attempt,
                retry_in=None if verdict.disable else round(verdict.delay or 0.0, 3),
                error=str(exc),
            )
            if verdict.disable:
                what = "cannot create events output" if opening else "sink failed"
                if self.best_effort:
                    what = "cannot be opened" if opening else "failed"
                    log.warning(
                        f"dashboard database {what}, not updated (best effort)", error=str(exc)
                    )
                else:
                    log.error(f"{what}, disabling it", sink=self.sink.name, error=str(exc))
                self._release_waiters()
                return
            # writes the sink took but has not made durable yet must be flushed before more
            flushing = action in (self._flush_item, self._flush_sink)
            self._needs_flush = self._needs_flush or flushing or self._unflushed
            self._spill(keep_head=self._head_first)
            never_opened = opening and not self._opened
            if not self._can_wait() or self.settings is None:
                self.reporter.retrying(self, str(exc), verdict.attempt, None)
            elif verdict.first:
                self._drained_before = self.drained_events
                self.reporter.went_down(self, str(exc), never_opened, verdict.delay)
            else:
                self.reporter.retrying(self, str(exc), verdict.attempt, verdict.delay)
            self._notify()

    def _succeeded(self) -> None:
        """A call worked after failures.  ``cond`` held."""
        recovery = self.policy.succeeded(backlog=self.held.backlog)
        if recovery is not None:
            self.reporter.answers(self, recovery.down_seconds, recovery.failed_attempts)
        if not self.held.backlog:
            self._caught_up()

    def _caught_up(self) -> None:
        """The sink works and the spool is empty: the outage is over.  ``cond`` held."""
        back_at = self.policy.back_at
        outage = self.policy.caught_up()
        if outage is not None:
            now = time.monotonic()
            self.reporter.came_back(
                self,
                outage=outage,
                drained=self.drained_events - self._drained_before,
                drain_seconds=now - (back_at or now),
            )
            self._notify()

    def finish(self) -> None:
        """Close the sink; say what is left in the spool for the next daemon.  Once: a lane
        may give an ending delivery one more turn (woken while it finished)."""
        with self._cond:
            if self.finished.is_set():
                return
            self._stopping = True
            if self._items and (self.down or self._abort) and not self._discard:
                self._spill()
            lost = sum(item.count for item in self._items if isinstance(item, Batch))
            self._release_waiters()
            self.held.sync()
        if lost and not self.failed and not self._discard:
            log.error("sink down at exit: events lost", sink=self.sink.name, events=lost)
        if self._opened:
            try:
                self.sink.close()
            except Exception as exc:  # isolation
                if not self.failed:
                    log.error("sink close failed", sink=self.sink.name, error=str(exc))
        self.left_behind = lost + self.held.close()
        with self._cond:
            self.reporter.gone(self)
            self.finished.set()
            self._notify()
