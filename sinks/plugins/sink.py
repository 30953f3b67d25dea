"""A plugin as a sink of the delivery runtime: it gets batches like any sink does.

The runtime (:class:`sinks.runtime.runner.SinkWorker`) drives this from the plugin's own
executor thread, which is the plugin's one worker of the upstream contract: ``write_batch``
calls ``handle_event`` for each event the plugin's filter selects, in order, and returns once
it has (in a child process with ``isolation = process``); ``tick`` is the runtime's idle call
(``Capabilities.ticks``).  The plugin's buffer is the runtime's queue, bounded in events by
``queue_size``, and ``overflow_policy`` is that queue's overflow (:mod:`sinks.runtime.overflow`):
``spool`` sends what does not fit to the plugin's durable spool, the drop policies drop.  So a
spooled batch is forgotten only once the plugin has handled it, also across a daemon restart.

A plugin stuck in ``handle_event`` past ``join_timeout`` at a stop is left behind
(:meth:`PluginSink.abandon`): under ``spool`` what it had taken but not handled is kept
beside its spool (``.taken``) and handed to it first by the next daemon.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.calls import PluginCalls
from sinks.plugins.contract import wants
from sinks.plugins.isolated import ChildPlugin
from sinks.runtime.capabilities import Capabilities
from sinks.runtime.codec import decode_batch, encode_batch
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)


class PluginSink:
    """The runtime's view of one started plugin (its hooks here or in a child process)."""

    def __init__(self, plugin: PluginCalls | ChildPlugin, spool: SpoolSettings | None = None):
        self.plugin = plugin
        self.settings = plugin.settings
        self.name = f"plugin:{plugin.name}"
        self.capabilities = Capabilities(ticks=plugin.settings.tick_interval, durable_writes=True)
        self._spool = spool if plugin.settings.spools else None
        self.closing = False  # its delivery is stopping it (stop() is bounded by itself)
        self._abandoned = False
        self._took_batch = False

    def _taken_path(self) -> str | None:
        """Where a stop leaves the events the plugin took but did not get to (spool policy)."""
        return self._spool.path_for(self) + ".taken" if self._spool is not None else None

    def open(self) -> None:
        """Hand the plugin first what it had taken but not handled when the last daemon stopped.

        Those events are older than anything in the spool, and the runtime opens a sink
        before it delivers its spool, so order holds.  Stale when the outputs start over.
        """
        path = self._taken_path()
        if path is None or not os.path.exists(path):
            return
        assert self._spool is not None
        try:
            if not self._spool.restart:
                with open(path, "rb") as fh:
                    events = decode_batch(fh.read())
                log.info(
                    "plugin gets first what it had taken before",
                    plugin=self.plugin.name,
                    events=len(events),
                )
                self.plugin.handle(events)
            os.unlink(path)
        except (OSError, ValueError) as exc:
            log.error("cannot read the plugin's handed-back events", path=path, error=str(exc))

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self.plugin.handle(wants(self.plugin.filter, events))

    def tick(self) -> None:
        self.plugin.tick()

    def flush(self) -> None:
        """Nothing to do: a batch written is a batch the plugin has handled."""

    def close(self) -> None:
        self.closing = True
        if not self._abandoned:
            self.plugin.stop()
            return
        path = self._taken_path()
        left = self.plugin.unhandled() if self._took_batch else []
        if path is None or not left:
            return
        try:  # spool policy: nothing is lost, the next daemon hands them over first
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".tmp", "wb") as fh:
                fh.write(encode_batch(left))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(path + ".tmp", path)
        except OSError as exc:
            log.error("cannot keep the plugin's unhandled events", path=path, error=str(exc))
            return
        log.warning(
            "plugin stopped with unhandled events; kept for the next daemon",
            plugin=self.plugin.name,
            events=len(left),
        )

    def abandon(self, *, took_batch: bool) -> None:
        """Its delivery did not end within join_timeout (stuck in a hook): stop() is skipped;
        ``took_batch``: the batch in hand was the queue's (not the spool's, which keeps its
        own), so what of it the plugin did not handle is kept when it closes."""
        self._abandoned, self._took_batch = True, took_batch
        undelivered = len(self.plugin.unhandled()) if took_batch else 0
        self.plugin.abandon()
        log.error(
            "plugin did not finish in time; stop() skipped",
            plugin=self.plugin.name,
            join_timeout=self.settings.join_timeout,
            undelivered=undelivered,
            delivered=self.plugin.delivered,
        )
