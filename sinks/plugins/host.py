"""The plugins of one daemon (one root workflow): found, configured, started, fed, stopped.

:func:`with_plugins` is the daemon's only entry point: given its sink set and
properties it starts the enabled plugins (bounded, concurrently) and returns a
sink set that also feeds them, or the sink set unchanged when none is enabled.
Each plugin is one sink of the delivery runtime (:class:`sinks.runtime.runner.SinkWorker`,
its own thread and, under the ``spool`` policy, its own durable spool next to
the sinks' spools), so plugins get the runtime's spool, retry and health and
never a copy of them.  In service mode the same happens per followed workflow,
with that workflow's properties.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.config import (
    PROCESS,
    PluginConfigError,
    PluginSettings,
    enabled_names,
    parse_settings,
)
from sinks.plugins.contract import Installed, installed_plugins
from sinks.plugins.sink import PluginSink
from sinks.plugins.state import PluginState
from sinks.plugins.worker import PluginWorker
from sinks.runtime.health import SinkHealth
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)


@dataclass
class Skipped:
    """An enabled plugin that does not run, and why (for the status pages)."""

    name: str
    reason: str

    def snapshot(self) -> PluginState:
        return PluginState(name=self.name, state="skipped", last_error=self.reason)


class PluginHost:
    """The running plugins of one daemon, each behind its own runtime worker."""

    def __init__(self, plugins: Sequence[tuple[PluginWorker, SinkWorker]], skipped: list[Skipped]):
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
        for _, runner in self.plugins:
            runner.flush()

    def request_stop(self) -> None:
        for _, runner in self.plugins:
            runner.request_stop()

    def join(self) -> None:
        for _, runner in self.plugins:
            runner.join()

    def close(self) -> None:
        self.request_stop()
        self.join()

    def snapshot(self) -> list[PluginState]:
        """Per plugin: state, delivered, queued, dropped, errors, last error, and its delivery's
        health (``up``; ``down`` while the plugin has no room and its events wait in the
        spool; ``draining`` while it catches up)."""
        out = [replace(w.snapshot(), delivery=runner.health()) for w, runner in self.plugins]
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


def _make_worker(settings: PluginSettings, entry: Installed) -> Any:
    """The plugin's worker: a thread here, or (``isolation = process``) a child process."""
    if settings.isolation == PROCESS:
        from sinks.plugins.isolated import ProcessPluginWorker

        return ProcessPluginWorker(settings, entry.target)
    try:
        plugin = entry.load()()
    except Exception as exc:  # noqa: BLE001 - a broken plugin package skips that plugin
        log.error("cannot load plugin, skipping it", plugin=settings.name, error=repr(exc))
        return Skipped(settings.name, f"cannot load {entry.target}: {exc!r}")
    return PluginWorker(settings, plugin)


def start_plugins(
    props: Mapping[str, str], *, restart: bool, spool: SpoolSettings | None
) -> PluginHost | None:
    """Start the enabled plugins (all at once, each within its start_timeout); None if none."""
    if not enabled_names(props):
        return None
    ready, skipped = load_plugins(props)
    made = [_make_worker(settings, entry) for settings, entry in ready]
    skipped += [m for m in made if isinstance(m, Skipped)]
    workers = [m for m in made if not isinstance(m, Skipped)]
    started: dict[str, bool] = {}

    def start(worker: Any) -> None:
        started[worker.name] = worker.start(props, restart=restart)

    threads = [threading.Thread(target=start, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    running = []
    for worker in workers:
        if not started.get(worker.name):
            skipped.append(Skipped(worker.name, worker.last_error or "start failed"))
            continue
        runner = SinkWorker(
            PluginSink(worker, spool), spool=spool if worker.settings.spools else None
        )
        running.append((worker, runner))
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


def plugin_snapshot(sinks: object) -> list[PluginState]:
    """Per-plugin state of a daemon's sink set, for /healthz, /status.json and /metrics."""
    return sinks.plugins.snapshot() if isinstance(sinks, SinksAndPlugins) else []
