"""Isolation, batching and spooling around every sink: one worker thread per sink.

The daemon hands each batch of events to :meth:`SinkSet.publish`; every sink
receives it on its own thread (the SQL sink in its own process, see
:mod:`sinks.process_worker`), so SQL commits never run on the event loop and a
slow sink never stalls the others more than its small queue allows.

A sink that fails *retryably* (connection refused, server restarting, locked
database, deadlock storm), whether at open, write or flush, is "down": its
queued batches and every new one go to its on-disk spool (:mod:`sinks.spool`)
with one disk append, so the daemon and the other sinks carry on.  The worker
retries with capped exponential backoff, never giving up; once the sink takes
a batch again it writes the spool out, oldest first, and only then new
batches (strict order: while the spool holds anything, new batches join it).
A permanent failure disables that sink only, logged once.

Ordering invariant: every batch in the spool is older than every batch in the
memory queue.  The producer appends to the spool only while the queue is empty,
and the worker moves the queue into the spool (in order) when the sink goes
down; the worker takes from the queue only when the spool is empty.

``flush`` returns once every batch handed over is durably in the sink or in the
spool (fsync): the daemon's checkpoints (monitord.info / monitord.recover) rely
on it.  ``stop`` keeps trying a down sink for ``drain_timeout`` seconds, then
leaves the rest spooled for the next daemon (which delivers it first on resume,
and discards it when the outputs start over).

Without :class:`~sinks.spool.SpoolSettings` (or when the spool cannot be
written) a worker keeps batches in memory: a down sink then blocks the producer
while it is retried ``retries`` times, and is disabled after that.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from monitord.events import StampedeEvent
from sinks.base import Sink, SinkError
from sinks.process_worker import ProcessSinkWorker, decode_batch, encode_batch
from sinks.spool import BatchSpool, SpoolSettings, SpoolUnavailable

log = structlog.get_logger(__name__)

MEMORY_FIRST_BACKOFF = 0.5
LOG_EVERY = 12  # a long outage logs its first retries, then one in this many (~1/min)
MEMORY_MAX_BACKOFF = 30.0


@dataclass
class Batch:
    """A batch as events, as bytes (``encode_batch``), or both; decoded/encoded on demand."""

    count: int
    events: Sequence[StampedeEvent] | None = None
    data: bytes | None = None

    def decoded(self) -> Sequence[StampedeEvent]:
        if self.events is None:
            assert self.data is not None
            self.events = decode_batch(self.data)
        return self.events

    def encoded(self) -> bytes:
        if self.data is None:
            assert self.events is not None
            self.data = encode_batch(self.events)
        return self.data


class _Flush:
    """A flush request in the queue: set once everything queued before it is durable."""

    def __init__(self) -> None:
        self.done = threading.Event()


_Item = Batch | _Flush


class SinkWorker:
    """Drives one sink from a dedicated thread, spooling while the sink is down."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_queue: int = 4,
        retries: int = 10,
        spool: SpoolSettings | None = None,
    ) -> None:
        self.sink = sink
        self.max_queue = max_queue
        self.retries = retries  # memory mode only: attempts before a down sink is disabled
        self.settings = spool
        self.spool: BatchSpool | None = None
        self.failed = False
        self.events_written = 0
        self.failures = 0  # failed sink calls (retryable or not)
        self.outages = 0
        self.outage_seconds = 0.0
        self.drained_events = 0  # events written from the spool
        self._cond = threading.Condition()
        self._items: deque[_Item] = deque()
        self._opened = False
        self._down_since: float | None = None  # the sink is down (last call failed retryably)
        self._back_at: float | None = None  # when it took a call again (its spool then drains)
        self._drained_before = 0
        self._retry_at = 0.0
        self._backoff = self._first_backoff()
        self._attempts = 0  # consecutive failures
        self._needs_flush = False  # a sink flush failed: redo it before the next write
        self._unflushed = False  # batches written since the sink's last flush
        self._spool_broken = False
        self._stopping = False
        self._stop_deadline = 0.0
        self._thread = threading.Thread(target=self._run, name=f"sink-{sink.name}", daemon=True)

    # ------------------------------------------------------------------ counters
    @property
    def queued(self) -> int:
        """Batches waiting in memory."""
        return sum(1 for item in list(self._items) if isinstance(item, Batch))

    @property
    def spooled(self) -> int:
        """Events in the spool (not yet in the sink)."""
        spool = self.spool
        return spool.events if spool is not None else 0

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def stats(self) -> dict[str, Any]:
        return {
            "events_written": self.events_written,
            "queued": self.queued,
            "spooled": self.spooled,
            "failures": self.failures,
            "failed": self.failed,
            "outages": self.outages,
            "outage_seconds": self.outage_seconds,
            "drained_events": self.drained_events,
        }

    # ------------------------------------------------------------------ producer side
    def start(self) -> None:
        self._thread.start()

    def put(self, batch: Sequence[StampedeEvent]) -> None:
        self.put_batch(Batch(len(batch), events=batch))

    def put_batch(self, batch: Batch) -> None:
        """Queue a batch; blocks only while a working sink's queue is full (back-pressure)."""
        with self._cond:
            while not self.failed:
                if self._spool_takes_new():
                    if self._append(batch):
                        self._cond.notify_all()
                        return
                    continue  # the spool just broke: queue it in memory
                if len(self._items) < self.max_queue or not self._thread.is_alive():
                    self._items.append(batch)
                    self._cond.notify_all()
                    return
                self._cond.wait(1.0)

    def flush(self, timeout: float | None = None) -> None:
        """Return once every batch handed over is in the sink or durably in the spool."""
        with self._cond:
            if self.failed or not self._thread.is_alive():
                return
            if not self._items and self._spool_ready():
                self._sync_spool()
                if self._spool_ready() and (self._backlog() or self.down):
                    return  # the worker is draining or waiting: the spool holds the rest
            request = _Flush()
            self._items.append(request)
            self._cond.notify_all()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not request.done.wait(1.0):
            if not self._thread.is_alive() or (deadline and time.monotonic() > deadline):
                return

    def request_stop(self) -> None:
        with self._cond:
            if not self._stopping:
                self._stopping = True
                # memory mode: the retries bound the wait, nothing can be left behind
                drain = self.settings.drain_timeout if self.settings else float("inf")
                self._stop_deadline = time.monotonic() + drain
            self._cond.notify_all()

    def join(self) -> None:
        if self._thread.is_alive():
            self._thread.join()

    def stop(self) -> None:
        self.request_stop()
        self.join()

    # ------------------------------------------------------------------ state (cond held)
    def _spool_ready(self) -> bool:
        spool = self.spool
        return spool is not None and spool.is_open and not self._spool_broken

    def _backlog(self) -> bool:
        """The spool holds batches (readable even if it can no longer be written)."""
        spool = self.spool
        return spool is not None and spool.is_open and spool.batches > 0

    def _spool_takes_new(self) -> bool:
        """New batches go to the spool: it holds older ones, or the sink is down."""
        if not self._spool_ready() or self._items:
            return False
        return self.down or self._backlog()

    def _append(self, batch: Batch) -> bool:
        assert self.spool is not None
        try:
            self.spool.append(batch.count, batch.encoded())
        except (OSError, SpoolUnavailable) as exc:
            self._break_spool(exc)
            return False
        return True

    def _sync_spool(self) -> None:
        if not self._spool_ready():
            return
        assert self.spool is not None
        try:
            self.spool.sync()
        except OSError as exc:
            self._break_spool(exc)

    def _break_spool(self, exc: BaseException) -> None:
        log.error(
            "cannot write the sink's spool, keeping its events in memory",
            sink=self.sink.name,
            spool=self.spool.path if self.spool else None,
            error=str(exc),
        )
        self._spool_broken = True

    def _ensure_spool(self) -> bool:
        """Open (create) the spool if this worker has one; False in memory mode."""
        if self.settings is None or self._spool_broken:
            return False
        if self.spool is None:
            self.spool = BatchSpool(self.settings.path_for(self.sink))
        if not self.spool.is_open:
            try:
                self.spool.open()
            except (OSError, SpoolUnavailable) as exc:
                self._break_spool(exc)
                return False
        return True

    def _spill(self) -> None:
        """The sink is down: move the queue into the spool, in order, freeing the producer."""
        if not self._ensure_spool():
            return
        while self._items:
            item = self._items[0]
            if isinstance(item, Batch):
                if not self._append(item):
                    return  # the rest stays in memory, after what the spool holds
            else:
                self._sync_spool()
                item.done.set()
            self._items.popleft()
        self._sync_spool()
        self._cond.notify_all()

    def _release_waiters(self) -> None:
        for item in self._items:
            if isinstance(item, _Flush):
                item.done.set()
        self._items.clear()
        self._cond.notify_all()

    def _first_backoff(self) -> float:
        return self.settings.first_backoff if self.settings else MEMORY_FIRST_BACKOFF

    def _max_backoff(self) -> float:
        return self.settings.max_backoff if self.settings else MEMORY_MAX_BACKOFF

    # ------------------------------------------------------------------ worker thread
    def _run(self) -> None:
        try:
            self._recover_spool()
            self._attempt(self._open)
            while True:
                with self._cond:
                    action = self._next_action()
                if action is None:
                    break
                self._attempt(action)
        except Exception as exc:  # isolation: a runner bug stays with its sink
            log.error(
                "sink worker crashed, disabling the sink", sink=self.sink.name, error=repr(exc)
            )
            with self._cond:
                self.failed = True
        finally:
            self._finish()

    def _recover_spool(self) -> None:
        """A spool left by an earlier daemon: delivered first, or discarded on restart."""
        if self.settings is None:
            return
        path = self.settings.path_for(self.sink)
        if not os.path.isdir(path):
            return
        with self._cond:
            if not self._ensure_spool():
                return
            spool = self.spool
            assert spool is not None
            if self.settings.restart:
                try:
                    dropped = spool.discard()
                except OSError as exc:
                    self._break_spool(exc)
                    return
                if dropped:
                    log.warning(
                        "outputs start over: discarding events an earlier daemon left spooled",
                        sink=self.sink.name,
                        events=dropped,
                        spool=path,
                    )
            elif spool.batches:
                log.info(
                    "delivering first the events an earlier daemon left spooled",
                    sink=self.sink.name,
                    events=spool.events,
                    spool=path,
                )

    def _next_action(self) -> Callable[[], None] | None:
        """What to do next (None: exit); waits while there is nothing to do.  ``cond`` held."""
        while True:
            if self.failed:
                self._release_waiters()
                if self._stopping:
                    return None
                self._cond.wait()
                continue
            backlog = self._backlog()
            pending = backlog or bool(self._items) or self._needs_flush
            if self._stopping and not pending:
                return None
            if not pending and self._opened:
                if self.down:
                    self._clear_down()  # nothing left to retry with
                self._cond.wait()
                continue
            if not pending and not self.down:
                self._cond.wait()  # not opened yet and nothing to write (cannot happen)
                continue
            now = time.monotonic()
            failing = self._attempts > 0
            if self._stopping and failing and now >= self._stop_deadline:
                return None  # the rest stays spooled for the next daemon
            if now < self._retry_at:
                wake = (
                    min(self._retry_at, self._stop_deadline) if self._stopping else self._retry_at
                )
                self._cond.wait(max(0.01, wake - now))
                continue
            if not self._opened:
                return self._open
            if self._needs_flush:
                return self._flush_sink
            if backlog:
                return self._deliver
            item = self._items[0]
            return self._write_item if isinstance(item, Batch) else self._flush_item

    def _attempt(self, action: Callable[[], None]) -> None:
        """Run one sink call; a failure is sorted into "down" (retryable) or "disabled"."""
        opening = action == self._open
        try:
            action()
        except SinkError as exc:
            if exc.retryable:
                flushing = action in (self._flush_item, self._flush_sink)
                self._went_down(exc, opening=opening, flushing=flushing)
            else:
                self._disable(exc, opening=opening)
        except Exception as exc:  # isolation: any sink error is contained
            self._disable(exc, opening=opening)
        else:
            if self._attempts or self._retry_at or self.down:
                with self._cond:
                    self._succeeded()

    # --- the actions (cond not held) ---
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

    def _deliver(self) -> None:
        spool = self.spool
        assert spool is not None
        head = spool.head()
        if head is None:  # counted but unreadable (damaged frames were skipped)
            with self._cond:
                spool.events = spool.batches = 0
            return
        count, data = head
        self.sink.write_batch(decode_batch(data))
        self.sink.flush()  # durable in the sink before the spool forgets it
        spool.commit()
        with self._cond:
            self.events_written += count
            self.drained_events += count
            if self._down_since is None and not self._backlog():
                log.info("sink spool drained", sink=self.sink.name, events=self.drained_events)
            self._cond.notify_all()

    def _write_item(self) -> None:
        item = self._items[0]
        assert isinstance(item, Batch)
        self._unflushed = True
        self.sink.write_batch(item.decoded())
        with self._cond:
            self._items.popleft()
            self.events_written += item.count
            self._cond.notify_all()

    def _flush_item(self) -> None:
        item = self._items[0]
        assert isinstance(item, _Flush)
        self._flush_sink()
        with self._cond:
            self._items.popleft()
            self._sync_spool()
            item.done.set()

    def _flush_sink(self) -> None:
        self.sink.flush()
        self._needs_flush = self._unflushed = False

    # --- outcomes (cond not held) ---
    def _went_down(self, exc: SinkError, *, opening: bool, flushing: bool) -> None:
        with self._cond:
            self.failures += 1
            self._attempts += 1
            first = self._down_since is None
            delay = self._backoff
            self._retry_at = time.monotonic() + delay
            self._backoff = min(self._backoff * 2, self._max_backoff())
            if first:
                self._down_since = time.monotonic()
                self.outages += 1
            if self.settings is None or self._spool_broken:
                self._memory_retry(exc, opening=opening)
                return
            # writes the sink took but has not made durable yet must be flushed before more
            self._needs_flush = self._needs_flush or flushing or self._unflushed
            self._spill()
            never_opened = opening and not self._opened
            if first:
                (log.error if never_opened else log.warning)(
                    "cannot create events output, spooling its events until it is back"
                    if never_opened
                    else "sink down, spooling its events until it is back",
                    sink=self.sink.name,
                    error=str(exc),
                    retry_in=round(delay, 2),
                    spool=self.spool.path if self.spool else None,
                )
            elif self._attempts <= 3 or self._attempts % LOG_EVERY == 0:
                log.warning(
                    "sink still down, retrying",
                    sink=self.sink.name,
                    error=str(exc),
                    attempt=self._attempts,
                    retry_in=round(delay, 2),
                    spooled=self.spooled,
                )

    def _memory_retry(self, exc: SinkError, *, opening: bool) -> None:
        """No spool: the batch stays at the head of the queue; give up after ``retries``.
        ``cond`` held."""
        if opening or self._attempts > self.retries:
            what = "cannot create events output" if opening else "sink failed"
            log.error(f"{what}, disabling it", sink=self.sink.name, error=str(exc))
            self.failed = True
            self._release_waiters()
            return
        log.warning(
            "sink error, retrying", sink=self.sink.name, error=str(exc), attempt=self._attempts
        )

    def _succeeded(self) -> None:
        """A call worked after failures: no more backoff.  ``cond`` held."""
        if self._attempts and self._down_since is not None:
            now = time.monotonic()
            self._back_at = now
            self._drained_before = self.drained_events
            log.info(
                "sink is back",
                sink=self.sink.name,
                down_seconds=round(now - self._down_since, 1),
                failed_attempts=self._attempts,
                spooled=self.spooled,
            )
        self._attempts = 0
        self._retry_at = 0.0
        self._backoff = self._first_backoff()
        if self._down_since is not None and not self._backlog():
            self._clear_down()

    def _clear_down(self) -> None:
        """The outage is over: the sink works and the spool is empty.  ``cond`` held."""
        if self._down_since is not None:
            now = time.monotonic()
            self.outage_seconds += now - self._down_since
            log.info(
                "sink spool drained",
                sink=self.sink.name,
                events=self.drained_events - self._drained_before,
                drain_seconds=round(now - (self._back_at or now), 2),
                outage_seconds=round(now - self._down_since, 1),
            )
        self._down_since = None
        self._back_at = None
        self._cond.notify_all()

    def _disable(self, exc: BaseException, *, opening: bool) -> None:
        what = "cannot create events output" if opening else "sink failed"
        log.error(f"{what}, disabling it", sink=self.sink.name, error=str(exc))
        with self._cond:
            self.failures += 1
            self.failed = True
            self._release_waiters()

    def _finish(self) -> None:
        """Close the sink; say what is left in the spool for the next daemon."""
        with self._cond:
            self._stopping = True
            if self._items and self.down:
                self._spill()
            lost = sum(item.count for item in self._items if isinstance(item, Batch))
            self._release_waiters()
            self._sync_spool()
            if self.down and self._down_since is not None:
                self.outage_seconds += time.monotonic() - self._down_since
        if lost and not self.failed:
            log.error("sink down at exit: events lost", sink=self.sink.name, events=lost)
        if self._opened:
            try:
                self.sink.close()
            except Exception as exc:  # isolation
                if not self.failed:
                    log.error("sink close failed", sink=self.sink.name, error=str(exc))
        spool = self.spool
        if spool is not None and spool.is_open:
            if spool.batches:
                log.warning(
                    "events left spooled for the next daemon",
                    sink=self.sink.name,
                    events=spool.events,
                    batches=spool.batches,
                    spool=spool.path,
                )
            spool.close()


class SinkSet:
    """All configured sinks; each event batch goes to every one of them.

    ``spool``: where and how the sinks spool while they are down (None: memory only).
    """

    def __init__(
        self,
        sinks: Sequence[Sink],
        *,
        processes: bool = True,
        spool: SpoolSettings | None = None,
    ) -> None:
        self.workers: list[SinkWorker | ProcessSinkWorker] = [
            ProcessSinkWorker(s, spool=spool)
            if processes and getattr(s, "cpu_bound", False)
            else SinkWorker(s, spool=spool)
            for s in sinks
        ]

    def __bool__(self) -> bool:
        return bool(self.workers)

    def start(self) -> None:
        for w in self.workers:
            w.start()

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            for w in self.workers:
                w.put(batch)

    def flush(self) -> None:
        for w in self.workers:
            w.flush()

    def close(self) -> None:
        """Stop every worker at once (each may wait up to its drain timeout for a down sink)."""
        for w in self.workers:
            w.request_stop()
        for w in self.workers:
            w.join()

    def stats(self) -> list[dict[str, Any]]:
        """Per sink: name, queued batches, spooled events, failures, events written."""
        return [{"name": w.sink.name, **w.stats()} for w in self.workers]
