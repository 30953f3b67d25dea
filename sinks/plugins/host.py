"""The plugins of one daemon (one root workflow): found, configured, started, fed, stopped.

:func:`with_plugins` is the daemon's only entry point: given its sink set and
properties it starts the enabled plugins (bounded, concurrently) and returns a
sink set that also feeds them, or the sink set unchanged when none is enabled.
Each plugin is one sink of the delivery runtime (:class:`sinks.plugins.sink.PluginSink` on a
:class:`sinks.runtime.runner.SinkWorker`: its own thread, the runtime's queue bounded by
``queue_size`` with ``overflow_policy`` as that queue's overflow, under ``spool`` its own
durable spool next to the sinks' spools), so plugins get the runtime's queue, spool, retry and
health and never a copy of them.  In service mode the same happens per followed workflow,
with that workflow's properties.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.calls import SKIPPED, PluginCalls
from sinks.plugins.config import (
    PROCESS,
    PluginConfigError,
    PluginSettings,
    enabled_names,
    parse_settings,
)
from sinks.plugins.contract import Installed, installed_plugins
from sinks.plugins.isolated import ChildPlugin
from sinks.plugins.sink import PluginSink
from sinks.runtime.bounded import BoundedQueue
from sinks.runtime.health import DISABLED, PluginHooks, SinkHealth
from sinks.runtime.overflow import QueueBound
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)

# How long a flush waits for a plugin to catch up before what it has not taken is spooled
# (``spool``) or left in memory (the drop policies): a checkpoint never waits for a plugin.
FLUSH_WAIT = 0.5


@dataclass
class Skipped:
    """An enabled plugin that does not run, and why (for the status pages)."""

    name: str
    reason: str

    def snapshot(self) -> SinkHealth:
        """Disabled from the start: its hooks ``skipped``, and why."""
        hooks = PluginHooks(state=SKIPPED, last_error=self.reason)
        return SinkHealth(self.name, state=DISABLED, last_error=self.reason, plugin=hooks)


def plugin_runner(sink: PluginSink, spool: SpoolSettings | None = None) -> SinkWorker:
    """The runtime's executor for a plugin: its settings are options of the one queue, handed
    to its delivery as that queue (``queue_size`` its bound, ``overflow_policy`` its overflow)."""
    settings = sink.settings
    bound = QueueBound(settings.queue_size, settings.overflow_policy)
    return SinkWorker(
        sink,
        spool=spool if settings.spools else None,
        queue=BoundedQueue(sink.name, bound),
    )


def plugin_health(sink: PluginSink, runner: SinkWorker) -> SinkHealth:
    """A running plugin's health: its delivery's (the one record every sink reports: state,
    dropped, spooled), named after the plugin, with its hooks' life and counters."""
    plugin = sink.plugin
    child = plugin if isinstance(plugin, ChildPlugin) else None
    hooks = PluginHooks(
        state=plugin.state,
        isolation=sink.settings.isolation,
        overflow_policy=sink.settings.overflow_policy,
        delivered=plugin.delivered,
        queued=sum(batch.count for batch in runner.pending_batches()),
        errors=plugin.errors,
        last_error=plugin.last_error,
        ticks=None if child is not None else plugin.ticks,
        restarts=child.restarts if child is not None else None,
        pid=child.pid if child is not None else None,
    )
    return replace(runner.health(), name=plugin.name, plugin=hooks)


class PluginHost:
    """The running plugins of one daemon, each a sink on its own runtime executor."""

    def __init__(self, plugins: Sequence[tuple[PluginSink, SinkWorker]], skipped: list[Skipped]):
        self.plugins = list(plugins)
        self.skipped = skipped

    def __bool__(self) -> bool:
        return bool(self.plugins)

    def start(self) -> None:
        for _, runner in self.plugins:
            runner.start()

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            for _, runner in self.plugins:
                runner.put(batch)

    def flush(self) -> None:
        """Each plugin's queue handled, or (``spool``) durably spooled; never longer than
        :data:`FLUSH_WAIT` per plugin."""
        requests = [(runner, runner.request_flush()) for _, runner in self.plugins]
        for runner, request in requests:
            runner.wait_flushed(request, FLUSH_WAIT)
            if request is not None and not request.done.is_set():
                runner.spill_waiting()

    def request_stop(self) -> None:
        for sink, runner in self.plugins:
            timeout = sink.settings.join_timeout
            runner.request_stop(drain_timeout=timeout if timeout > 0 else None)

    def join(self) -> None:
        """Each plugin drained within its join_timeout (then its stop(), bounded by itself),
        or left behind: a plugin stuck in a hook cannot hold the daemon."""
        began = time.monotonic()
        for sink, runner in self.plugins:
            timeout = sink.settings.join_timeout
            if timeout <= 0:
                runner.join()
            else:
                runner.join(max(0.0, began + timeout - time.monotonic()))
                if not runner.ended() and sink.closing:
                    runner.join()  # draining is over; stop() is bounded by join_timeout itself
            if not runner.ended():
                sink.abandon(took_batch=runner.abandon())
                runner.finish()
            self._log_stopped(sink, runner)

    def _log_stopped(self, sink: PluginSink, runner: SinkWorker) -> None:
        plugin, health = sink.plugin, runner.health()
        more = {"restarts": plugin.restarts} if isinstance(plugin, ChildPlugin) else {}
        log.info(
            "plugin stopped",
            plugin=plugin.name,
            state=plugin.state,
            delivered=plugin.delivered,
            dropped=health.dropped,
            errors=plugin.errors,
            **more,
        )

    def close(self) -> None:
        self.request_stop()
        self.join()

    def snapshot(self) -> list[SinkHealth]:
        """Per plugin its health: its delivery's (``up``; ``draining`` while its overflow waits
        in its spool; ``down`` while a process-isolated one's child is restarted; dropped,
        spooled) and its hooks' (state, delivered, queued, errors, last error)."""
        out = [plugin_health(sink, runner) for sink, runner in self.plugins]
        return out + [s.snapshot() for s in self.skipped]


def load_plugins(
    props: Mapping[str, str], installed: Mapping[str, Installed] | None = None
) -> tuple[list[tuple[PluginSettings, Installed]], list[Skipped]]:
    """Every enabled, installed, well-configured plugin; the rest are skipped (and why)."""
    found = installed_plugins() if installed is None else installed
    ready: list[tuple[PluginSettings, Installed]] = []
    skipped: list[Skipped] = []
    for name in enabled_names(props):
        entry = found.get(name)
        if entry is None:
            log.warning("plugin enabled but not installed", plugin=name)
            skipped.append(Skipped(name, "enabled but not installed"))
            continue
        try:
            settings = parse_settings(name, props)
        except PluginConfigError as exc:
            log.error("bad plugin property, skipping the plugin", plugin=name, error=str(exc))
            skipped.append(Skipped(name, f"bad property: {exc}"))
            continue
        ready.append((settings, entry))
    return ready, skipped


def _make_plugin(settings: PluginSettings, entry: Installed) -> PluginCalls | ChildPlugin | Skipped:
    """The plugin's hooks: called here, or (``isolation = process``) in a child process."""
    if settings.isolation == PROCESS:
        return ChildPlugin(settings, entry.target)
    try:
        plugin = entry.load()()
    except Exception as exc:  # noqa: BLE001 - a broken plugin package skips that plugin
        log.error("cannot load plugin, skipping it", plugin=settings.name, error=repr(exc))
        return Skipped(settings.name, f"cannot load {entry.target}: {exc!r}")
    return PluginCalls(settings, plugin)


def start_plugins(
    props: Mapping[str, str], *, restart: bool, spool: SpoolSettings | None
) -> PluginHost | None:
    """Start the enabled plugins (all at once, each within its start_timeout); None if none."""
    if not enabled_names(props):
        return None
    ready, skipped = load_plugins(props)
    made = [_make_plugin(settings, entry) for settings, entry in ready]
    skipped += [m for m in made if isinstance(m, Skipped)]
    plugins = [m for m in made if not isinstance(m, Skipped)]
    started: dict[str, bool] = {}

    def start(plugin: PluginCalls | ChildPlugin) -> None:
        started[plugin.name] = plugin.start(props, restart=restart)

    threads = [threading.Thread(target=start, args=(p,), daemon=True) for p in plugins]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    running = []
    for plugin in plugins:
        if not started.get(plugin.name):
            skipped.append(Skipped(plugin.name, plugin.last_error or "start failed"))
            continue
        sink = PluginSink(plugin, spool)
        running.append((sink, plugin_runner(sink, spool)))
    if not running and not skipped:
        return None
    return PluginHost(running, skipped)


class SinksAndPlugins:
    """The daemon's sink set with its plugins beside it: every batch goes to both."""

    def __init__(self, sinks: Any, plugins: PluginHost) -> None:
        self.sinks = sinks
        self.plugins = plugins

    def __bool__(self) -> bool:
        return bool(self.sinks) or bool(self.plugins)

    def start(self) -> None:
        self.sinks.start()
        self.plugins.start()

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        self.sinks.publish(batch)
        self.plugins.publish(batch)

    def flush(self) -> None:
        self.sinks.flush()
        self.plugins.flush()

    def health(self) -> list[SinkHealth]:
        """The sinks' (the plugins report theirs in :meth:`PluginHost.snapshot`)."""
        return list(self.sinks.health())

    def close(self) -> None:
        """Plugins and sinks stop at once (a plugin's stop may take its join_timeout)."""
        self.plugins.request_stop()
        try:
            self.sinks.close()
        finally:
            self.plugins.join()


def with_plugins(
    sinks: Any, props: Mapping[str, str], *, restart: bool, spool: SpoolSettings | None
) -> Any:
    """``sinks`` feeding also the plugins ``props`` enable (``sinks`` itself when none).

    Nothing a plugin package does (a broken entry point, a bad distribution) stops the daemon.
    """
    try:
        host = start_plugins(props, restart=restart, spool=spool)
    except Exception as exc:  # noqa: BLE001 - plugins are optional; the sinks are not
        log.error("cannot start the event plugins, running without them", error=repr(exc))
        return sinks
    return sinks if host is None else SinksAndPlugins(sinks, host)


def plugin_snapshot(sinks: object) -> list[SinkHealth]:
    """Per-plugin state of a daemon's sink set, for /healthz, /status.json and /metrics."""
    return sinks.plugins.snapshot() if isinstance(sinks, SinksAndPlugins) else []
