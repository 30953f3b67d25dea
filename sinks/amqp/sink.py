"""The AMQP sink: filter, encode, spool durably; a background publisher delivers.

Contract with the runner (``sinks/base.py``): ``write_batch`` appends the batch to
the endpoint's on-disk spool and returns; ``flush`` fsyncs the spool.  So
"flushed" means *durably spooled*, not *delivered*: the daemon's checkpoint
(monitord.info / monitord.recover) never waits for the broker, and a broker
outage never slows the daemon or the other sinks.  Delivery is the job of the
broker's :mod:`hub <sinks.amqp.hub>` (one connection per broker, shared by every
sink of the process): in spool order, confirmed by the broker, across reconnects
and across daemon restarts (the next daemon for the same run dir and URL finds
the same spool and sends what is left first).

``close`` gives the hub ``drain_timeout`` seconds (property, default 15) to
empty the spool, then leaves the rest on disk and says how much.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace

import structlog

from monitord.core.events import StampedeEvent
from sinks.amqp.broker import broker_url
from sinks.amqp.capabilities import AMQP_CAPABILITIES
from sinks.amqp.config import AMQPConfig, endpoint_properties, parse_amqp_url
from sinks.amqp.encoder import encode_selected
from sinks.amqp.hub import HubClient
from sinks.amqp.hubs import HubRegistry, default_registry
from sinks.amqp.stream import Numbering
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.factory import SinkRequest
from sinks.runtime.health import SinkHealth
from sinks.runtime.policy import UP
from sinks.runtime.spool.segments import Spool, SpoolError

log = structlog.get_logger(__name__)


class AMQPSink:
    """One AMQP endpoint; ``name`` (and every log line) carries no password.

    ``spools_itself`` (a capability): every batch goes to this sink's own spool at once, so the delivery
    runtime gives it no second one; :meth:`health` reports that spool and the broker.
    """

    capabilities = AMQP_CAPABILITIES

    def __init__(
        self,
        config: AMQPConfig,
        *,
        run_dir: str,
        restart: bool = False,
        root_wf_uuid: str | None = None,
    ) -> None:
        self.config = config
        self.numbering = Numbering(restart=restart, root_uuid=root_wf_uuid)
        self.name = f"amqp:{config.safe_url}"
        self.spool_path = config.spool_path(run_dir)
        self.broker_url = broker_url(config)  # the service gives each broker one lane
        self.hub_source: HubRegistry | None = None  # None: the process's default registry
        self.spool: Spool | None = None
        self.publisher: HubClient | None = None
        self.events_spooled = 0
        self._oldest_since: float | None = None  # wall time the oldest undelivered was spooled
        self.left_in_spool = 0  # undelivered when closed (for the next daemon)

    @classmethod
    def from_request(cls, request: SinkRequest) -> AMQPSink:
        """An unopened sink for ``request.dest`` with its endpoint's properties (doc §6.4,
        §6.5); ``restart`` and the root workflow pick the stream of unmarked batches
        (:class:`Numbering`)."""
        dest = request.dest
        config = parse_amqp_url(dest, endpoint_properties(request.properties, dest))
        return cls(
            config,
            run_dir=os.path.abspath(request.run_dir),
            restart=request.restart,
            root_wf_uuid=request.root_wf_uuid,
        )

    @property
    def destination(self) -> str:
        """Where it publishes, for people (``SinkHealth.destination``): the URL, no password."""
        return self.config.safe_url

    @property
    def lane_key(self) -> str:
        """The broker many workflows share, password-free (``Capabilities.shared``)."""
        return f"amqp:{self.broker_url}"

    def use_shared(self, shared: SharedResources) -> None:
        """The service's connections, one per broker (``shares_hub``)."""
        self.hub_source = shared.hubs

    def open(self) -> None:
        if self.spool is not None:
            return
        spool = Spool(self.spool_path)
        try:
            spool.open()
        except SpoolError as exc:
            raise SinkError(str(exc)) from None
        self.spool = spool
        if spool.pending:
            self._oldest_since = time.time()  # (when they were spooled is not recorded)
            log.info(
                "AMQP: undelivered events of an earlier run are sent first",
                sink=self.name,
                pending=spool.pending,
                spool=self.spool_path,
            )
        hubs = self.hub_source or default_registry()
        try:
            self.publisher = hubs.attach(self.config, spool, self.name)
        except Exception as exc:  # a hub being shut down (service stop)
            spool.close()
            self.spool = None
            raise SinkError(f"{self.name}: {self.config.scrub(str(exc))}", retryable=True) from None

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if self.spool is None:
            self.open()
        assert self.spool is not None and self.publisher is not None
        records = list(encode_selected(events, self.config.events, self.numbering.of(events)))
        if not records:
            return
        try:
            self.spool.append(records)
        except OSError as exc:
            raise SinkError(
                f"cannot append to the AMQP spool {self.spool_path}: {exc.strerror}",
                retryable=True,
            ) from None
        self.events_spooled += len(records)
        if self._oldest_since is None or self.spool.pending == len(records):
            self._oldest_since = time.time()
        self.publisher.notify()

    def flush(self) -> None:
        if self.spool is None:
            return
        try:
            self.spool.sync()
        except OSError as exc:
            raise SinkError(
                f"cannot sync the AMQP spool {self.spool_path}: {exc.strerror}", retryable=True
            ) from None

    def health(self) -> SinkHealth:
        """This endpoint's undelivered backlog and its broker link's state (the delivery
        runtime reads it: ``spools_itself``)."""
        spool, publisher = self.spool, self.publisher
        pending = spool.pending if spool is not None else self.left_in_spool
        if not pending:
            self._oldest_since = None
        backlog = SinkHealth(
            self.name,
            spooled=pending,
            spooled_bytes=spool.pending_bytes() if spool is not None and pending else 0,
            oldest=max(0.0, time.time() - self._oldest_since)
            if pending and self._oldest_since
            else 0.0,
        )
        link = publisher.hub.link if publisher is not None else None
        if link is None or link.state == UP:
            return backlog
        return replace(
            link.health(self.name),
            spooled=backlog.spooled,
            spooled_bytes=backlog.spooled_bytes,
            oldest=backlog.oldest,
        )

    def close(self) -> None:
        spool, publisher = self.spool, self.publisher
        if spool is None:
            return
        try:
            spool.sync()
        except OSError as exc:
            log.error("AMQP spool sync failed", sink=self.name, error=exc.strerror)
        if publisher is not None:
            publisher.stop(self.config.drain_timeout)
        remaining = self.left_in_spool = spool.pending
        if remaining:
            log.warning(
                "AMQP: events left in the spool for the next daemon",
                sink=self.name,
                remaining=remaining,
                delivered=publisher.delivered if publisher else 0,
                spool=self.spool_path,
                last_error=publisher.last_error if publisher else None,
            )
        else:
            log.info(
                "AMQP: all events delivered",
                sink=self.name,
                delivered=publisher.delivered if publisher else 0,
            )
        spool.close()
        self.spool = None
        self.publisher = None
