"""One connection to one AMQP broker, publishing with confirms for the threads that call it.

aio-pika needs a running event loop for the connection's heartbeats, so a :class:`BrokerLink`
keeps one thread (``amqp-<hash of the broker>``) running its own loop, holding the connection
and one confirming channel per exchange.  Callers (a sink's thread, a service lane) block in
:meth:`BrokerLink.publish` until the broker confirmed every message of the batch, or get a
:class:`~sinks.runtime.base.SinkError`: nothing else is decided here.  Retries, backoff,
spooling and health are the delivery runtime's (:mod:`sinks.runtime.delivery`), as for any
sink; a lost connection is opened again by the next publish.

In the service every workflow's sink of one broker takes the same link
(:class:`~sinks.runtime.clients.SharedClients`, keyed by :func:`~sinks.amqp.broker.link_key`);
the per-workflow daemon's sink makes its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import threading
from collections.abc import Sequence

import aio_pika
import structlog
from aio_pika.abc import AbstractChannel, AbstractConnection, AbstractExchange

from sinks.amqp.broker import (
    CONNECT_TIMEOUT,
    DEFAULT_PUBLISH_TIMEOUT,
    broker_url,
    connect,
    is_lost,
    quiet_client_library,
)
from sinks.amqp.config import AMQPConfig, scrub
from sinks.amqp.topology import prepare_for_ingest
from sinks.runtime.base import SinkError

log = structlog.get_logger(__name__)

Message = tuple[aio_pika.Message, str]  # a message and its routing key
CLOSE_WAIT = 10.0  # seconds ``close`` waits for the connection to close


class PublishFailed(SinkError):
    """A batch the broker did not confirm whole: ``confirmed`` messages from its start were
    (they need not be published again)."""

    def __init__(self, message: str, confirmed: int) -> None:
        super().__init__(message, retryable=True)
        self.confirmed = confirmed


class BrokerLink:
    """One broker connection on a thread of its own; thread-safe :meth:`publish`."""

    def __init__(self, config: AMQPConfig) -> None:
        quiet_client_library()
        self.config = config  # connection settings (the exchange is each publish's)
        self.broker = broker_url(config)
        self.connections = 0  # opened so far (reconnects included)
        self._loop = asyncio.new_event_loop()
        tag = hashlib.sha256(self.broker.encode("utf-8")).hexdigest()[:8]
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"amqp-{tag}", daemon=True
        )
        self._start = threading.Lock()
        self._closed = False
        self._conn: AbstractConnection | None = None
        self._exchanges: dict[str, tuple[AbstractChannel, AbstractExchange]] = {}
        self._connecting: asyncio.Lock | None = None  # made on the loop
        self._declaring: asyncio.Lock | None = None

    @property
    def connected(self) -> bool:
        conn = self._conn
        return conn is not None and not is_lost(conn)

    def publish(self, config: AMQPConfig, messages: Sequence[Message]) -> None:
        """Publish ``messages`` in order to ``config.exchange``; return once the broker
        confirmed each.  Any failure is a retryable :class:`PublishFailed` (how many from the
        start were confirmed), password masked."""
        timeout = config.timeout or DEFAULT_PUBLISH_TIMEOUT
        future = asyncio.run_coroutine_threadsafe(self._publish(config, messages), self._running())
        try:
            future.result(timeout + CONNECT_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise PublishFailed(
                f"AMQP broker unavailable: no confirm within {timeout:g} s", 0
            ) from None
        except PublishFailed as exc:
            error = scrub(str(exc), self.config.password)
            raise PublishFailed(error, exc.confirmed) from None
        except Exception as exc:  # any broker trouble: the runtime retries the batch
            error = scrub(str(exc) or type(exc).__name__, self.config.password)
            raise PublishFailed(f"AMQP broker unavailable: {error}", 0) from None

    def close(self) -> None:
        """Close the connection and end the thread (idempotent)."""
        with self._start:
            if self._closed:
                return
            self._closed = True
            started = self._thread.is_alive()
        if started:
            done = asyncio.run_coroutine_threadsafe(self._disconnect(), self._loop)
            with contextlib.suppress(Exception):
                done.result(CLOSE_WAIT)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_WAIT)
        if not self._thread.is_alive():
            self._loop.close()

    # ------------------------------------------------------------------ callers' side
    def _running(self) -> asyncio.AbstractEventLoop:
        with self._start:
            if self._closed:
                raise SinkError("AMQP connection closed (the service is stopping)", retryable=True)
            if not self._thread.is_alive():
                self._thread.start()
        return self._loop

    # ------------------------------------------------------------------ the loop's side
    async def _publish(self, config: AMQPConfig, messages: Sequence[Message]) -> None:
        exchange = await self._exchange(config)
        timeout = config.timeout or DEFAULT_PUBLISH_TIMEOUT
        try:
            results = await asyncio.wait_for(
                asyncio.gather(
                    *(exchange.publish(m, key, mandatory=False) for m, key in messages),
                    return_exceptions=True,
                ),
                timeout,
            )
        except TimeoutError:
            raise PublishFailed(
                f"AMQP broker unavailable: no confirm within {timeout:g} s", 0
            ) from None
        for confirmed, result in enumerate(results):
            if isinstance(result, BaseException):
                error = str(result) or type(result).__name__
                raise PublishFailed(f"AMQP broker unavailable: {error}", confirmed)

    async def _connection(self) -> AbstractConnection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            conn = self._conn
            if conn is not None and not is_lost(conn):
                return conn
            await self._disconnect()
            conn = await connect(self.config, "pegasus-monitord")
            self._conn = conn
            self.connections += 1
            log.info("AMQP connected", broker=self.broker, reconnect=self.connections > 1)
            return conn

    async def _exchange(self, config: AMQPConfig) -> AbstractExchange:
        """``config.exchange`` on its own confirming channel, declared once per channel: a
        broker error confined to a channel (an exchange of another type) fails only the
        sinks of that exchange."""
        conn = await self._connection()
        known = self._exchanges.get(config.exchange)
        if known is not None and not known[0].is_closed:
            return known[1]
        if self._declaring is None:
            self._declaring = asyncio.Lock()
        async with self._declaring:  # callers of one exchange share its channel
            known = self._exchanges.get(config.exchange)
            if known is not None and not known[0].is_closed:
                return known[1]
            return await self._declare(conn, config)

    async def _declare(self, conn: AbstractConnection, config: AMQPConfig) -> AbstractExchange:
        channel: AbstractChannel = await conn.channel(publisher_confirms=True)
        try:
            exchange = await channel.declare_exchange(
                config.exchange, aio_pika.ExchangeType.TOPIC, durable=True, auto_delete=False
            )
            if config.ingest:  # nothing published before the first ingest is dropped
                await prepare_for_ingest(conn, config)
        except BaseException:
            with contextlib.suppress(Exception):
                await channel.close()
            raise
        self._exchanges[config.exchange] = (channel, exchange)
        return exchange

    async def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        self._exchanges.clear()
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5.0)
