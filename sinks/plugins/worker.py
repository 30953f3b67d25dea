"""One plugin on its own thread: bounded start and stop, a buffer, ticks, contained errors.

The upstream contract runs every plugin on one dedicated thread fed by a
buffer; this is that thread.  What the buffer does when the plugin falls behind
is the overflow policy: ``drop-newest`` / ``drop-oldest`` (upstream's, counted
and logged at the 1st and every 1000th drop), or ``spool`` (ours), where
:meth:`PluginWorker.offer_batch` refuses a batch that does not fit and the
delivery runtime keeps it in the plugin's durable spool until the plugin has
room (:mod:`sinks.plugins.sink`).

Events are queued as the daemon's event objects; the ``(name, kw)`` payload is
built on this thread, so the daemon pays for a plugin no more than an append.
A plugin stuck in a hook cannot hold the daemon: start and stop are waited
for at most their timeouts, and the thread is a daemon thread.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.config import DROP_OLDEST, PluginSettings
from sinks.plugins.contract import call_start, event_filter, payload
from sinks.plugins.properties import PluginProperties
from sinks.plugins.state import PluginState

log = structlog.get_logger(__name__)

DROP_LOG_EVERY = 1000
CHUNK = 256  # events the plugin's thread takes from its queue at once


def _bounded(
    fn: Callable[[], None], timeout: float, name: str
) -> tuple[threading.Thread, BaseException | None]:
    """Run ``fn`` on a helper thread for at most ``timeout``: (the helper, its exception).

    The helper is still alive when ``fn`` did not finish in time (a thread cannot be killed).
    """
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - a plugin's failure is reported, not raised
            outcome.append(exc)
        else:
            outcome.append(None)

    helper = threading.Thread(target=run, name=name, daemon=True)
    helper.start()
    helper.join(timeout if timeout > 0 else None)
    return helper, outcome[0] if outcome else None


class PluginCounters:
    """What every plugin worker (thread or process) reports, and how it counts a failure."""

    def __init__(self, settings: PluginSettings) -> None:
        self.settings = settings
        self.name = settings.name
        self.filter: tuple[str, ...] | None = None  # prefixes of the events it gets (None: all)
        self.state = "new"  # new, running, stopped, skipped, stuck
        self.delivered = 0  # events handed to handle_event (raised or not)
        self.dropped = 0
        self.errors = 0  # hook calls that raised (and, isolated, process deaths)
        self.last_error: str | None = None

    def _error(self, text: str) -> None:
        self.errors += 1
        self.last_error = text

    def _log_stopped(self, **more: Any) -> None:
        log.info(
            "plugin stopped",
            plugin=self.name,
            delivered=self.delivered,
            dropped=self.dropped,
            errors=self.errors,
            **more,
        )

    def _counters(self, queued: int) -> PluginState:
        return PluginState(
            name=self.name,
            state=self.state,
            isolation=self.settings.isolation,
            overflow_policy=self.settings.overflow_policy,
            delivered=self.delivered,
            queued=queued,
            dropped=self.dropped,
            errors=self.errors,
            last_error=self.last_error,
        )


class PluginWorker(PluginCounters):
    """The plugin object, its buffer and its thread; counters for the status pages."""

    def __init__(self, settings: PluginSettings, plugin: Any) -> None:
        super().__init__(settings)
        self.plugin = plugin
        self.ticks = 0
        self._items: deque[StampedeEvent] = deque()
        self._busy = False  # inside handle_event / tick
        self._chunk: list[StampedeEvent] = []  # taken from the queue, being handled
        self._pos = 0  # index in _chunk of the event handle_event is running for
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=f"plugin-{self.name}", daemon=True)

    # ------------------------------------------------------------------ life cycle
    def start(self, props: Mapping[str, str], *, restart: bool) -> bool:
        """Call ``start`` (bounded by start_timeout), then run the thread; False: skipped."""
        own = PluginProperties(props)
        helper, exc = _bounded(
            lambda: call_start(self.plugin, own, restart),
            self.settings.start_timeout,
            f"plugin-{self.name}-start",
        )
        if helper.is_alive():
            self.state = "skipped"
            self._error(f"start() did not return within {self.settings.start_timeout:g} s")
            log.error("plugin start timed out, skipping it", plugin=self.name)
            threading.Thread(target=self._late_cleanup, args=(helper,), daemon=True).start()
            return False
        if exc is not None:
            self.state = "skipped"
            self._error(f"start() raised {exc!r}")
            log.error("plugin start failed, skipping it", plugin=self.name, error=repr(exc))
            return False
        self.filter = event_filter(self.plugin, self.settings.events, self.name)
        self.state = "running"
        self._thread.start()
        log.info("plugin started", plugin=self.name, restart=restart, events=self.filter or "all")
        return True

    def _late_cleanup(self, helper: threading.Thread) -> None:
        """A timed-out start() that returns after all gets a bounded stop(), as upstream does."""
        helper.join()
        self._call_stop()

    def stop(self) -> None:
        """Drain and join (bounded by join_timeout), then ``stop()`` (bounded too)."""
        if self.state != "running":
            return
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(self.settings.join_timeout if self.settings.join_timeout > 0 else None)
        if self._thread.is_alive():
            self.state = "stuck"
            left = len(self._items)
            self._error(
                f"did not finish within join_timeout ({self.settings.join_timeout:g} s); "
                "stop() skipped"
            )
            log.error(
                "plugin did not finish in time; stop() skipped",
                plugin=self.name,
                join_timeout=self.settings.join_timeout,
                undelivered=left,
                delivered=self.delivered,
                dropped=self.dropped,
            )
            return
        self.state = "stopped"
        self._call_stop()
        self._log_stopped()

    def _call_stop(self) -> None:
        stop = getattr(self.plugin, "stop", None)
        if stop is None:
            return
        helper, exc = _bounded(stop, self.settings.join_timeout, f"plugin-{self.name}-stop")
        if helper.is_alive():
            self._error(f"stop() did not return within {self.settings.join_timeout:g} s")
            log.error("plugin stop() timed out", plugin=self.name)
        elif exc is not None:
            self._error(f"stop() raised {exc!r}")
            log.error("plugin stop() failed", plugin=self.name, error=repr(exc))

    # ------------------------------------------------------------------ producer side
    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _in_hand(self) -> int:
        """Events taken from the queue and not finished yet."""
        return len(self._chunk) - self._pos if self._busy else 0

    @property
    def pending(self) -> int:
        """Events queued or being handled."""
        return len(self._items) + self._in_hand()

    def offer(self, events: Sequence[StampedeEvent]) -> None:
        """Queue events under a drop policy: never blocks, loses what does not fit (counted)."""
        if not events or self.state != "running":
            return
        size = self.settings.queue_size
        oldest = self.settings.overflow_policy == DROP_OLDEST
        with self._cond:
            items = self._items
            lost = 0
            for event in events:
                if size > 0 and len(items) >= size:
                    lost += 1
                    if not oldest:
                        continue
                    items.popleft()
                items.append(event)
            self._cond.notify()
        if lost:
            self._count_drops(lost)

    def offer_batch(self, events: Sequence[StampedeEvent], *, force: bool = False) -> bool:
        """Queue all of ``events`` or none (spool policy): False when they do not fit."""
        if self.state != "running":
            return False
        size = self.settings.queue_size
        with self._cond:
            held = len(self._items) + self._in_hand()
            if not force and size > 0 and held and held + len(events) > size:
                return False
            self._items.extend(events)
            self._cond.notify()
        return True

    def wait_idle(self, timeout: float) -> bool:
        """True once every queued event has been handled (False: still busy after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._items or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return not (self._items or self._busy)
                self._cond.wait(left)
        return True

    def unhandled(self) -> list[StampedeEvent]:
        """Events taken but not (known to be) handled: the one in progress, then the queue."""
        with self._cond:
            return (self._chunk[self._pos :] if self._busy else []) + list(self._items)

    def _count_drops(self, lost: int) -> None:
        before = self.dropped
        self.dropped += lost
        if before == 0 or before // DROP_LOG_EVERY != self.dropped // DROP_LOG_EVERY:
            log.warning(
                "plugin buffer full, events dropped",
                plugin=self.name,
                policy=self.settings.overflow_policy,
                dropped=self.dropped,
            )

    # ------------------------------------------------------------------ the plugin's thread
    def _run(self) -> None:
        """Take up to CHUNK queued events at a time (one lock round per chunk, not per event)."""
        interval = self.settings.tick_interval
        handle = getattr(self.plugin, "handle_event", None)
        tick = getattr(self.plugin, "tick", None) if interval > 0 else None
        next_tick = time.monotonic() + interval
        cond = self._cond
        items = self._items
        while True:
            with cond:
                while not items and not self._closing:
                    if tick is None:
                        cond.wait()
                        continue
                    wait = next_tick - time.monotonic()
                    if wait <= 0:
                        break
                    cond.wait(wait)
                if not items and self._closing:
                    return  # drained: no tick after the last event
                take = min(len(items), CHUNK)
                chunk = [items.popleft() for _ in range(take)]
                self._chunk, self._pos, self._busy = chunk, 0, True
            try:
                for pos, event in enumerate(chunk):
                    self._pos = pos
                    if handle is not None:
                        name, kw = payload(event)
                        try:
                            handle(name, kw)
                        except Exception as exc:  # noqa: BLE001 - contained per plugin
                            self._hook_failed("handle_event", exc, name)
                    self.delivered += 1
                    if tick is not None and time.monotonic() >= next_tick:
                        next_tick = self._tick(tick, interval)
                if not chunk and tick is not None:
                    next_tick = self._tick(tick, interval)
            finally:
                with cond:
                    self._busy = False
                    self._chunk = []
                    cond.notify_all()

    def _tick(self, tick: Callable[[], None], interval: float) -> float:
        try:
            tick()
        except Exception as exc:  # noqa: BLE001 - contained per plugin
            self._hook_failed("tick", exc, None)
        self.ticks += 1
        return time.monotonic() + interval

    def _hook_failed(self, hook: str, exc: Exception, event: str | None) -> None:
        self._error(f"{hook}() raised {exc!r}")
        try:
            self._log_failure(hook, exc, event)
        except Exception:  # noqa: BLE001, S110 - the plugin's thread must survive anything
            pass

    def _log_failure(self, hook: str, exc: Exception, event: str | None) -> None:
        if self.errors <= 3 or self.errors % DROP_LOG_EVERY == 0:
            log.error(
                f"plugin {hook}() raised",
                plugin=self.name,
                stampede_event=event,
                error=repr(exc),
                errors=self.errors,
                exc_info=exc if self.errors == 1 else None,
            )

    def snapshot(self) -> PluginState:
        return replace(self._counters(len(self._items) + self._in_hand()), ticks=self.ticks)
