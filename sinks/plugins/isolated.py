"""``isolation = process``: a plugin's hooks called in a child process.

A plugin that segfaults, leaks or holds the GIL then cannot hurt the daemon.  The child (a
fresh interpreter, :class:`sinks.runtime.child.Child`, the same as ``--sql-process``'s: it shares
no thread or lock state with the daemon) loads the plugin by its entry point and runs
:class:`~sinks.plugins.calls.PluginCalls` in it; the parent
(:class:`ChildPlugin`, the same interface) sends it each batch over a pipe and waits for the
child to say it handled it.  The child is a transport, not a runtime: the plugin's queue,
overflow policy, spool and retries are its delivery's (:mod:`sinks.plugins.sink`), like every
sink's.  A child that dies fails the batch with a retryable error; the delivery retries it
after the runtime's backoff (:class:`~sinks.runtime.policy.RetryPolicy`), and the retry starts
a new child (``restart=False``: the stream does not start over), which gets the whole batch
again: every event at least once.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from monitord.system import loglevel
from sinks.plugins.calls import RUNNING, SKIPPED, STOPPED, STUCK, PluginCalls, PluginCounters
from sinks.plugins.config import PluginSettings
from sinks.runtime.base import SinkError
from sinks.runtime.child import Child, ChildGone
from sinks.runtime.codec import decode_batch, encode_batch

log = structlog.get_logger(__name__)

SPAWN_ALLOWANCE = 20.0  # seconds a child may take to start Python before start() runs


# ---------------------------------------------------------------- the child


SERVE = "sinks.plugins.isolated:serve_plugin"


def serve_plugin(
    conn: Connection, payload: tuple[str, PluginSettings, dict[str, str], bool]
) -> None:
    """Load and start the plugin, then handle batches until told to stop (or the daemon dies:
    the pipe closes, and :mod:`sinks.runtime.child` ends the child)."""
    target, settings, props, restart = payload
    try:
        module, _, attr = target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        plugin = obj()
    except Exception as exc:  # noqa: BLE001 - reported to the daemon
        conn.send(("started", False, f"cannot load {target}: {exc!r}", None))
        return
    calls = PluginCalls(settings, plugin)
    if not calls.start(props, restart=restart):
        conn.send(("started", False, calls.last_error, None))
        return
    conn.send(("started", True, None, calls.filter))
    while True:
        message = conn.recv()
        if message[0] == "events":
            calls.handle(decode_batch(message[1]))
        elif message[0] == "tick":
            calls.tick()
        elif message[0] == "stop":
            calls.stop()
        conn.send(("done", calls.delivered, calls.errors, calls.last_error, calls.ticks))
        if message[0] == "stop":
            return


# ---------------------------------------------------------------- the daemon's side


class ChildPlugin(PluginCounters):
    """:class:`PluginCalls`' interface, the hooks running in a child process."""

    def __init__(self, settings: PluginSettings, target: str) -> None:
        super().__init__(settings)
        self.target = target
        self.restarts = 0
        self._props: dict[str, str] = {}
        self._child: Child | None = None
        self._base = (0, 0, 0)  # delivered, errors, ticks of the children before this one
        self._batch: Sequence[StampedeEvent] = ()

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None else None

    # ------------------------------------------------------------------ life cycle
    def start(self, props: Mapping[str, str], *, restart: bool) -> bool:
        self._props = dict(props)
        why = self._spawn(restart=restart)
        if why is not None:
            self.state = SKIPPED
            self._error(why)
            return False
        self.state = RUNNING
        log.info("plugin started in its own process", plugin=self.name, pid=self.pid)
        return True

    def _spawn(self, *, restart: bool) -> str | None:
        """Start a child and its plugin; None, or why it did not start."""
        child = Child(
            SERVE,
            (self.target, self.settings, self._props, restart),
            title=f"monitord plugin-{self.name}",
            level=loglevel.level(),
        )
        limit = self.settings.start_timeout + SPAWN_ALLOWANCE
        try:
            reply = child.start(limit)
        except ChildGone:
            reply = None
        if reply is None or not reply[1]:
            why = reply[2] if reply else f"start() did not return within {limit:g} s"
            log.error("plugin process did not start", plugin=self.name, error=why)
            child.kill()
            return str(why or "start failed")
        self.filter = reply[3]
        self._child = child
        return None

    def _ensure_child(self) -> Child:
        """The running child; a dead one is replaced here (the runtime's backoff has passed:
        this is the delivery's retry)."""
        if self._child is not None:
            return self._child
        self.restarts += 1
        why = self._spawn(restart=False)
        if why is not None:
            self._error(why)
            raise SinkError(f"plugin {self.name} cannot be restarted: {why}", retryable=True)
        log.info("plugin process restarted", plugin=self.name, pid=self.pid)
        assert self._child is not None
        return self._child

    def _call(self, message: tuple[Any, ...]) -> None:
        """Send a message, wait for the child's answer; its death is a retryable failure."""
        child = self._ensure_child()
        try:
            reply = child.call(message)
        except ChildGone:
            raise self._died() from None
        self._counted(reply)

    def _counted(self, reply: tuple[Any, ...]) -> None:
        """The child's counters (``done``), added to those of the children before it."""
        _, delivered, errors, last_error, ticks = reply
        base_delivered, base_errors, base_ticks = self._base
        self.delivered = base_delivered + delivered
        if base_errors + errors > self.errors:
            self.errors, self.last_error = base_errors + errors, last_error
        self.ticks = base_ticks + ticks

    def _died(self) -> SinkError:
        child, self._child = self._child, None
        exit_code = child.exit_code if child is not None else None
        why = f"plugin process died (exit code {exit_code})"
        self._error(why)
        self._base = (self.delivered, self.errors, self.ticks)
        if self.state == STUCK:  # killed by its host
            return SinkError(why, retryable=True)
        log.error(
            "plugin process died; its batch is retried in a new one",
            plugin=self.name,
            exit_code=exit_code,
            events=len(self._batch),
        )
        return SinkError(why, retryable=True)

    def stop(self) -> None:
        """The child's ``stop()`` (bounded there by join_timeout; a child that does not answer
        within it and a few seconds is killed), then the child ends."""
        if self.state != RUNNING:
            return
        self.state = STOPPED
        child = self._child
        if child is not None:
            try:
                self._counted(child.call(("stop",), timeout=self.settings.join_timeout + 5))
            except ChildGone:
                pass  # it died on the way out, or did not answer (killed): nothing to stop
            child.close(5)
        self._kill()

    def abandon(self) -> None:
        """Stuck past join_timeout: stop() skipped, the child killed."""
        if self.state == RUNNING:
            self.state = STUCK
            self._error(
                f"did not finish within join_timeout ({self.settings.join_timeout:g} s); "
                "stop() skipped"
            )
        self._kill()

    def _kill(self) -> None:
        child = self._child
        if child is not None:
            child.kill()

    # ------------------------------------------------------------------ the hooks
    def handle(self, events: Sequence[StampedeEvent]) -> None:
        self._batch = events
        self._call(("events", encode_batch(events)))
        self._batch = ()

    def tick(self) -> None:
        if self.settings.tick_interval > 0 and self._child is not None:
            try:
                self._call(("tick",))
            except SinkError:
                pass  # the next batch restarts it

    def unhandled(self) -> list[StampedeEvent]:
        """The batch in hand: the child confirms a batch only once it handled all of it."""
        return list(self._batch)
