"""A plugin as a sink of the delivery runtime: it gets batches like any sink does.

The runtime (:mod:`sinks.runtime.runner`) drives this from the plugin's own sink
worker thread, with the plugin's own durable spool.  Under the drop policies a
batch is filtered and queued (what does not fit is dropped and counted), so the
runtime never sees a failure.  Under ``spool`` a batch the plugin has no room
for is refused as a *retryable* error: the runtime then keeps it, and every
later batch, in the spool (one disk append; the daemon never waits) and offers
them again, oldest first, with backoff.  ``flush`` means "the plugin has
handled every event it took": the runtime forgets a spooled batch only then, so
a plugin that is stopped or slow loses nothing, also across a daemon restart.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import structlog

from monitord.core.events import StampedeEvent
from sinks.plugins.contract import wants
from sinks.plugins.worker import PluginWorker
from sinks.runtime.base import SinkError
from sinks.runtime.codec import decode_batch, encode_batch
from sinks.runtime.spool import SpoolSettings

log = structlog.get_logger(__name__)

# How long a flush waits for the plugin to catch up before its events go to the spool.
FLUSH_WAIT = 0.5


class PluginSink:
    """The runtime's view of one started plugin."""

    def __init__(self, worker: PluginWorker, spool: SpoolSettings | None = None) -> None:
        self.worker = worker
        self.name = f"plugin:{worker.name}"
        self._last: Sequence[StampedeEvent] | None = None  # the last batch taken
        self._unconfirmed = False  # a flush failed after the last batch was taken
        self._spool = spool if worker.settings.spools else None

    def _handback_path(self) -> str | None:
        """Where a stop leaves the events the plugin took but did not get to (spool policy)."""
        return self._spool.path_for(self) + ".taken" if self._spool is not None else None

    def open(self) -> None:
        """Hand the plugin first what it had taken but not handled when the last daemon stopped.

        Those events are older than anything in the spool, and the runtime opens a sink
        before it delivers its spool, so order holds.  Stale when the outputs start over.
        """
        path = self._handback_path()
        if path is None or not os.path.exists(path):
            return
        assert self._spool is not None
        try:
            if not self._spool.restart:
                with open(path, "rb") as fh:
                    events = decode_batch(fh.read())
                self.worker.offer_batch(events, force=True)
                log.info(
                    "plugin gets first what it had taken before",
                    plugin=self.worker.name,
                    events=len(events),
                )
            os.unlink(path)
        except (OSError, ValueError) as exc:
            log.error("cannot read the plugin's handed-back events", path=path, error=str(exc))

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        worker = self.worker
        if not worker.settings.spools:
            worker.offer(wants(worker.filter, events))
            return
        if self._unconfirmed:
            self._unconfirmed = False
            if self._last is not None and _same(self._last, events):
                return  # the runtime offers again a spooled batch whose flush timed out: taken
        if not worker.alive:
            raise SinkError(f"plugin {worker.name} is not running", retryable=True)
        if not worker.offer_batch(wants(worker.filter, events)):
            raise SinkError(
                f"plugin {worker.name} is busy ({worker.pending} events pending)", retryable=True
            )
        self._last = events

    def flush(self) -> None:
        worker = self.worker
        running = worker.alive  # a process-isolated plugin's dead child restarts here
        if worker.settings.spools and not (running and worker.wait_idle(FLUSH_WAIT)):
            self._unconfirmed = True
            raise SinkError(
                f"plugin {worker.name} is busy ({worker.pending} events pending)", retryable=True
            )

    def close(self) -> None:
        self._last = None
        self.worker.stop()
        path = self._handback_path()
        if path is None or self.worker.state != "stuck":
            return
        left = self.worker.unhandled()
        if left:  # spool policy: nothing is lost, the next daemon hands them over first
            try:
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
                plugin=self.worker.name,
                events=len(left),
            )


def _same(a: Sequence[StampedeEvent], b: Sequence[StampedeEvent]) -> bool:
    return len(a) == len(b) and (not a or (a[0] == b[0] and a[-1] == b[-1] and list(a) == list(b)))
