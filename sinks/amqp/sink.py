"""The AMQP sink: filter, encode and publish a batch with publisher confirms.

An ordinary sink of the delivery runtime (:mod:`sinks.runtime.delivery`): ``write_batch``
returns only once the broker confirmed every message of the batch, and any broker trouble
(refused or lost connection, a channel error, no confirm in ``timeout``) is a retryable
:class:`~sinks.runtime.base.SinkError`.  The runtime does the rest as for every sink: it
retries the batch by its policy, spools the batches behind it on disk while the broker is
away (``<run dir>/monitord.spool/``), delivers that spool first when it is back or in the next
daemon, and reports it in the one ``SinkHealth``.  A batch published again after a lost
confirm may reach the exchange twice; each message carries its event's number
(:mod:`sinks.amqp.stream`), so ``monitord ingest`` loads it once (docs/ingest.md).

The connection (:class:`~sinks.amqp.connection.BrokerLink`, one thread for its heartbeats) is
the sink's own in the per-workflow daemon; in the service every workflow's sink of a broker
takes the same one (``shares_connection``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import structlog

from monitord.core.events import StampedeEvent
from sinks.amqp.broker import amqp_message, broker_url, link_key
from sinks.amqp.capabilities import AMQP_CAPABILITIES
from sinks.amqp.config import AMQPConfig, endpoint_properties, parse_amqp_url
from sinks.amqp.connection import BrokerLink, PublishFailed
from sinks.amqp.encoder import encode_selected
from sinks.amqp.producer import Producer
from sinks.amqp.stream import Numbering, split_key
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.clients import SharedClients
from sinks.runtime.factory import SinkRequest

log = structlog.get_logger(__name__)


class AMQPSink:
    """One AMQP endpoint; ``name`` (and every log line) carries no password."""

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
        self.producer = Producer(config.producer_path(run_dir))
        self.broker_url = broker_url(config)  # the service gives each broker one lane
        self.link: BrokerLink | None = None
        self._clients: SharedClients | None = None  # the service's, once ``use_shared``
        self.events_published = 0
        self._opened = False
        # messages of the failing batch the broker confirmed: its retry (the runtime's next
        # write, the same events numbered the same) skips them
        self._confirmed: set[tuple[str, bytes]] = set()

    @classmethod
    def from_request(cls, request: SinkRequest) -> AMQPSink:
        """An unopened sink for ``request.dest`` with its endpoint's properties (doc §6.4,
        §6.5); ``restart`` and the root workflow pick the stream of unmarked batches
        (:class:`Numbering`)."""
        dest = request.dest
        props = endpoint_properties(request.properties, dest)
        config = parse_amqp_url(dest, props)
        if "drain_timeout" in props:
            log.warning(
                "AMQP property drain_timeout is ignored: the spool's "
                "pegasus.monitord.spool.drain_timeout applies to every sink",
                sink=f"amqp:{config.safe_url}",
            )
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
        """The service's connection to this broker, one for every workflow
        (``shares_connection``); the last sink to close it closes the connection."""
        self._clients = shared.clients

    def open(self) -> None:
        """Take the producer's state; the first publish connects (a broker away is retried
        then, by the runtime)."""
        if self._opened:
            return
        self.producer.open()
        config = self.config
        if self._clients is not None:
            self.link = self._clients.acquire(link_key(config), lambda: BrokerLink(config))
        else:
            self.link = BrokerLink(config)
        self._opened = True

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if not self._opened:
            self.open()
        assert self.link is not None
        counted = dict(self.numbering.counts)  # a failed batch comes again: same numbers
        try:
            frames = list(encode_selected(events, self.config.events, self.numbering.of(events)))
            if self._confirmed:
                frames = [f for f in frames if f not in self._confirmed]
            if not frames:
                self._confirmed.clear()
                return
            first = self.producer.reserve(len(frames))
            user = self.config.user
            messages = []
            for i, (key, body) in enumerate(frames):
                routing_key, identity = split_key(key)
                seq = first + i
                messages.append(
                    amqp_message(routing_key, identity, body, self.producer.id, seq, user)
                )
            try:
                self.link.publish(self.config, messages)
            except PublishFailed as exc:
                self._confirmed.update(frames[: exc.confirmed])
                self.events_published += exc.confirmed
                raise
        except BaseException:
            self.numbering.counts = counted
            raise
        self._confirmed.clear()
        self.events_published += len(frames)

    def flush(self) -> None:
        """Nothing to do: a batch is written once the broker confirmed it."""

    def close(self) -> None:
        if not self._opened:
            return
        link, self.link = self.link, None
        if self._clients is not None:
            self._clients.release(link_key(self.config))
        elif link is not None:
            link.close()
        self.producer.close()
        self._opened = False
        log.info("AMQP: events published", sink=self.name, events=self.events_published)
