"""Isolation and batching around every sink: one worker thread and queue per sink.

The daemon hands each batch of events to :meth:`SinkSet.publish`; every sink
receives it on its own thread, so SQL commits never run on the event loop and
a slow or failing sink never stalls the others.  A retryable failure (lost
connection, locked database) is retried with backoff; a permanent failure
disables that sink only, logged once, exactly as the reference drops a failing
endpoint and carries on with the others.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence

import structlog

from monitord.events import StampedeEvent
from sinks.base import Sink, SinkError

log = structlog.get_logger(__name__)

_STOP = object()
_FLUSH = object()


class SinkWorker:
    """Drives one sink from a dedicated thread."""

    def __init__(self, sink: Sink, *, max_queue: int = 4, retries: int = 10) -> None:
        self.sink = sink
        self.retries = retries
        self.queue: queue.Queue[object] = queue.Queue(maxsize=max_queue)
        self.failed = False
        self.events_written = 0
        self._flushed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"sink-{sink.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, batch: Sequence[StampedeEvent]) -> None:
        if not self.failed:
            self.queue.put(batch)

    def flush(self, timeout: float | None = None) -> None:
        if self.failed or not self._thread.is_alive():
            return
        self._flushed.clear()
        self.queue.put(_FLUSH)
        self._flushed.wait(timeout)

    def stop(self) -> None:
        if self._thread.is_alive():
            self.queue.put(_STOP)
            self._thread.join()

    def _run(self) -> None:
        try:
            self.sink.open()
        except Exception as exc:  # noqa: BLE001 - isolation: any sink error is contained
            log.error(
                "cannot create events output, disabling it", sink=self.sink.name, error=str(exc)
            )
            self.failed = True
            self._drain()
            return
        while True:
            item = self.queue.get()
            if item is _STOP:
                break
            if item is _FLUSH:
                self.run_guarded(self.sink.flush)
                self._flushed.set()
                continue
            batch = item
            assert isinstance(batch, Sequence)
            if not self.failed and self.run_guarded(lambda b=batch: self.sink.write_batch(b)):
                self.events_written += len(batch)
        if not self.failed:
            self.run_guarded(self.sink.close)
        else:
            try:
                self.sink.close()
            except Exception:  # noqa: BLE001
                pass

    def _drain(self) -> None:
        while True:
            item = self.queue.get()
            if item is _FLUSH:
                self._flushed.set()
            if item is _STOP:
                return

    def run_guarded(self, call: object) -> bool:
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                call()  # type: ignore[operator]
                return True
            except SinkError as exc:
                if not exc.retryable or attempt == self.retries:
                    log.error("sink failed, disabling it", sink=self.sink.name, error=str(exc))
                    self.failed = True
                    return False
                log.warning(
                    "sink error, retrying", sink=self.sink.name, error=str(exc), attempt=attempt + 1
                )
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
            except Exception as exc:  # noqa: BLE001 - isolation
                log.error("sink failed, disabling it", sink=self.sink.name, error=str(exc))
                self.failed = True
                return False
        return False


class SinkSet:
    """All configured sinks; each event batch goes to every one of them."""

    def __init__(self, sinks: Sequence[Sink], *, processes: bool = True) -> None:
        from sinks.process_worker import ProcessSinkWorker

        self.workers: list[SinkWorker | ProcessSinkWorker] = [
            ProcessSinkWorker(s) if processes and getattr(s, "cpu_bound", False) else SinkWorker(s)
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
        for w in self.workers:
            w.stop()
