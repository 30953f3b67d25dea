"""What a connection to one broker needs: its settings, key, TLS, messages, and the checks and
thread hand-offs around aio-pika (used by :mod:`sinks.amqp.connection` and the ingest)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from typing import Any, TypeVar

import aio_pika
from aio_pika.abc import AbstractConnection
from aio_pika.connection import make_url
from aiormq.abc import FieldValue

from sinks.amqp.config import AMQPConfig
from sinks.amqp.encoder import CONTENT_TYPE
from sinks.amqp.stream import stream_headers

T = TypeVar("T")

DEFAULT_PUBLISH_TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0

LinkKey = tuple[str, str, int, str, str, str, bool, str | None]


def quiet_client_library() -> None:
    """The sink and the ingest report every broker failure themselves (one line, password
    scrubbed); the client library's own lines would add a traceback per lost connection and
    one per connect retry."""
    for name in ("aiormq", "aio_pika"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def link_key(config: AMQPConfig) -> LinkKey:
    """What makes two endpoints share a connection: everything but the exchange (and the
    :class:`~sinks.runtime.clients.SharedClients` key of the service's one link per broker)."""
    return (
        config.scheme,
        config.host,
        config.port,
        config.user,
        config.password,
        config.vhost,
        config.tls_verify,
        config.tls_ca_file,
    )


def broker_url(config: AMQPConfig) -> str:
    """The broker of ``config`` without password or exchange: fit for logs and lane keys."""
    return config.safe_url.rsplit("/", 1)[0]


def tls_context(config: AMQPConfig) -> ssl.SSLContext:
    """The broker's certificate and host name verified (system CAs, or ``tls_ca_file``);
    the reference's unverified TLS only when the endpoint says ``tls_verify = false``."""
    ctx = ssl.create_default_context(cafile=config.tls_ca_file)
    if not config.tls_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def amqp_message(
    routing_key: str,
    identity: dict[str, FieldValue],
    body: bytes,
    producer: str,
    seq: int,
    user: str,
) -> tuple[aio_pika.Message, str]:
    """The reference's message plus the stream headers and the (broker-checked) ``user_id``
    of :mod:`sinks.amqp.stream`; and its routing key."""
    message = aio_pika.Message(
        body,
        content_type=CONTENT_TYPE,
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=f"{producer}:{seq}",
        headers=stream_headers(producer, seq, identity),
        user_id=user,
    )
    return message, routing_key


def is_lost(conn: AbstractConnection) -> bool:
    """Whether the connection is gone.  aio-pika's own ``is_closed`` turns true only once
    ``close()`` was called; a broker that went away shows in the aiormq connection below."""
    if conn.is_closed:
        return True
    underlying = getattr(getattr(conn, "transport", None), "connection", None)
    return underlying is None or bool(underlying.is_closed)


async def in_thread(call: Callable[..., T], *args: Any) -> T:
    """Run a blocking call (a spool or database operation) in a worker thread; a cancellation
    waits for it to finish first, so what it works on is never closed or reused under it."""
    future = asyncio.get_running_loop().run_in_executor(None, call, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await future
        raise


async def connect(config: AMQPConfig, name: str) -> AbstractConnection:
    """What ``aio_pika.connect`` does (TLS verified as :func:`tls_context` says), but a failed
    connection is closed here (left to its finaliser, it schedules a close nobody awaits).
    ``name`` is the connection name the broker's management shows."""
    url = make_url(
        host=config.host,
        port=config.port,
        login=config.user,
        password=config.password,
        virtualhost=config.vhost,
        ssl=config.tls,
        heartbeat=config.heartbeat,
    )
    conn = aio_pika.Connection(
        url,
        ssl_context=tls_context(config) if config.tls else None,
        client_properties={"connection_name": name},
    )
    try:
        await conn.connect(timeout=config.timeout or CONNECT_TIMEOUT)
    except BaseException:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 5.0)
        raise
    return conn
