"""The consumer: partition queues in, batches into the central database, acks after commit.

Per partition queue one channel (``prefetch`` unacknowledged messages at most: the memory
bound while the database is away) and one lane task that takes up to ``batch`` messages (or
what came within ``batch_wait`` of the first) and hands them to its database writer, a sink of the
delivery runtime (:mod:`monitord.ingest.loader`: planned, refused ones dead-lettered with
confirms, the rest committed with the producers' marks in one transaction); the lane
acknowledges the batch once the runtime says it is committed.  A crash anywhere before the
acknowledgement redelivers the batch, and the marks skip what was committed: exactly once
for monitord producers.

Both outages are waited out for ever with the runtime's one ``RECONNECT`` policy, one warning
line each.  Database outage: the writer's delivery retries the batch; nothing is
acknowledged, the broker stops delivering once ``prefetch`` is reached, ``/healthz`` says
``database down``.  Broker outage (a restart's ``CONNECTION_FORCED``, a cut): every lane stops
(unacknowledged messages go back to their queue), the connection is made again and the lanes
start over; the client library's own lines (a traceback per lost connection) are silenced.
The broker connection is not a sink of the runtime: it is where batches come from, and its
retry is a reconnect loop of the event loop (:meth:`Ingest.run`) on the same
:class:`~sinks.runtime.policy.DeliveryState`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import aio_pika
import aiormq.abc
import structlog
from aio_pika.abc import AbstractChannel, AbstractConnection
from aiormq.abc import DeliveredMessage

from monitord.ingest.batch import Item, classify
from monitord.ingest.config import IngestConfig
from monitord.ingest.loader import Load, writers
from monitord.ingest.metrics import IngestStats
from monitord.ingest.store import Store
from sinks.amqp.broker import connect, quiet_client_library
from sinks.amqp.topology import DEAD_DETAIL, DEAD_REASON, Names, declare
from sinks.runtime.base import SinkError
from sinks.runtime.policy import RECONNECT, DeliveryState, Verdict

log = structlog.get_logger(__name__)
clock = time.monotonic  # (the lanes' batch clock; a test's own)
STOP_WAIT = 30.0  # seconds a stop waits for the batches in flight (less than TimeoutStopSec)
CLOSE_WAIT_STEPS = 20  # 50 ms steps a failed lane waits for its connection's close to be told


def retry(state: DeliveryState, error: str) -> Verdict:
    """A failure of the broker or the database, which the ingest waits out for ever (nothing
    is acknowledged meanwhile): the runtime's policy says when to try again and whether this
    failure starts an outage."""
    return state.failed(SinkError(error, retryable=True), can_wait=True)


def closed_because(why: list[BaseException]) -> str:
    """What ended a connection: the broker's reply text (``CONNECTION_FORCED - broker forced
    connection closure ...`` on a restart), or the socket's error (``Server connection
    reset ...``)."""
    for exc in why:
        text = exc.args[-1] if exc.args and isinstance(exc.args[-1], str) else str(exc)
        if text:
            return text
    return "the connection to the broker closed"


class Lane:
    """One partition queue: its channel, its buffer of delivered messages, its task.

    Deliveries come from the channel's aiormq layer (``basic_consume``), not aio-pika's
    ``IncomingMessage``: building that object, and the extra task aio-pika starts per message,
    cost more CPU than the rest of the ingest's work on a message (bench/ingest_profile.py).

    A partial batch goes ``batch_wait`` after its first message arrived, not after the lane
    looked: messages that came while the previous batch was committed have waited already
    (a steady stream paid the wait on top of each commit; bench/README.md, ingest30h).  So
    does what is left after a full batch: each ``batch``-sized stretch of the buffer keeps
    its first message's arrival (``starts``), as the lane cuts the buffer in such stretches.
    """

    def __init__(
        self, ingest: Ingest, index: int, channel: AbstractChannel, raw: aiormq.abc.AbstractChannel
    ) -> None:
        self.ingest = ingest
        self.index = index
        self.owner = channel  # (held: aio-pika's channel object owns the aiormq one)
        self.channel = raw
        self.buffer: list[DeliveredMessage] = []
        self.wake = asyncio.Event()
        self.stopping = False
        # when the first message of each ``batch``-sized stretch of the buffer arrived
        # (``clock``): the buffer's next batch is its first stretch
        self.starts: deque[float] = deque()

    def stop(self) -> None:
        """Finish the batch in flight (committed and acknowledged), take no other."""
        self.stopping = True
        self.wake.set()

    async def on_message(self, message: DeliveredMessage) -> None:
        buffer = self.buffer
        buffer.append(message)
        size = self.ingest.cfg.batch
        if (len(buffer) - 1) % size == 0:
            self.starts.append(clock())  # the first of a batch starts its clock
            if len(buffer) == 1:
                self.wake.set()
        if len(buffer) == size:
            self.wake.set()  # a full one goes at once

    async def run(self) -> None:
        cfg = self.ingest.cfg
        while not self.stopping:
            if not self.buffer:
                self.wake.clear()
                await self.wake.wait()
                continue
            left = self.starts[0] + cfg.batch_wait - clock()
            if len(self.buffer) < cfg.batch and left > 0:
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), left)
            if self.stopping:
                return
            batch, self.buffer[: cfg.batch] = self.buffer[: cfg.batch], []
            self.starts.popleft()  # (the rest keeps its own: it waited meanwhile)
            await self.ingest.process(self, batch)


class Ingest:
    def __init__(
        self, cfg: IngestConfig, stores: Store | list[Store], stats: IngestStats | None = None
    ) -> None:
        self.cfg = cfg
        stores = stores if isinstance(stores, list) else [stores]
        self.store = stores[0]
        self.stats = stats or IngestStats()
        # one database writer per store: partition ``p`` always writes through writer
        # ``p mod len(writers)``, so one producer's (one workflow's) batches stay in order on
        # one writer, and the writers' round trips to the database overlap
        # (bench/README.md, ingest)
        self.writers = writers(stores, self._dead_letters, self.stats)
        self.names = Names(cfg.broker.exchange, cfg.prefix, cfg.partitions)
        self._dead_channel: AbstractChannel | None = None
        self._logged: set[str] = set()
        self._was_connected = False  # the session failing now had connected
        # the broker connection's outages (the database's: its writers' deliveries), with the
        # runtime's one retry policy
        self.link = DeliveryState(RECONNECT)

    # ------------------------------------------------------------------ connection
    async def _connect(self) -> AbstractConnection:
        return await connect(self.cfg.broker, "monitord-ingest")

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set, reconnecting after any broker failure."""
        quiet_client_library()  # (its traceback per lost connection: the outage is logged here)
        for writer in self.writers:
            writer.start()
        try:
            while not stop.is_set():
                try:
                    await self._session(stop)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    delay = self._broker_down(exc)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), delay)
        finally:
            await self._stop_writers()

    async def _stop_writers(self) -> None:
        """The lanes are done: a batch being committed finishes, a waiting one (the database
        down) is dropped, unacknowledged, for the broker to deliver again."""
        for writer in self.writers:
            writer.interrupt()
        for writer in self.writers:
            await asyncio.to_thread(writer.join)

    def _broker_down(self, exc: BaseException) -> float:
        """One warning and one count per outage (its first failure since the last connection,
        or since the start); a later failure of the same outage is an info line when its
        error changes (a broker restarting: the close, then refused connections).  Returns
        the pause before the next attempt."""
        self.stats.broker_up = False
        # (a bare Exception: what the client library fails a call with on a closed connection)
        error = self.cfg.broker.scrub(str(exc) or "the connection to the broker closed")
        verdict = retry(self.link, error)
        delay = round(verdict.delay, 1)
        if verdict.first:
            self.stats.broker_outages = self.link.outages
            what = "connection lost, reconnecting" if self._was_connected else "unavailable"
            log.warning(f"ingest: broker {what}", error=error, retry_in=delay)
        elif error != self.stats.broker_error:
            log.info("ingest: broker still unavailable", error=error, retry_in=delay)
        self.stats.broker_error = error
        return verdict.delay

    async def _session(self, stop: asyncio.Event) -> None:
        self._was_connected = False
        conn = await self._connect()
        lost = asyncio.Event()  # the connection closed, or a lane failed
        gone = asyncio.Event()  # the connection closed
        why: list[BaseException] = []

        def closed(_: object, exc: BaseException | None = None) -> None:
            if exc is not None:
                why.append(exc)
            gone.set()
            lost.set()

        conn.close_callbacks.add(closed)
        tasks: list[asyncio.Task[None]] = []
        lanes: list[Lane] = []
        failures: list[BaseException] = []

        def watch(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                failures.append(task.exception())  # type: ignore[arg-type]
                lost.set()

        try:
            setup = await conn.channel()
            await declare(setup, self.names, quorum=self.cfg.quorum)
            await setup.close()
            self._dead_channel = await conn.channel(publisher_confirms=True)
            self.stats.broker_up, self.stats.broker_error = True, None
            self._was_connected = True
            self.link.succeeded(backlog=False)
            log.info("ingest: connected", broker=self.cfg.broker.safe_url, member=self.cfg.member)
            order = sorted(range(self.cfg.partitions), key=lambda i: not self.cfg.preferred(i))
            self._spawn(tasks, watch, self._subscribe(conn, order, tasks, watch, lanes))
            waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(lost.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            for _ in range(CLOSE_WAIT_STEPS if failures else 0):
                if gone.is_set():  # (a lane failed on a connection going down: say why it went)
                    break
                await asyncio.sleep(0.05)
            if gone.is_set() and not stop.is_set():
                raise ConnectionError(closed_because(why))
            if failures:
                raise failures[0]
            await self._drain(lanes, tasks)
        finally:
            self.stats.broker_up = False
            self.stats.partitions = 0
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5.0)

    async def _drain(self, lanes: list[Lane], tasks: list[asyncio.Task[None]]) -> None:
        """A stop: each lane finishes its batch in flight (a stock producer's batch cut short
        would be loaded again after the restart), for at most ``STOP_WAIT`` seconds."""
        for lane in lanes:
            lane.stop()
        running = [t for t in tasks[1:] if not t.done()]
        if running:
            await asyncio.wait(running, timeout=STOP_WAIT)

    @staticmethod
    def _spawn(
        tasks: list[asyncio.Task[None]],
        watch: Callable[[asyncio.Task[None]], None],
        coro: Any,
    ) -> None:
        task = asyncio.create_task(coro)
        task.add_done_callback(watch)
        tasks.append(task)

    async def _subscribe(
        self,
        conn: AbstractConnection,
        order: list[int],
        tasks: list[asyncio.Task[None]],
        watch: Callable[[asyncio.Task[None]], None],
        lanes: list[Lane],
    ) -> None:
        """This member's partitions at once, the others (standby: single active consumer
        hands them over only when their consumer goes) after ``standby_delay``."""
        standby_from = time.monotonic() + self.cfg.standby_delay
        for index in order:
            if not self.cfg.preferred(index):
                await asyncio.sleep(max(0.0, standby_from - time.monotonic()))
            channel = await conn.channel()
            await channel.set_qos(prefetch_count=self.cfg.prefetch)
            raw = await channel.get_underlay_channel()
            lane = Lane(self, index, channel, raw)
            lanes.append(lane)
            self._spawn(tasks, watch, lane.run())
            await raw.basic_consume(self.names.partition(index), lane.on_message)
            self.stats.partitions += 1

    # ------------------------------------------------------------------ one batch
    async def process(self, lane: Lane, messages: list[DeliveredMessage]) -> None:
        """Hand the batch to the lane's writer; acknowledge it once the runtime committed it."""
        if not messages:
            return
        max_body = self.cfg.max_body
        items = []
        for m in messages:
            props = m.header.properties
            key = m.routing_key or ""
            items.append(classify(m, key, m.body, props.headers, props.user_id, max_body))
        loop = asyncio.get_running_loop()
        load = Load(items, loop, loop.create_future())
        self.writers[lane.index % len(self.writers)].put_batch(load.batch())
        try:
            await load.done  # committed (a dead letter the broker did not take: raises)
        except asyncio.CancelledError:
            load.abandoned = True  # (not written if not begun: the broker delivers it again)
            raise
        tag = messages[-1].delivery_tag
        assert tag is not None  # (a Basic.Deliver always has one)
        await lane.channel.basic_ack(tag, multiple=True)
        self.stats.received += len(messages)

    async def _dead_letters(self, items: list[Item], published: set[int]) -> None:
        channel = self._dead_channel
        for item in items:
            if id(item) in published:
                continue
            assert channel is not None and item.reason is not None
            message: DeliveredMessage = item.tag
            props = message.header.properties
            headers = dict(props.headers or {})
            headers.update(
                {
                    DEAD_REASON: item.reason,
                    DEAD_DETAIL: item.detail[:1000],
                    "monitord-routing-key": item.routing_key,
                }
            )
            await channel.default_exchange.publish(
                aio_pika.Message(
                    message.body,
                    headers=headers,
                    content_type=props.content_type,
                    message_id=props.message_id,
                    delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                ),
                routing_key=self.names.dead,
            )
            published.add(id(item))
            self.stats.dead[item.reason] = self.stats.dead.get(item.reason, 0) + 1
            if item.reason not in self._logged:
                self._logged.add(item.reason)
                log.warning(
                    "ingest: message dead-lettered (logged once per reason; see /metrics)",
                    reason=item.reason,
                    detail=item.detail[:200],
                    queue=self.names.dead,
                )
