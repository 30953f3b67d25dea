"""A sink driven from a child process instead of a thread.

The SQL loader is pure-Python work per event; in a thread it competes with the
parser for the GIL, so a replay pays for both one after the other.  In its own
process the loader runs on the second core while the parser keeps the first.
Batches cross the process boundary as one orjson document each (``[[name,
attrs], ...]``), which costs far less than pickling the event objects.

This is only an executor of the delivery runtime: the child runs a
:class:`sinks.runtime.runner.SinkWorker` (the same :class:`~sinks.runtime.delivery.Delivery`, so the
same policy and spool); the parent's handle has the same contract
(``start/put/flush/stop``, ``failed``, ``events_written``, ``queued``/``spooled``/
``failures``, ``health()``) from what the child reports.  A permanent failure inside
the child disables this sink only (logged there and reported here).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from sinks.runtime.base import Sink
from sinks.runtime.codec import encode_batch
from sinks.runtime.health import SinkHealth, destination_of
from sinks.runtime.marks import marks_of
from sinks.runtime.policy import DISABLED, DOWN
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)

STATS_INTERVAL = 1.0  # seconds between the child's counter reports while idle


def _pid_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (killed, not yet reaped) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def _exit_with_parent(parent_pid: int, interval: float = 1.0) -> None:
    """End this child when the daemon is gone (SIGKILL gives it no chance to stop us).

    The child's parent is the forkserver, not the daemon, so PR_SET_PDEATHSIG
    cannot help; an unfinished batch is rolled back by the database and the
    next daemon recovers from its checkpoint.
    """
    while True:
        time.sleep(interval)
        if not _pid_alive(parent_pid):
            _stop_orphaned_forkserver()
            os._exit(70)


def _stop_orphaned_forkserver() -> None:
    """The forkserver outlives a SIGKILLed daemon too (and keeps the resource tracker alive)."""
    server = os.getppid()
    try:
        with open(f"/proc/{server}/cmdline", "rb") as fh:
            is_forkserver = b"multiprocessing.forkserver" in fh.read()
    except OSError:
        return
    if server > 1 and is_forkserver:
        try:
            os.kill(server, signal.SIGTERM)
        except OSError:
            pass


def _child_main(
    sink: Sink,
    inbox: Any,
    outbox: Any,
    verbosity: int,
    parent_pid: int,
    spool: SpoolSettings | None = None,
    level: int | None = None,
) -> None:
    """The child: a :class:`~sinks.runtime.runner.SinkWorker` (spool included) fed from ``inbox``.

    While the sink is down the worker appends each batch to the spool at once, so the
    inbox keeps draining and the daemon never waits on the dead server.  ``level``: the
    parent's log level when it started the child (``-q``, ``-v``), else ``verbosity``'s.
    """
    from monitord.system import loglevel
    from monitord.system.logs import configure_logging
    from sinks.runtime.delivery import Batch
    from sinks.runtime.runner import SinkWorker

    configure_logging(verbosity)
    if level is not None:
        loglevel.set_level(level)
    threading.Thread(
        target=_exit_with_parent, args=(parent_pid,), name="parent-watch", daemon=True
    ).start()
    worker = SinkWorker(sink, spool=spool)
    worker.start()
    reported: list[SinkHealth | None] = [None]
    last = time.monotonic()

    def report(kind: str = "stats") -> None:
        """The child's health record (the runtime's, relayed as is)."""
        nonlocal last
        health = worker.health()
        if kind != "stats" or health != reported[0]:
            reported[0] = health
            outbox.put((kind, health))
        last = time.monotonic()

    while True:
        try:
            item = inbox.get(timeout=STATS_INTERVAL)
        except queue.Empty:
            report()
            continue
        if item is None:
            break
        if item == b"flush":
            worker.flush()
            report("flushed")
            continue
        count, data = item
        worker.put_batch(Batch(count, data=data))
        if (
            worker.failed and not (reported[0] is not None and reported[0].disabled)
        ) or time.monotonic() - last > STATS_INTERVAL:
            report()
    worker.stop()
    report("closed")


def _log_level() -> int:
    from monitord.system import loglevel

    return loglevel.level()


class ProcessSinkWorker:
    """The parent's handle on a sink process: same interface as ``SinkWorker``."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_queue: int = 4,
        verbosity: int = 0,
        spool: SpoolSettings | None = None,
    ) -> None:
        self.sink = sink
        self.failed = False
        self.events_written = 0
        # as the child last reported it
        self.child_health = SinkHealth(sink.name, destination=destination_of(sink))
        self._failed_at: float | None = None
        ctx = multiprocessing.get_context("forkserver")
        self._inbox = ctx.Queue(maxsize=max_queue)
        self._outbox = ctx.Queue()
        self._proc = ctx.Process(
            target=_child_main,
            args=(sink, self._inbox, self._outbox, verbosity, os.getpid(), spool, _log_level()),
            daemon=True,
        )
        self._flushed = threading.Event()
        self._closed = threading.Event()
        self._reader = threading.Thread(
            target=self._read, name=f"sink-{sink.name}-acks", daemon=True
        )

    @property
    def pid(self) -> int | None:
        """The child's process id (a resumed daemon waits for a crashed one's to be gone)."""
        return self._proc.pid

    # counters, as the child last reported them (plus what waits in the pipe)
    @property
    def queued(self) -> int:
        try:
            waiting = self._inbox.qsize()
        except (NotImplementedError, OSError):
            waiting = 0
        return waiting + self.child_health.queued

    @property
    def spooled(self) -> int:
        return self.child_health.spooled

    @property
    def failures(self) -> int:
        return self.child_health.failures

    @property
    def down(self) -> bool:
        return self.health().state == DOWN

    def health(self) -> SinkHealth:
        """The child's delivery health as it last reported it (disabled if the child died)."""
        snap = replace(self.child_health, events_written=self.events_written)
        if self.failed and snap.state != DISABLED:
            snap = replace(
                snap, state=DISABLED, since=self._failed_at, last_error="sink process died"
            )
        return snap

    def start(self) -> None:
        self._proc.start()
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                kind, health = self._outbox.get()
            except (EOFError, OSError):
                break
            self.child_health = health
            self.events_written = health.events_written
            if health.disabled:
                self.failed = True
            if kind == "flushed":
                self._flushed.set()
            elif kind == "closed":
                self._closed.set()
                return

    def _alive(self) -> bool:
        if self._proc.is_alive():
            return True
        if not self.failed and not self._closed.is_set():
            log.error(
                "sink process died, disabling it", sink=self.sink.name, exitcode=self._proc.exitcode
            )
            self.failed = True
            self._failed_at = time.time()
        return False

    def put(self, batch: Sequence[StampedeEvent]) -> None:
        if self.failed or not self._alive():
            return
        self._inbox.put((len(batch), encode_batch(batch, marks_of(batch))))

    def flush(self, timeout: float | None = None) -> None:
        if self.failed or not self._alive():
            return
        self._flushed.clear()
        self._inbox.put(b"flush")
        while not self._flushed.wait(1.0):
            if not self._alive():
                return

    def request_stop(self) -> None:
        if self._proc.is_alive():
            self._inbox.put(None)

    def join(self) -> None:
        """Wait for the child (it may spend its drain timeout on a down sink first)."""
        while not self._closed.wait(1.0):
            if not self._proc.is_alive():
                break
        self._proc.join(timeout=30)
        if self._proc.is_alive():
            self._proc.kill()

    def stop(self) -> None:
        self.request_stop()
        self.join()
