"""``isolation = process``: a plugin in its own process, restarted with backoff.

A plugin that segfaults, leaks or holds the GIL then cannot hurt the daemon.
The child (spawned, so it shares no thread or lock state with the daemon) loads
the plugin by its entry point and runs the ordinary :class:`PluginWorker` in it;
the parent (:class:`ProcessPluginWorker`, same interface as the worker) sends it
batches over a pipe and keeps every event until the child acknowledges having
handled it.  When the child dies, the next delivery attempt starts a new one
(``restart=False``: the stream does not start over) after a backoff, and sends
it first the events the dead one had not acknowledged, so a plugin gets every
event at least once; under the ``spool`` policy the runtime meanwhile keeps the
new events in the plugin's spool.  Under the drop policies the newest events
are the ones dropped (the oldest are already in the child).
"""

from __future__ import annotations

import importlib
import multiprocessing
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.config import THREAD, PluginSettings
from sinks.plugins.state import PluginState
from sinks.plugins.worker import PluginCounters, PluginWorker
from sinks.runtime.base import SinkError
from sinks.runtime.codec import decode_batch, encode_batch
from sinks.runtime.policy import DeliveryState, RetryPolicy

log = structlog.get_logger(__name__)

FIRST_BACKOFF = 0.5
MAX_BACKOFF = 30.0
SPAWN_ALLOWANCE = 20.0  # seconds a child may take to start Python before start() runs
ACK_EVERY = 0.05


# ---------------------------------------------------------------- the child


def _child_main(
    target: str, settings: PluginSettings, props: dict[str, str], restart: bool, conn: Connection
) -> None:
    """Load and start the plugin, then handle batches until told to stop (or the daemon dies)."""
    from monitord.system.logs import configure_logging

    configure_logging(0)
    send_lock = threading.Lock()

    def send(message: tuple[Any, ...]) -> None:
        with send_lock:
            conn.send(message)

    try:
        module, _, attr = target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        plugin = obj()
    except Exception as exc:  # noqa: BLE001 - reported to the daemon
        send(("started", False, f"cannot load {target}: {exc!r}", None))
        return
    worker = PluginWorker(replace(settings, queue_size=0, isolation=THREAD), plugin)
    if not worker.start(props, restart=restart):
        send(("started", False, worker.last_error, None))
        return
    send(("started", True, None, worker.filter))
    done = threading.Event()

    def report() -> None:
        last = None
        while not done.wait(ACK_EVERY):
            now = (worker.delivered, worker.errors)
            if now != last:
                last = now
                send(("ack", worker.delivered, worker.errors, worker.last_error))

    threading.Thread(target=report, daemon=True).start()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the daemon is gone: so are we
        if message[0] == "events":
            worker.offer_batch(decode_batch(message[1]), force=True)
        elif message[0] == "stop":
            worker.stop()
            done.set()
            send(("ack", worker.delivered, worker.errors, worker.last_error))
            send(("stopped", worker.state))
            return


# ---------------------------------------------------------------- the daemon's side


class ProcessPluginWorker(PluginCounters):
    """:class:`PluginWorker`'s interface, the plugin running in a child process."""

    def __init__(self, settings: PluginSettings, target: str) -> None:
        super().__init__(settings)  # ``delivered``: over every child
        self.target = target
        self.restarts = 0
        self._props: dict[str, str] = {}
        self._cond = threading.Condition()
        self._unacked: deque[StampedeEvent] = deque()  # sent, not yet handled, in order
        self._acked = 0  # acknowledged by the current child
        self._child_errors = 0
        self._proc: Any = None
        self._conn: Connection | None = None
        self._stopped_state: str | None = None
        # restarts of a dead child: the runtime's retry policy (jittered, capped backoff)
        self._restarting = DeliveryState(RetryPolicy(first=FIRST_BACKOFF, cap=MAX_BACKOFF))
        self._ctx = multiprocessing.get_context("spawn")

    # ------------------------------------------------------------------ life cycle
    def start(self, props: Mapping[str, str], *, restart: bool) -> bool:
        self._props = dict(props)
        if not self._spawn(restart=restart):
            self.state = "skipped"
            return False
        self.state = "running"
        log.info("plugin started in its own process", plugin=self.name, pid=self._proc.pid)
        return True

    def _spawn(self, *, restart: bool) -> bool:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_child_main,
            args=(self.target, self.settings, self._props, restart, child),
            name=f"monitord-plugin-{self.name}",
            daemon=True,
        )
        proc.start()
        child.close()
        limit = self.settings.start_timeout + SPAWN_ALLOWANCE
        reply = parent.recv() if parent.poll(limit) else None
        if reply is None or not reply[1]:
            why = reply[2] if reply else f"start() did not return within {limit:g} s"
            self._error(why or "start failed")
            log.error("plugin process did not start", plugin=self.name, error=why)
            proc.kill()
            proc.join(5)
            parent.close()
            return False
        self.filter = reply[3]
        with self._cond:
            self._proc, self._conn = proc, parent
            self._acked = 0
            self._child_errors = 0
        threading.Thread(
            target=self._read, args=(parent, proc), name=f"plugin-{self.name}-acks", daemon=True
        ).start()
        return True

    def _read(self, conn: Connection, proc: Any) -> None:
        """Acknowledgements from one child; its death is noticed here."""
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "ack":
                self._on_ack(message[1], message[2], message[3])
            elif message[0] == "stopped":
                self._stopped_state = message[1]
        proc.join(5)
        with self._cond:
            if self._proc is proc:
                self._proc = None
                self._conn = None
                if self.state == "running":
                    why = f"plugin process died (exit code {proc.exitcode})"
                    self._error(why)
                    log.error(
                        "plugin process died; restarting it with backoff",
                        plugin=self.name,
                        exit_code=proc.exitcode,
                        unacknowledged=len(self._unacked),
                        retry_in=round(self._restart_later(why), 2),
                    )
            self._cond.notify_all()

    def _on_ack(self, handled: int, errors: int, last_error: str | None) -> None:
        with self._cond:
            for _ in range(handled - self._acked):
                if self._unacked:
                    self._unacked.popleft()
            self.delivered += handled - self._acked
            self._acked = handled
            if errors > self._child_errors:
                self.errors += errors - self._child_errors
                self._child_errors = errors
                self.last_error = last_error
            if handled and self._restarting.attempts:
                self._restarting.succeeded(backlog=False)
            self._cond.notify_all()

    def _restart_later(self, why: str) -> float:
        """The child is gone (``_cond`` held): when to start the next, by the runtime's policy."""
        return self._restarting.failed(SinkError(why, retryable=True), can_wait=True).delay

    def ensure_running(self) -> bool:
        """Restart a dead child once its backoff is over; True while one runs."""
        with self._cond:
            if self._proc is not None:
                return True
            if self.state != "running" or self._restarting.wait() > 0:
                return False
            resend = list(self._unacked)
        self.restarts += 1
        if not self._spawn(restart=False):
            with self._cond:
                self._restart_later(self.last_error or "restart failed")
            return False
        log.info("plugin process restarted", plugin=self.name, resending=len(resend))
        if resend:
            self._send(resend, track=False)
        return True

    def stop(self) -> None:
        """Drain (a child that dies meanwhile is restarted), stop the child; all bounded."""
        if self.state != "running":
            return
        deadline = time.monotonic() + self.settings.join_timeout
        while self._unacked and time.monotonic() < deadline:
            if self.ensure_running():
                self.wait_idle(min(0.5, max(0.0, deadline - time.monotonic())))
            else:
                time.sleep(0.05)  # the restart backoff
        with self._cond:
            conn, proc = self._conn, self._proc
            self.state = "stopping"
        if conn is not None and proc is not None:
            try:
                conn.send(("stop",))
            except OSError:
                pass
            proc.join(2 * self.settings.join_timeout + 5)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
        self.state = self._stopped_state or "stuck"
        self._log_stopped(restarts=self.restarts)

    # ------------------------------------------------------------------ producer side
    @property
    def alive(self) -> bool:
        return self.ensure_running()

    @property
    def pending(self) -> int:
        return len(self._unacked)

    def _send(self, events: Sequence[StampedeEvent], *, track: bool = True) -> bool:
        conn = self._conn
        if conn is None:
            return False
        if track:
            with self._cond:
                self._unacked.extend(events)
        try:
            conn.send(("events", encode_batch(events)))
        except (OSError, ValueError):
            return track  # kept unacknowledged: the next child gets them
        return True

    def offer(self, events: Sequence[StampedeEvent]) -> None:
        if not events or self.state != "running":
            return
        size = self.settings.queue_size
        room = len(events) if size <= 0 else max(0, size - len(self._unacked))
        if not self.ensure_running():
            room = 0
        if room < len(events):
            lost = len(events) - room
            self.dropped += lost
            log.warning(
                "plugin buffer full, events dropped", plugin=self.name, dropped=self.dropped
            )
            events = events[:room]
        if events:
            self._send(events)

    def offer_batch(self, events: Sequence[StampedeEvent], *, force: bool = False) -> bool:
        if self.state != "running" or not self.ensure_running():
            return False
        size = self.settings.queue_size
        held = len(self._unacked)
        if not force and size > 0 and held and held + len(events) > size:
            return False
        return self._send(events)

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._unacked:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def unhandled(self) -> list[StampedeEvent]:
        with self._cond:
            return list(self._unacked)

    def snapshot(self) -> PluginState:
        pid = self._proc.pid if self._proc is not None else None
        return replace(self._counters(len(self._unacked)), restarts=self.restarts, pid=pid)
