"""One sink's delivery: its memory queue, its spool and the retry policy, with no thread.

The core of the delivery runtime (see :mod:`sinks.runtime.runner` for the whole and its API): a
:class:`Delivery` knows what to do next (:meth:`Delivery.decide`) and does one step at a
time (:meth:`Delivery.run`); where the steps run (thread, child process, a service lane) is the
executor's business.  Decisions after a failure are the policy's, storage is the spool's.
A delivery is composed of the objects that hold each concern: its memory queue and the
queue's bound (:class:`~sinks.runtime.bounded.BoundedQueue`), the way between that queue and
its spool (:class:`~sinks.runtime.spilling.SpoolSide`), its stop request
(:class:`~sinks.runtime.stopping.StopRequest`) and its retry state
(:class:`~sinks.runtime.policy.DeliveryState`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import cast

import structlog

from monitord.core.events import StampedeEvent
from sinks.runtime.base import MarkingSink, Sink, TallyingSink, TickingSink
from sinks.runtime.bounded import BoundedQueue
from sinks.runtime.capabilities import capabilities_of, destination_of
from sinks.runtime.health import SinkHealth
from sinks.runtime.items import EXIT, Batch, Step, Wait, _Flush
from sinks.runtime.marks import HeldMarks, MarkedBatch, Marks, marks_of
from sinks.runtime.outage import OutageReporter
from sinks.runtime.overflow import UNBOUNDED, QueueBound
from sinks.runtime.policy import DRAINING, UP, DeliveryState, RetryPolicy
from sinks.runtime.spilling import SpoolSide
from sinks.runtime.spool import BatchSpool, SpoolSettings
from sinks.runtime.spool.held import HeldSpool
from sinks.runtime.stopping import StopRequest

log = structlog.get_logger(__name__)

MEMORY_FIRST_BACKOFF = 0.5
MEMORY_MAX_BACKOFF = 30.0


class Delivery:
    """One sink's delivery: memory queue, spool and policy, with no thread of its own.

    An executor runs it (:class:`SinkWorker`'s thread, a service lane among many others).
    ``cond`` is the lock the producer and the executor share (the lane's for every delivery on
    a lane); ``wake`` (called with it held) tells the executor this delivery has work.
    ``queue``: its memory queue and that queue's bound, handed in (default: one bounded by
    ``bound`` in events, else by ``max_queue`` batches).  ``retry``: the backoff, when the
    caller's is not the spool settings' (or the memory default, ``retries`` attempts);
    ``held_upstream``: its batches stay durable where they came from until written (the
    ingest: the broker keeps them unacknowledged), so a down sink is retried for ever
    without a spool.
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
        queue: BoundedQueue | None = None,
        retry: RetryPolicy | None = None,
        held_upstream: bool = False,
    ) -> None:
        self.sink = sink
        self.destination = destination_of(sink)
        self.queue = queue if queue is not None else BoundedQueue(sink.name, bound, max_queue)
        self.settings = spool
        self.held_upstream = held_upstream
        self.policy = DeliveryState(
            retry
            or RetryPolicy(
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
        self.durable = caps.durable_writes  # no flush: each write is durable on return
        # the steps that do not reach such a sink: their success is no recovery
        self._silent = (self._flush_item, self._flush_sink) if self.durable else ()
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
        self.spooling = SpoolSide(self.held, self.queue, self._cond, self._notify)
        self._items = self.queue.items  # (the same deque: read by decide and the actions)
        self._opened = False
        self._recovered = False
        self._drained_before = 0
        self._needs_flush = False  # a sink flush failed: redo it before the next write
        self._unflushed = False  # batches written since the sink's last flush
        self.stop_request = StopRequest()
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
    def dropped(self) -> int:
        """Events a dropping bound lost."""
        return self.queue.dropped

    @property
    def queued(self) -> int:
        """Batches waiting in memory."""
        return self.queue.batches

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
        if self.queue.bound.events > 0:
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
            if self.queue.bound.drops:
                kept = self.queue.make_room(batch)
                if kept is None:
                    return
                batch = kept
            while not self.failed and not self.stop_request.discard:
                if self.spooling.takes_new(self.down) or self.spooling.overflows(batch):
                    if self.spooling.append(batch):
                        self._notify()
                        return
                    continue  # the spool just broke: queue it in memory
                if self.queue.has_room(batch) or not self._running():
                    self._items.append(batch)
                    self._notify()
                    return
                self._cond.wait(1.0)

    def _running(self) -> bool:
        """The executor still serves this delivery."""
        return not self.finished.is_set()

    def spill_waiting(self) -> bool:
        """A spooling bound: make what the sink has not taken durable now (a flush that would
        wait for a slow sink); False when there is no spool to take it."""
        with self._cond:
            return self.spooling.spill_waiting()

    def abandon(self) -> bool:
        """The executor is stuck in the sink (it did not return within its host's timeout):
        the queued batch in hand becomes the sink's (True: it has one, and says what it did not
        handle), the rest is spooled (or lost) by :meth:`finish`, which the caller runs."""
        with self._cond:
            self.stop_request.abort = self.stop_request.stopping = True
            return self.queue.abandon_head()

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
            return self.queue.pending()

    def request_stop(self, drain_timeout: float | None = None, *, abort: bool = False) -> None:
        """Stop once everything is delivered, or after ``drain_timeout`` seconds of trying a
        down sink (default: the spool settings'; the rest stays spooled for the next start).
        ``abort``: stop after the current step, spooling what is still in memory."""
        with self._cond:
            if drain_timeout is None:
                # memory mode: the retries bound the wait, nothing can be left behind
                drain_timeout = self.settings.drain_timeout if self.settings else float("inf")
            self.stop_request.request(drain_timeout, abort=abort)
            self._notify()

    def interrupt(self) -> None:
        """Stop after the step in hand (a batch being written commits), dropping the batches
        queued and any put later: an interrupted replay, whose rerun rewrites every output."""
        with self._cond:
            self.stop_request.discard = True
            self.request_stop(abort=True)

    # ------------------------------------------------------------------ state (cond held)
    def _can_wait(self) -> bool:
        """Batches of a down sink can wait on disk (its spool, or upstream's)."""
        if self.queue.bound.drops or self.held_upstream:
            return True  # a dropping queue never holds the producer: retry for ever
        return self.settings is not None and not self.held.broken

    def _release_waiters(self) -> None:
        if self.queue.release_waiters():
            self._notify()

    # ------------------------------------------------------------------ the executor's side
    def decide(self) -> Step:
        """The next step (``cond`` held): an action to run without the lock, a wait, or EXIT."""
        if not self._recovered:
            return self._recover_spool
        if self.failed:
            self._release_waiters()
            return EXIT if self.stop_request.stopping else Wait(None)
        backlog = self.held.backlog
        pending = backlog or bool(self._items) or self._needs_flush
        if self.stop_request.over(pending):
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
        if failing and self.stop_request.expired(now):
            return EXIT  # the rest stays spooled for the next daemon
        wait = self.policy.wait()
        if wait > 0:
            return Wait(max(0.01, self.stop_request.capped(wait, now)))
        if not self._opened:
            return self._open
        if self._needs_flush:
            return self._flush_sink
        if backlog and not (self.queue.head_first and self._items):
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
            if (self.policy.attempts or self.policy.down_since is not None) and (
                action not in self._silent
            ):
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
        """The spool's oldest batch into the sink (:meth:`SpoolSide.deliver_head`)."""
        count = self.spooling.deliver_head(self._write, self._sink_flush)
        if not count:
            return
        with self._cond:
            self.events_written += count
            self.drained_events += count
            if not self.held.backlog:
                self._caught_up()
            self._notify()

    def _write_item(self) -> None:
        item = self._items[0]
        assert isinstance(item, Batch)
        self._unflushed = not self.durable  # (before the write: a failed one may leave some)
        began = time.perf_counter()
        self.queue.in_hand = item
        try:
            self._write(item.decoded(), item.marks)
        finally:
            self.queue.in_hand = None
        seconds = time.perf_counter() - began
        with self._cond:
            self.queue.take_head(item)  # (unless abandoned meanwhile)
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
        self._sink_flush()
        self._needs_flush = self._unflushed = False

    def _sink_flush(self) -> None:
        """The sink's ``flush``; none for a sink whose writes are durable on return."""
        if not self.durable:
            self.sink.flush()

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
            flushing = not self.durable and action in (self._flush_item, self._flush_sink)
            self._needs_flush = self._needs_flush or flushing or self._unflushed
            self.spooling.spill(keep_head=self.queue.head_first)
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
            self.stop_request.stopping = True
            if (
                self._items
                and (self.down or self.stop_request.abort)
                and not self.stop_request.discard
            ):
                self.spooling.spill()
            lost = self.queue.events()
            self._release_waiters()
            self.held.sync()
        if lost and not self.failed and not self.stop_request.discard:
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
