"""One plugin's hooks, called on the caller's thread: bounded start and stop, contained errors.

The caller is the plugin's delivery (:mod:`sinks.plugins.sink`: the runtime's executor thread,
the plugin's one worker as the upstream contract has it) or, with ``isolation = process``,
the child process (:mod:`sinks.plugins.isolated`).  There is no buffer here: the runtime's
queue holds the plugin's events, with its overflow policy (:mod:`sinks.runtime.overflow`).
A plugin stuck in a hook cannot hold the daemon: ``start`` and ``stop`` are waited for at
most their timeouts, and a stuck ``handle_event`` is left behind by its host
(:meth:`PluginCalls.abandon`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from monitord.system.secrets import mask_url_passwords, masked_traceback
from sinks.plugins.config import PluginSettings
from sinks.plugins.contract import call_start, event_filter, payload
from sinks.plugins.properties import PluginProperties
from sinks.runtime.health import SKIPPED

log = structlog.get_logger(__name__)

ERROR_LOG_EVERY = 1000

# A plugin's life: new -> running -> stopped, or skipped (start failed), or stuck (a hook did
# not return within join_timeout: stop() skipped).  Its delivery's state is the runtime's.
NEW, RUNNING, STOPPED, STUCK = "new", "running", "stopped", "stuck"  # and SKIPPED: never ran


def bounded(
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
    """What every plugin (in this process or a child) reports, and how it counts a failure."""

    def __init__(self, settings: PluginSettings) -> None:
        self.settings = settings
        self.name = settings.name
        self.filter: tuple[str, ...] | None = None  # prefixes of the events it gets (None: all)
        self.state = NEW
        self.delivered = 0  # events handed to handle_event (raised or not)
        self.errors = 0  # hook calls that raised (and, isolated, process deaths)
        self.last_error: str | None = None
        self.ticks = 0

    def _error(self, text: str) -> str:
        """Count a failure; its text, any URL password in it masked (a plugin's exception may
        quote a database or broker URL), which is what the log and the health show."""
        self.errors += 1
        self.last_error = mask_url_passwords(text)
        return self.last_error


class PluginCalls(PluginCounters):
    """The plugin object and its hooks; the batch it is handling (for :meth:`unhandled`)."""

    def __init__(self, settings: PluginSettings, plugin: Any) -> None:
        super().__init__(settings)
        self.plugin = plugin
        self._handle = getattr(plugin, "handle_event", None)
        every = settings.tick_interval
        self._tick = getattr(plugin, "tick", None) if every > 0 else None
        self._next_tick = time.monotonic() + every
        self._batch: Sequence[StampedeEvent] = ()
        self._pos = 0  # index in _batch of the event handle_event runs for
        self._left = False  # abandoned by its host: handle nothing more

    # ------------------------------------------------------------------ life cycle
    def start(self, props: Mapping[str, str], *, restart: bool) -> bool:
        """Call ``start`` (bounded by start_timeout); False: skipped."""
        own = PluginProperties(props)
        helper, exc = bounded(
            lambda: call_start(self.plugin, own, restart),
            self.settings.start_timeout,
            f"plugin-{self.name}-start",
        )
        if helper.is_alive():
            self.state = SKIPPED
            self._error(f"start() did not return within {self.settings.start_timeout:g} s")
            log.error("plugin start timed out, skipping it", plugin=self.name)
            threading.Thread(target=self._late_cleanup, args=(helper,), daemon=True).start()
            return False
        if exc is not None:
            self.state = SKIPPED
            error = self._error(f"start() raised {exc!r}")
            log.error("plugin start failed, skipping it", plugin=self.name, error=error)
            return False
        self.filter = event_filter(self.plugin, self.settings.events, self.name)
        self.state = RUNNING
        self._next_tick = time.monotonic() + self.settings.tick_interval
        log.info("plugin started", plugin=self.name, restart=restart, events=self.filter or "all")
        return True

    def _late_cleanup(self, helper: threading.Thread) -> None:
        """A timed-out start() that returns after all gets a bounded stop(), as upstream does."""
        helper.join()
        self._call_stop()

    def stop(self) -> None:
        """``stop()``, bounded by join_timeout (its delivery has drained: no tick after it)."""
        if self.state != RUNNING:
            return
        self.state = STOPPED
        self._call_stop()

    def abandon(self) -> None:
        """It did not finish within join_timeout: stop() is skipped, nothing more is handled."""
        self._left = True
        if self.state == RUNNING:
            self.state = STUCK
            self._error(
                f"did not finish within join_timeout ({self.settings.join_timeout:g} s); "
                "stop() skipped"
            )

    def _call_stop(self) -> None:
        stop = getattr(self.plugin, "stop", None)
        if stop is None:
            return
        helper, exc = bounded(stop, self.settings.join_timeout, f"plugin-{self.name}-stop")
        if helper.is_alive():
            self._error(f"stop() did not return within {self.settings.join_timeout:g} s")
            log.error("plugin stop() timed out", plugin=self.name)
        elif exc is not None:
            error = self._error(f"stop() raised {exc!r}")
            log.error("plugin stop() failed", plugin=self.name, error=error)

    # ------------------------------------------------------------------ the hooks
    def handle(self, events: Sequence[StampedeEvent]) -> None:
        """``handle_event`` for each event in order, ticking between them when due."""
        handle, tick = self._handle, self._tick
        self._batch, self._pos = events, 0
        for pos, event in enumerate(events):
            if self._left:
                return
            self._pos = pos
            if handle is not None:
                name, kw = payload(event)
                try:
                    handle(name, kw)
                except Exception as exc:  # noqa: BLE001 - contained per plugin
                    self._hook_failed("handle_event", exc, name)
            self.delivered += 1
            if tick is not None and time.monotonic() >= self._next_tick:
                self._call_tick(tick)
        self._batch, self._pos = (), 0

    def tick(self) -> None:
        """``tick()`` if one is due (at most once per tick_interval)."""
        if self._tick is not None and not self._left and time.monotonic() >= self._next_tick:
            self._call_tick(self._tick)

    def unhandled(self) -> list[StampedeEvent]:
        """Of the batch in hand, the events not (known to be) handled: the one in progress on."""
        return list(self._batch[self._pos :])

    def _call_tick(self, tick: Callable[[], None]) -> None:
        try:
            tick()
        except Exception as exc:  # noqa: BLE001 - contained per plugin
            self._hook_failed("tick", exc, None)
        self.ticks += 1
        self._next_tick = time.monotonic() + self.settings.tick_interval

    def _hook_failed(self, hook: str, exc: Exception, event: str | None) -> None:
        error = self._error(f"{hook}() raised {exc!r}")
        try:
            if self.errors <= 3 or self.errors % ERROR_LOG_EVERY == 0:
                log.error(
                    f"plugin {hook}() raised",
                    plugin=self.name,
                    stampede_event=event,
                    error=error,
                    errors=self.errors,
                    traceback=masked_traceback(exc) if self.errors == 1 else None,
                )
        except Exception:  # noqa: BLE001, S110 - the plugin's worker must survive anything
            pass
