"""The broker side of the ingest: exchanges, partition queues, bindings, dead letters.

::

    producers --stampede.<event>--> <exchange> (topic, the reference's)
                                        | "#"   (exchange-to-exchange binding)
                                        v
                          <prefix>.route (headers) --monitord-slot = k--> <prefix>.p<k mod N>
                                        | unroutable (no monitord-slot: a stock producer)
                                        v
                          <prefix>.legacy (fanout, the route's alternate exchange) --> <prefix>.p0

Why this and not a consistent-hash exchange or a router: the routing key is fixed by the wire
(``stampede.<event>``) so it cannot carry the producer; the consistent-hash exchange can hash
a header but is a plugin a site may not enable (the test broker has not); a router consumer
that republishes into partitions doubles the broker's traffic and is one more process to keep
exactly once.  A headers exchange is in every RabbitMQ: the producer puts its bucket
(``monitord-slot``, :mod:`sinks.amqp.stream`) in a header, and the ingest binds each of the
``SLOTS`` buckets to one partition queue.  So every message of one producer (one spool: one
root workflow and its sub-workflows) lands in one queue, in publish order.

Partition queues are durable quorum queues (replicated, they survive a broker restart) with
single active consumer: however many ingest processes subscribe, one consumes a partition at a
time, in order, and the next takes over when it goes.  Changing the number of partitions of
an existing topology leaves the old bindings in place (a bucket would then feed two queues):
drain the queues and delete ``<prefix>.route`` first (docs/ingest.md).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import aio_pika
import structlog
from aio_pika.abc import AbstractChannel, AbstractConnection, AbstractExchange, AbstractQueue
from aiormq.abc import FieldTable

from sinks.amqp.config import AMQPConfig
from sinks.amqp.stream import SLOT, SLOTS

log = structlog.get_logger(__name__)

DEAD_REASON = "monitord-dead-reason"
DEAD_DETAIL = "monitord-dead-detail"


@dataclass(frozen=True)
class Names:
    exchange: str
    prefix: str
    partitions: int

    @property
    def route(self) -> str:
        return f"{self.prefix}.route"

    @property
    def legacy(self) -> str:
        return f"{self.prefix}.legacy"

    @property
    def dead(self) -> str:
        return f"{self.prefix}.dead"

    def partition(self, index: int) -> str:
        return f"{self.prefix}.p{index}"


def _queue_args(quorum: bool, single_active: bool) -> FieldTable:
    args: FieldTable = {"x-queue-type": "quorum" if quorum else "classic"}
    if single_active:
        args["x-single-active-consumer"] = True
    return args


async def declare(channel: AbstractChannel, names: Names, *, quorum: bool = True) -> None:
    """Declare (idempotently) everything of the diagram above.  The exchange is bound to the
    route once every partition is bound, and the dead-letter queue comes last: a producer that
    finds it knows the rest is there (:func:`prepare_for_ingest`)."""
    source: AbstractExchange = await channel.declare_exchange(
        names.exchange, aio_pika.ExchangeType.TOPIC, durable=True
    )
    legacy = await channel.declare_exchange(
        names.legacy, aio_pika.ExchangeType.FANOUT, durable=True
    )
    route = await channel.declare_exchange(
        names.route,
        aio_pika.ExchangeType.HEADERS,
        durable=True,
        arguments={"alternate-exchange": names.legacy},
    )
    queues: list[AbstractQueue] = []
    for index in range(names.partitions):
        queues.append(
            await channel.declare_queue(
                names.partition(index), durable=True, arguments=_queue_args(quorum, True)
            )
        )
    for slot in range(SLOTS):
        await queues[slot % names.partitions].bind(
            route, f"slot-{slot}", arguments={"x-match": "all", SLOT: str(slot)}
        )
    await queues[0].bind(legacy, "")
    await route.bind(source, "#")
    await channel.declare_queue(names.dead, durable=True, arguments=_queue_args(quorum, False))


async def prepare_for_ingest(conn: AbstractConnection, config: AMQPConfig) -> bool:
    """A producer with ``ingest = true``, before it publishes: the ingest's topology is
    declared if ``<prefix>.dead`` (declared last) does not exist yet, so that what it publishes before the
    first ingest process starts waits in the partition queues instead of being dropped by
    the broker (nothing binds the exchange yet).  A topology that exists is left alone (the
    ingest's ``partitions`` rule it).  A failure (no configure permission, arguments that
    differ) is logged and publishing goes on: the ingest started first is then the rule.
    Returns whether the topology exists."""
    names = Names(config.exchange, config.ingest_prefix, config.ingest_partitions)
    channel = await conn.channel()
    try:
        # passive: does the queue declared last exist?  (A producer that checked a part
        # declared earlier published while another one was still binding the partitions.)
        await channel.get_queue(names.dead, ensure=True)
        return True
    except Exception:
        pass  # the broker closed this channel (404): declare on a fresh one
    finally:
        with contextlib.suppress(Exception):
            await channel.close()
    channel = await conn.channel()
    try:
        await declare(channel, names, quorum=config.ingest_quorum)
        log.info(
            "AMQP: declared the ingest topology", exchange=config.exchange, prefix=names.prefix
        )
        return True
    except Exception as exc:
        log.warning(
            "AMQP: cannot declare the ingest topology; start monitord ingest before the producers",
            prefix=names.prefix,
            error=config.scrub(str(exc) or type(exc).__name__),
        )
        return False
    finally:
        with contextlib.suppress(Exception):
            await channel.close()
