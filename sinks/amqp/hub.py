"""One connection per AMQP broker, shared by every spool that publishes to it.

A :class:`Hub` owns a thread with its own asyncio loop and one connection to one
broker (scheme, host, port, user, password, vhost).  Every AMQP sink using that
broker -- one per followed workflow in the service, usually one in the
per-workflow daemon -- attaches its spool as a :class:`HubClient`.  Deliberate
improvements over the reference (behaviour doc §6.5):

* The connection lives on a loop that never blocks (spool I/O runs in worker
  threads), so heartbeats are answered whatever the daemon or the spools are
  doing; the daemon's own loop never touches the broker.
* Publisher confirms: a spool's cursor moves only past messages the broker has
  acknowledged; anything unconfirmed when a connection fails is published again
  after reconnecting, in spool order.
* Reconnect forever (the reference gives up after five attempts), by the runtime's
  retry policy: the link is a :class:`~sinks.runtime.policy.DeliveryState`, so the
  sinks' health record (:mod:`sinks.runtime.health`) shows it like any sink's.
* Fairness: clients with unread records wait in a round-robin queue and get
  one batch per turn (a few turns run at once), so a huge backlog of one
  workflow never starves the others.  Each client has at most one batch in
  flight, so its messages stay in spool order.
* Isolation: one channel per exchange.  A broker error confined to a channel
  (an exchange declared with another type, say) puts only the clients of that
  exchange into backoff; only a lost connection affects everyone.

A :class:`~sinks.amqp.hubs.HubRegistry` hands out hubs by broker; a hub ends with its last
client.  Broker helpers: :mod:`sinks.amqp.broker`; a spool's handle: :mod:`.hub_client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import aio_pika
import structlog
from aio_pika.abc import AbstractChannel, AbstractConnection, AbstractExchange

from sinks.amqp.broker import (
    BATCH,
    CONCURRENT_BATCHES,
    DEFAULT_PUBLISH_TIMEOUT,
    DETACH_WAIT,
    IDLE_POLL,
    STOPPING_RETRY,
    WARN_EVERY,
    Exchanges,
    _lost,
    _message,
    broker_url,
    connect,
    in_thread,
    quiet_client_library,
)
from sinks.amqp.config import AMQPConfig, scrub
from sinks.amqp.hub_client import HubClient
from sinks.amqp.topology import prepare_for_ingest
from sinks.runtime.base import SinkError
from sinks.runtime.policy import RECONNECT, DeliveryState
from sinks.runtime.spool.segments import Record, Spool

__all__ = ["Hub", "HubClient"]

log = structlog.get_logger(__name__)

T = TypeVar("T")


class Hub:
    """One broker connection on its own thread, serving many spools."""

    def __init__(self, config: AMQPConfig, *, release: Callable[[Hub], bool] | None = None):
        quiet_client_library()
        self.config = config  # connection settings: those of the first client
        self.broker = broker_url(config)
        self.connected = False
        self.connections = 0
        # the connection's state, retries and backoff: the runtime's policy and health record
        self.link = DeliveryState(RECONNECT)
        self.clients: list[HubClient] = []
        self._release = release
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: deque[HubClient] = deque()
        self._wake: asyncio.Event | None = None
        self._retry_now: asyncio.Event | None = None
        self._closing = False
        self._started = threading.Event()
        tag = hashlib.sha256(self.broker.encode("utf-8")).hexdigest()[:8]
        self._thread = threading.Thread(target=self._thread_main, name=f"amqp-{tag}", daemon=True)

    # ------------------------------------------------------------------ other threads
    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._closing

    def client_count(self) -> int:
        with self._lock:
            return len(self.clients)

    def attach(self, config: AMQPConfig, spool: Spool, name: str) -> HubClient:
        """Publish ``spool`` (opened by the caller) to ``config.exchange`` from now on."""
        client = HubClient(self, config, spool, name)
        with self._lock:
            if self._closing:
                raise RuntimeError("this AMQP hub is closed")
            if not self._thread.is_alive() and not self._started.is_set():
                self._thread.start()
                self._started.wait()
            self.clients.append(client)
        self.call_soon(self._attached, client)
        return client

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop closed meanwhile
                loop.call_soon_threadsafe(callback, *args)

    def detach(self, client: HubClient) -> None:
        """Stop serving ``client`` (waits for its batch in flight); the last one ends the hub."""
        loop = self._loop
        if loop is not None and not loop.is_closed() and self._thread.is_alive():
            try:
                done = asyncio.run_coroutine_threadsafe(self._detach(client), loop)
                done.result(DETACH_WAIT + 5.0)
            except Exception as exc:  # the hub is going away anyway
                log.debug("AMQP detach", sink=client.name, error=repr(exc))
        client.detached = True
        with self._lock:
            if client in self.clients:
                self.clients.remove(client)
            empty = not self.clients
        if self._release is not None:
            empty = self._release(self)  # decided under the registry's lock
        if empty:
            self.close()

    def close(self, timeout: float = 10.0) -> None:
        """End the thread and the connection (clients still attached stay spooled)."""
        with self._lock:
            self._closing = True
        self.call_soon(self._wake_all)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
            if self._thread.is_alive() and self._task is not None:
                self.call_soon(self._task.cancel)
                self._thread.join(10.0)

    @property
    def last_error(self) -> str | None:
        return self.link.last_error

    @property
    def down_since(self) -> float | None:
        """Wall time the broker went down (None while connected)."""
        return self.link.since if self.link.down else None

    @property
    def pending(self) -> int:
        with self._lock:
            clients = list(self.clients)
        return sum(c.spool.pending for c in clients if not c.detached)

    def scrub(self, message: str) -> str:
        return scrub(message, self.config.password)

    # ------------------------------------------------------------------ the thread
    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._wake = asyncio.Event()
        self._retry_now = asyncio.Event()
        self._task = loop.create_task(self._run())
        self._started.set()
        try:
            loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # never let the thread die noisily
            log.error("AMQP publisher crashed", broker=self.broker, error=self.scrub(repr(exc)))
        finally:
            self.connected = False
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()

    # ------------------------------------------------------------------ loop side
    def _wake_all(self) -> None:
        assert self._wake is not None and self._retry_now is not None
        self._wake.set()
        self._retry_now.set()

    def _attached(self, client: HubClient) -> None:
        if self.connected:
            self._mark_backlog(client)
        self.schedule(client)

    def schedule(self, client: HubClient) -> None:
        """Queue ``client`` for a turn if it has unread records (loop thread only)."""
        if client.detached or client.queued or client.busy or client.retry_handle is not None:
            return
        if not client.spool.unread():
            return
        client.queued = True
        self._ready.append(client)
        assert self._wake is not None
        self._wake.set()

    def request_stop(self, client: HubClient) -> None:
        client.stopping = True
        if client.spool.pending == 0:
            client.drained.set()
            return
        if client.retry_handle is not None:  # a closing sink gets one immediate attempt
            client.retry_handle.cancel()
            client.retry_handle = None
        self.schedule(client)
        assert self._retry_now is not None
        self._retry_now.set()

    async def _detach(self, client: HubClient) -> None:
        client.detached = True
        if client.retry_handle is not None:
            client.retry_handle.cancel()
            client.retry_handle = None
        with contextlib.suppress(ValueError):
            self._ready.remove(client)
        client.queued = False
        deadline = time.monotonic() + DETACH_WAIT
        while client.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        step = client.step_task
        if client.busy and step is not None:
            step.cancel()
            with contextlib.suppress(BaseException):
                await step

    def _mark_backlog(self, client: HubClient) -> None:
        client.backlog = client.spool.pending
        client.backlog_since = time.monotonic()
        client.backlog_delivered = client.delivered

    def _live(self) -> list[HubClient]:
        with self._lock:
            return [c for c in self.clients if not c.detached]

    async def _run(self) -> None:
        assert self._retry_now is not None
        warned_at = -WARN_EVERY
        previous: str | None = None
        while True:
            if self._closing:
                return
            try:
                await self._session()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any broker trouble means: retry later
                self.connected = False
                clients = self._live()
                for client in clients:
                    client.spool.rewind()
                error = self.scrub(str(exc) or type(exc).__name__)
                verdict = self.link.failed(SinkError(error, retryable=True), can_wait=True)
                delay = verdict.delay
                # One warning per outage (and per new error, or every WARN_EVERY s), not per try.
                now = time.monotonic()
                emit = log.warning
                if not verdict.first and error == previous and now - warned_at < WARN_EVERY:
                    emit = log.debug
                else:
                    warned_at = now
                previous = error
                for client in clients:
                    client.last_error = error
                emit(
                    "AMQP broker unavailable, events stay spooled",
                    broker=self.broker,
                    sink=clients[0].name if len(clients) == 1 else f"{len(clients)} sinks",
                    error=error,
                    pending=sum(c.spool.pending for c in clients),
                    attempt=verdict.attempt,
                    retry_in=round(delay, 1),
                )
                if any(c.stopping for c in clients):
                    delay = min(delay, STOPPING_RETRY)
                self._retry_now.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._retry_now.wait(), delay)

    async def _connect(self) -> AbstractConnection:
        return await connect(self.config, "pegasus-monitord")

    async def _session(self) -> None:
        """One connection: serve turns until closing; raise when the connection fails."""
        assert self._wake is not None
        conn = await self._connect()
        exchanges: Exchanges = {}
        steps: dict[asyncio.Task[None], HubClient] = {}
        wake = self._wake
        conn.close_callbacks.add(lambda *_: wake.set())  # a lost connection wakes us at once
        try:
            self.connected = True
            self.connections += 1
            self.link.succeeded(backlog=False)
            clients = self._live()
            for client in clients:
                self._mark_backlog(client)
                client.last_error = None
            log.info(
                "AMQP connected",
                broker=self.broker,
                sink=clients[0].name if len(clients) == 1 else f"{len(clients)} sinks",
                pending=sum(c.backlog for c in clients),
                reconnect=self.connections > 1,
            )
            for client in clients:
                self.schedule(client)
            while True:
                while self._ready and len(steps) < CONCURRENT_BATCHES:
                    client = self._ready.popleft()
                    client.queued = False
                    if client.detached:
                        continue
                    client.busy = True
                    task = asyncio.create_task(self._turn(conn, exchanges, client))
                    client.step_task = task
                    steps[task] = client
                if self._closing and not steps:
                    return
                self._wake.clear()
                if self._ready and len(steps) < CONCURRENT_BATCHES:
                    continue
                waker = asyncio.ensure_future(self._wake.wait())
                try:
                    done, _ = await asyncio.wait(
                        [*steps, waker], timeout=IDLE_POLL, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waker.cancel()
                for finished in done:
                    if finished is waker:
                        continue
                    turn: asyncio.Task[None] = finished  # type: ignore[assignment]
                    client = steps.pop(turn)
                    client.busy = False
                    self._after_turn(conn, client, turn)
                if _lost(conn):
                    raise ConnectionError("the broker closed the connection")
                if not done:  # idle poll: a safety net for a notify that never came
                    for client in self._live():
                        self.schedule(client)
        finally:
            self.connected = False
            for task in steps:
                task.cancel()
            for task, client in steps.items():
                with contextlib.suppress(BaseException):
                    await task
                client.busy = False
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5.0)

    def _after_turn(
        self, conn: AbstractConnection, client: HubClient, task: asyncio.Task[None]
    ) -> None:
        if task.cancelled():
            return  # detached
        exc = task.exception()
        if exc is None:
            client.backoff.reset()
            if client.stopping and client.spool.pending == 0:
                client.drained.set()
            self.schedule(client)  # to the back of the queue: one batch per turn
            return
        if _lost(conn):
            return  # the session ends; every client is rewound and retried
        # A failure confined to this client (its exchange's channel): it alone backs off.
        client.spool.rewind()
        error = self.scrub(str(exc) or type(exc).__name__)
        delay = client.backoff.next()
        if client.stopping:
            delay = min(delay, STOPPING_RETRY)
        now = time.monotonic()
        emit = log.warning
        if error == client.last_error and now - client.warned_at < WARN_EVERY:
            emit = log.debug
        else:
            client.warned_at = now
        client.last_error = error
        emit(
            "AMQP publish failed, events stay spooled",
            sink=client.name,
            error=error,
            pending=client.spool.pending,
            retry_in=round(delay, 1),
        )
        loop = asyncio.get_running_loop()
        client.retry_handle = loop.call_later(delay, self._retry, client)

    def _retry(self, client: HubClient) -> None:
        client.retry_handle = None
        self.schedule(client)

    async def _exchange(
        self, conn: AbstractConnection, exchanges: Exchanges, config: AMQPConfig
    ) -> AbstractExchange:
        """The configured exchange on its own confirming channel, declared once per channel."""
        name = config.exchange
        future = exchanges.get(name)
        if future is not None and future.done():
            failed = future.cancelled() or future.exception() is not None
            if failed or future.result()[0].is_closed:
                future = None
        if future is None:
            future = exchanges[name] = asyncio.ensure_future(self._declare(conn, name, config))
        try:
            return (await asyncio.shield(future))[1]
        except Exception:
            if exchanges.get(name) is future:
                del exchanges[name]
            raise

    async def _declare(
        self, conn: AbstractConnection, name: str, config: AMQPConfig
    ) -> tuple[AbstractChannel, AbstractExchange]:
        channel: AbstractChannel = await conn.channel(publisher_confirms=True)
        try:
            exchange = await channel.declare_exchange(
                name, aio_pika.ExchangeType.TOPIC, durable=True, auto_delete=False
            )
            if config.ingest:  # nothing published before the first ingest is dropped
                await prepare_for_ingest(conn, config)
            return channel, exchange
        except BaseException:
            with contextlib.suppress(Exception):
                await channel.close()
            raise

    async def _turn(
        self,
        conn: AbstractConnection,
        exchanges: Exchanges,
        client: HubClient,
    ) -> None:
        """One batch of one client: publish in order, wait for every confirm, commit."""
        exchange = await self._exchange(conn, exchanges, client.config)
        records = await in_thread(client.spool.read_batch, BATCH)
        if records:
            await self._publish(client, exchange, records)
        if client.backlog and client.spool.pending == 0:
            log.info(
                "AMQP: spool drained",
                sink=client.name,
                backlog=client.backlog,
                delivered=client.delivered - client.backlog_delivered,
                seconds=round(time.monotonic() - client.backlog_since, 3),
            )
            client.backlog = 0

    async def _publish(
        self, client: HubClient, exchange: AbstractExchange, records: Sequence[Record]
    ) -> None:
        """The longest confirmed prefix is committed even when a later message fails, so a
        failure re-sends as little as possible."""
        timeout = client.config.timeout or DEFAULT_PUBLISH_TIMEOUT
        results = await asyncio.wait_for(
            asyncio.gather(
                *(
                    exchange.publish(*_message(r, client.config.user), mandatory=False)
                    for r in records
                ),
                return_exceptions=True,
            ),
            timeout,
        )
        confirmed = 0
        for result in results:
            if isinstance(result, BaseException):
                break
            confirmed += 1
        if confirmed:
            await in_thread(client.spool.commit, records[confirmed - 1].end, confirmed)
            client.delivered += confirmed
        if confirmed < len(records):
            failure = results[confirmed]
            assert isinstance(failure, BaseException)
            raise failure
