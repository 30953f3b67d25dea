"""Would RabbitMQ's stream protocol take the ingest past aiormq's per-message floor?

The same messages (``bench/ingest_bench.py``'s ``--stream`` pickle, relabelled to today's
headers, published over AMQP 0-9-1 with ``user_id`` as the producers do) go through one fanout
exchange into a quorum queue (what the ingest's partitions are) and a stream queue
(``x-queue-type: stream``); then a fresh child process drains one of them, decoding every
message into the ingest's ``Item`` (``monitord.ingest.batch.classify``: headers, JSON body,
Stampede event):

* ``aiormq``: today's ingest's consumer path (``monitord/ingest/consumer.py`` ``Lane``): the
  channel's aiormq layer, ``basic_consume`` at prefetch 4,000, a batch of 1,000 classified,
  then one ``basic_ack(multiple=True)``;
* ``rstream``: the RabbitMQ team's stream client (``rstream``) from offset ``first``, its
  ``amqp_decoder`` (AMQP 1.0 sections), each message classified: the 0-9-1 headers arrive as
  the message's application properties (bytes keys and values), the routing key as the
  ``x-routing-key`` annotation, ``user_id`` as the properties' ``user_id``;
* ``rstream-raw``: ``rstream`` with no decoder and no classify (the client's chunk path
  alone); after the drain, ``amqp_decoder`` alone over the same bytes (``decode``) and the
  chunks counted (distinct chunk timestamps: a lower bound);
* ``classify`` (no broker, in this process): the classify over the same messages, the share
  both consumers pay.

Figures: CPU µs a message in the consumer process (``time.process_time`` from subscribing to
the last message), the broker's CPU meanwhile (every ``beam.smp``'s ``/proc`` ticks: other
clients of the broker count too, note the load), and messages per second of wall.  Modes
alternate within each round (fresh queues a round); medians printed.  No database: the
ingest's writers are the same whichever way messages arrive.

    MONITORD_TEST_AMQP_URL=amqp://u:p@127.0.0.1:5672/vhost \\
        .venv/bin/python bench/ingest_stream_bench.py --stream /tmp/ingest30h/stream2k.pkl \\
        [--limit N] [--rounds 3] [--stream-port 5552]

Needs the broker's ``rabbitmq_stream`` plugin (``rabbitmq-plugins enable rabbitmq_stream``:
the running broker takes it without a restart) and ``pip install rstream`` (a bench-only
dependency).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "bench"))

import aio_pika  # noqa: E402
from ingest_bench import load_stream, relabel, servers_cpu  # noqa: E402

from monitord.ingest.batch import Item, classify  # noqa: E402
from monitord.ingest.run import loop_factory, settle_collector  # noqa: E402

MODES = ("aiormq", "rstream", "rstream-raw")
MAX_BODY = 1 << 20
PREFETCH, BATCH = 4000, 1000  # the ingest's defaults (conf/monitord-ingest.toml)


def broker_cpu() -> float:
    """CPU seconds of every ``beam.smp`` process so far (Linux ``/proc``)."""
    return servers_cpu("beam.smp")


async def fill(url: str, quorum: str, stream_queue: str, messages: list[Any]) -> None:
    """Every message into both queues, one confirmed 0-9-1 publish each (a fanout copies)."""
    user = urlparse(url).username
    async with await aio_pika.connect(url) as conn:
        ch = await conn.channel(publisher_confirms=True)
        fanout = await ch.declare_exchange(
            f"streambench-{uuid.uuid4().hex[:8]}", aio_pika.ExchangeType.FANOUT, auto_delete=True
        )
        q = await ch.declare_queue(quorum, durable=True, arguments={"x-queue-type": "quorum"})
        s = await ch.declare_queue(stream_queue, durable=True, arguments={"x-queue-type": "stream"})
        await q.bind(fanout)
        await s.bind(fanout)
        for i in range(0, len(messages), 200):
            await asyncio.gather(
                *(
                    fanout.publish(aio_pika.Message(b, headers=h, user_id=user), k)
                    for k, h, b, _ in messages[i : i + 200]
                )
            )
        await fanout.delete()


async def drop(url: str, queues: list[str]) -> None:
    async with await aio_pika.connect(url) as conn:
        ch = await conn.channel()
        for name in queues:
            await ch.queue_delete(name)


def text_map(props: dict[bytes, Any] | None) -> dict[str, Any]:
    """Application properties as the 0-9-1 headers the ingest reads (str keys, str values)."""
    return {k.decode(): v.decode() if isinstance(v, bytes) else v for k, v in (props or {}).items()}


async def drain_aiormq(url: str, queue: str, n: int, items: list[Item]) -> tuple[float, float]:
    """Today's lane: buffer deliveries, classify a batch, ack it with one multiple ack."""
    done = asyncio.Event()
    buffer: list[Any] = []
    async with await aio_pika.connect(url) as conn:
        ch = await conn.channel()
        await ch.set_qos(prefetch_count=PREFETCH)
        raw = await ch.get_underlay_channel()

        async def on_message(message: Any) -> None:
            buffer.append(message)
            if len(buffer) == BATCH or len(items) + len(buffer) == n:
                batch = buffer[:]
                buffer.clear()
                for m in batch:
                    props = m.header.properties
                    key = m.routing_key or ""
                    items.append(classify(m, key, m.body, props.headers, props.user_id, MAX_BODY))
                await raw.basic_ack(batch[-1].delivery_tag, multiple=True)
                if len(items) == n:
                    done.set()

        cpu, wall = time.process_time(), time.monotonic()
        await raw.basic_consume(queue, on_message)
        await done.wait()
        return time.process_time() - cpu, time.monotonic() - wall


async def drain_rstream(
    url: str, port: int, queue: str, n: int, mode: str, items: list[Any]
) -> tuple[float, float]:
    """The stream from its first offset through rstream, each message classified (``rstream``)
    or only counted (``rstream-raw``)."""
    from rstream import Consumer, ConsumerOffsetSpecification, OffsetType, amqp_decoder

    u = urlparse(url)
    done = asyncio.Event()
    consumer = Consumer(
        u.hostname or "127.0.0.1",
        port,
        username=unquote(u.username or ""),
        password=unquote(u.password or ""),
        vhost=unquote(u.path[1:]) or "/",
    )
    await consumer.start()

    def on_raw(message: bytes, context: Any) -> None:
        items.append((context.offset, context.timestamp, message))
        if len(items) == n:
            done.set()

    def on_message(message: Any, context: Any) -> None:
        props = message.properties
        key = message.message_annotations[b"x-routing-key"].decode()
        user = props.user_id.decode() if props.user_id is not None else None
        headers = text_map(message.application_properties)
        items.append(classify(context.offset, key, message.body, headers, user, MAX_BODY))
        if len(items) == n:
            done.set()

    cpu, wall = time.process_time(), time.monotonic()
    await consumer.subscribe(
        queue,
        on_raw if mode == "rstream-raw" else on_message,
        decoder=None if mode == "rstream-raw" else amqp_decoder,
        offset_specification=ConsumerOffsetSpecification(OffsetType.FIRST, None),
    )
    await done.wait()
    used = time.process_time() - cpu, time.monotonic() - wall
    await consumer.close()
    return used


def child(args: argparse.Namespace) -> int:
    """One drain, on the ingest program's event loop and collector settings (``run.py``)."""
    items: list[Any] = []
    settle_collector()
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        if args.consume == "aiormq":
            cpu, wall = runner.run(drain_aiormq(args.url, args.queue, args.messages, items))
        else:
            cpu, wall = runner.run(
                drain_rstream(
                    args.url, args.stream_port, args.queue, args.messages, args.consume, items
                )
            )
    got = {"cpu": cpu, "wall": wall, "n": len(items)}
    got["refused"] = sum(1 for i in items if isinstance(i, Item) and i.event is None)
    if args.consume == "rstream-raw":  # (offset, chunk timestamp, bytes)
        got["chunks"] = len({stamp for _, stamp, _ in items})
        from rstream import amqp_decoder

        took = time.process_time()
        for _, _, data in items:
            amqp_decoder(data)
        got["decode"] = time.process_time() - took
    print(json.dumps(got))
    return 0


def one(args: argparse.Namespace, mode: str, queue: str, n: int) -> dict[str, float]:
    broker = broker_cpu()
    out = subprocess.run(
        [sys.executable, __file__, "--consume", mode, "--queue", queue, "--messages", str(n)]
        + ["--stream-port", str(args.stream_port)],
        check=True,
        capture_output=True,
        text=True,
    )
    got: dict[str, float] = json.loads(out.stdout)
    got["broker"] = broker_cpu() - broker
    return got


def classify_floor(messages: list[Any]) -> float:
    """CPU µs a message of ``classify`` alone (no broker; the headers as aiormq gives them)."""
    cpu = time.process_time()
    for k, h, b, u in messages:
        classify(None, k, b, h, u, MAX_BODY)
    return (time.process_time() - cpu) * 1e6 / len(messages)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--stream", type=Path, help="ingest_bench.py's stream pickle (required)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--stream-port", type=int, default=5552)
    ap.add_argument("--consume", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--queue", help=argparse.SUPPRESS)
    ap.add_argument("--messages", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.url = os.environ["MONITORD_TEST_AMQP_URL"]
    if args.consume:
        return child(args)
    if args.stream is None:
        ap.error("--stream is required")
    messages = relabel(load_stream(args.stream, 0, 0))[: args.limit]
    n = len(messages)
    print(f"{n} messages; load {os.getloadavg()[0]:.1f}", flush=True)
    runs: dict[str, list[dict[str, float]]] = {}
    floors = []
    for r in range(args.rounds):
        quorum, stream_queue = (f"streambench-{kind}-{uuid.uuid4().hex[:8]}" for kind in "qs")
        took = time.monotonic()
        asyncio.run(fill(args.url, quorum, stream_queue, messages))
        print(f"round {r + 1}: filled in {time.monotonic() - took:.1f} s", flush=True)
        for mode in args.modes.split(","):
            got = one(args, mode, quorum if mode == "aiormq" else stream_queue, n)
            runs.setdefault(mode, []).append(got)
            extra = ""
            if "chunks" in got:
                extra = f", >= {got['chunks']:.0f} chunks, decode {got['decode'] * 1e6 / n:.1f} µs"
            print(
                f"  {mode:12} {got['cpu'] * 1e6 / n:6.1f} µs CPU a message, broker"
                f" {got['broker'] * 1e6 / n:6.1f} µs, {n / got['wall']:8,.0f} messages/s,"
                f" refused {got['refused']:.0f}{extra}; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        floors.append(classify_floor(messages))
        print(f"  classify     {floors[-1]:6.1f} µs CPU a message (no broker)", flush=True)
        asyncio.run(drop(args.url, [quorum, stream_queue]))
    print(f"medians of {args.rounds} rounds (µs a message; consumer, broker; messages/s):")
    for mode, values in runs.items():
        cpu = statistics.median(v["cpu"] for v in values) * 1e6 / n
        broker = statistics.median(v["broker"] for v in values) * 1e6 / n
        rate = statistics.median(n / v["wall"] for v in values)
        print(f"  {mode:12} {cpu:6.1f}  {broker:6.1f}  {rate:8,.0f}")
    print(f"  classify     {statistics.median(floors):6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
