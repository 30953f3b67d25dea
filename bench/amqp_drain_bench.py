"""How fast the delivery runtime spools AMQP batches, and how fast that spool drains into RabbitMQ.

Phase 1 (broker irrelevant): N events (the reference's events of a corpus sample, cycled)
are appended to the AMQP sink's runtime spool in batches, as a delivery does while the
broker is down (one frame and one fsync per batch).  Phase 2: the sink is started on the one
runtime (``SinkWorker``) with a real broker up, as the next daemon would be, and timed until
the broker has confirmed every event (each batch published with confirms); the queue's
message count is then checked.

    MONITORD_TEST_AMQP_URL=amqp://user:pass@127.0.0.1:5672/vhost \\
        .venv/bin/python bench/amqp_drain_bench.py [--events 100000] [--batch 200]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

import aio_pika  # noqa: E402

from monitord.core.events import PREFIX, make_event  # noqa: E402
from monitord.core.readers.bp import parse_bp_line  # noqa: E402
from sinks.amqp.config import parse_amqp_url  # noqa: E402
from sinks.amqp.sink import AMQPSink  # noqa: E402
from sinks.runtime.codec import encode_batch  # noqa: E402
from sinks.runtime.runner import SinkWorker  # noqa: E402
from sinks.runtime.spool import BatchSpool, SpoolSettings  # noqa: E402

CORPUS_BP = PROJECT.parent / "shared" / "corpus" / "hierarchical_wf_success" / "expected"


def bp_events(path: Path) -> list:
    """The events of a .bp file, as the daemon made them."""
    events = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = parse_bp_line(line.rstrip("\n"))
                name = rec.pop("event")[len(PREFIX) :]
                rec.pop("level", None)
                events.append(make_event(name, dict(rec)))
    return events


def corpus_events() -> list:
    return bp_events(CORPUS_BP / "events.bp")


async def queue_op(base: str, exchange: str, queue: str, op: str) -> int:
    conn = await aio_pika.connect(base)
    async with conn:
        ch = await conn.channel()
        if op == "declare":
            ex = await ch.declare_exchange(exchange, aio_pika.ExchangeType.TOPIC, durable=True)
            q = await ch.declare_queue(queue, durable=True)
            await q.bind(ex, "#")
            return 0
        if op == "count":
            q = await ch.declare_queue(queue, durable=True, passive=True)
            return int(q.declaration_result.message_count or 0)
        await ch.queue_delete(queue)
        await ch.exchange_delete(exchange)
        return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--batch", type=int, default=200, help="events per write_batch/flush")
    p.add_argument("--url", default=os.environ.get("MONITORD_TEST_AMQP_URL"))
    args = p.parse_args()
    if not args.url:
        print("no broker: set MONITORD_TEST_AMQP_URL (scripts/services.sh start rabbitmq)")
        return 2
    exchange = f"monitord.bench.{uuid.uuid4().hex[:8]}"
    queue = exchange + ".q"
    url = f"{args.url.rstrip('/')}/{exchange}"
    config = parse_amqp_url(url, {"events": "*"})
    source = corpus_events()
    events = list(itertools.islice(itertools.cycle(source), args.events))
    run_dir = tempfile.mkdtemp(prefix="amqp-bench-")
    settings = SpoolSettings(root=os.path.join(run_dir, "monitord.spool"), drain_timeout=600)
    sink = AMQPSink(config, run_dir=run_dir)
    spool = BatchSpool(settings.path_for(sink))
    spool.open()
    t0 = time.perf_counter()
    size = 0
    for i in range(0, len(events), args.batch):
        batch = events[i : i + args.batch]
        data = encode_batch(batch)
        size += len(data)
        spool.append(len(batch), data)
        spool.sync()
    spooled = time.perf_counter() - t0
    spool.close()
    print(
        f"spooled {len(events)} events ({size / 1e6:.1f} MB) in {spooled:.2f} s: "
        f"{len(events) / spooled:,.0f} events/s with an fsync every {args.batch}"
    )
    asyncio.run(queue_op(args.url, exchange, queue, "declare"))
    try:
        worker = SinkWorker(sink, spool=settings)
        t1 = time.perf_counter()
        worker.start()
        while worker.health().spooled or not worker.health().events_written:
            time.sleep(0.01)
        drained = time.perf_counter() - t1
        worker.request_stop()
        worker.join()
        count = asyncio.run(queue_op(args.url, exchange, queue, "count"))
        print(
            f"drained {len(events)} spooled events into RabbitMQ (confirmed) in {drained:.2f} s: "
            f"{len(events) / drained:,.0f} events/s; queue holds {count}"
        )
    finally:
        asyncio.run(queue_op(args.url, exchange, queue, "delete"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
