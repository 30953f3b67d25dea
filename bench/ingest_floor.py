"""The AMQP client's floor: what receiving (and acknowledging) a message costs the consumer
process before the ingest does anything with it (issue 30: "what limits it is named").

A queue per consumer is filled with ``--messages`` messages shaped like the ingest's (a ~450-byte JSON
body, the five ``monitord-*`` headers, ``user_id``), then a child process consumes them with
one of these consumers and reports its own CPU seconds (``time.process_time``, all threads)
from just before ``basic.consume`` to the last message handled:

* ``pika-each``: aio-pika's ``queue.consume`` callback, ``message.ack()`` per message;
* ``pika-batch``: the same, one ``ack(multiple=True)`` per ``--batch`` messages;
* ``pika-noack``: aio-pika, ``no_ack=True`` (no ack frames at all);
* ``aiormq-batch``: the channel's aiormq layer (``basic_consume``; what the ingest's lanes
  use), one ``basic_ack(multiple=True)`` per batch;
* ``aiormq-lean``: ``aiormq-batch`` with a leaner frame read patched in (this bench only: two
  ``readexactly`` a frame, no lock, no ``BytesIO``): what a leaner reader would save;
* ``parse``: no broker: pamqp unmarshalling the three frames of a delivery (deliver, content
  header, body) from bytes, which every client on pamqp pays.

Modes and rounds alternate (a round of every mode, then the next round); medians printed.

    MONITORD_TEST_AMQP_URL=amqp://u:p@127.0.0.1:5672/vhost \\
        .venv/bin/python bench/ingest_floor.py [--messages 30000] [--prefetch 1000,10000]
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
from typing import Any

import aio_pika
import aiormq.abc
import aiormq.connection
import aiormq.exceptions
from pamqp import commands, frame, header
from pamqp.body import ContentBody

MODES = ("pika-each", "pika-batch", "pika-noack", "aiormq-batch", "aiormq-lean")


def body(i: int) -> bytes:
    """A job instance event's size and shape (the stream's median body is ~400-500 bytes)."""
    event = {
        "ts": 1700000000 + i,
        "event": "stampede.job_inst.main.start",
        "level": "Info",
        "xwf.id": "7c1a3c52-9d5e-4f7a-8a3b-2f3c4d5e6f70",
        "job_inst.id": i % 1000 + 1,
        "job.id": f"preprocess_ID{i:07d}",
        "js.id": 1,
        "sched.id": f"{i}.0",
        "std.in.file": "/scratch/run0001/00/00/preprocess_ID0000001.in",
        "std.out.file": "/scratch/run0001/00/00/preprocess_ID0000001.out",
        "std.err.file": "/scratch/run0001/00/00/preprocess_ID0000001.err",
        "work_dir": "/scratch/run0001",
        "submit_dir": "/home/user/runs/diamond/run0001",
    }
    return json.dumps(event).encode()


def headers(i: int) -> dict[str, aiormq.abc.FieldValue]:
    return {
        "monitord-producer": "3f2a9c0d4b5e6f708192a3b4c5d6e7f8",
        "monitord-seq": i,
        "monitord-slot": "17",
        "monitord-stream": "a1b2c3d4e5f60718",
        "monitord-event": i + 1,
    }


async def fill(url: str, queues: list[str], n: int) -> None:
    """``n`` messages into each of ``queues`` (one publish each: a fanout exchange copies)."""
    async with await aio_pika.connect(url) as conn:
        ch = await conn.channel(publisher_confirms=True)
        fanout = await ch.declare_exchange(
            f"floor-{uuid.uuid4().hex[:8]}", aio_pika.ExchangeType.FANOUT, auto_delete=True
        )
        for queue in queues:
            q = await ch.declare_queue(queue, arguments={"x-expires": 900_000})
            await q.bind(fanout)
        user = conn.transport.connection.url.user if conn.transport else None
        for start in range(0, n, 500):
            await asyncio.gather(
                *(
                    fanout.publish(aio_pika.Message(body(i), headers=headers(i), user_id=user), "")
                    for i in range(start, min(n, start + 500))
                )
            )
        await fanout.delete()


async def consume(url: str, queue: str, n: int, mode: str, prefetch: int, batch: int) -> float:
    """CPU seconds this process spent taking ``n`` messages off ``queue``."""
    done = asyncio.Event()
    seen = 0
    async with await aio_pika.connect(url) as conn:
        ch = await conn.channel()
        await ch.set_qos(prefetch_count=prefetch)
        q = await ch.get_queue(queue)
        cpu = time.process_time()
        if mode.startswith("aiormq"):
            raw = await ch.get_underlay_channel()

            async def on_raw(message: aiormq.abc.DeliveredMessage) -> None:
                nonlocal seen
                seen += 1
                if seen % batch == 0 or seen == n:
                    assert message.delivery_tag is not None
                    await raw.basic_ack(message.delivery_tag, multiple=True)
                if seen == n:
                    done.set()

            await raw.basic_consume(queue, on_raw)
        else:

            async def on_message(message: aio_pika.abc.AbstractIncomingMessage) -> None:
                nonlocal seen
                seen += 1
                if mode == "pika-each":
                    await message.ack()
                elif mode == "pika-batch" and (seen % batch == 0 or seen == n):
                    await message.ack(multiple=True)
                if seen == n:
                    done.set()

            await q.consume(on_message, no_ack=mode == "pika-noack")
        await done.wait()
        used = time.process_time() - cpu
        await ch.queue_delete(queue)
    return used


def parse_floor(n: int) -> float:
    """CPU µs per message for pamqp to unmarshal a delivery's three frames."""
    deliver = commands.Basic.Deliver("ctag", 1, False, "", "q")
    raw = b"".join(
        [
            frame.marshal(deliver, 1),
            frame.marshal(
                header.ContentHeader(
                    0,
                    len(body(1)),
                    commands.Basic.Properties(headers=headers(1), user_id="monitord"),
                ),
                1,
            ),
            frame.marshal(ContentBody(body(1)), 1),
        ]
    )
    cpu = time.process_time()
    for _ in range(n):
        offset = 0
        for _part in range(3):
            used, _channel, _value = frame.unmarshal(raw[offset:])
            offset += used
    return (time.process_time() - cpu) * 1e6 / n


async def _lean_get_frame(self: Any) -> Any:
    """aiormq's ``FrameReceiver.get_frame`` without its lock and ``BytesIO``: the 7-byte frame
    header and the payload with its end octet, two reads (the connection's errors as they
    come: a bench)."""
    if self.reader.at_eof():
        del self.reader
        raise StopAsyncIteration
    head = await self.reader.readexactly(7)
    if not self.started and head.startswith(b"AMQP"):
        raise aiormq.exceptions.ProtocolSyntaxError("Unexpected AMQP protocol header")
    self.started = True
    _, _, length = frame.frame_parts(head)
    assert length is not None
    return frame.unmarshal(head + await self.reader.readexactly(length + 1))


def child(args: argparse.Namespace) -> int:
    if args.consume == "aiormq-lean":
        aiormq.connection.FrameReceiver.get_frame = _lean_get_frame  # type: ignore[method-assign]
    if args.cprofile:
        import cProfile

        with cProfile.Profile() as prof:
            used = asyncio.run(
                consume(
                    args.url, args.queue, args.messages, args.consume, args.prefetch_one, args.batch
                )
            )
        prof.dump_stats(args.cprofile)
        print(json.dumps({"cpu": used}))
        return 0
    used = asyncio.run(
        consume(args.url, args.queue, args.messages, args.consume, args.prefetch_one, args.batch)
    )
    print(json.dumps({"cpu": used}))
    return 0


def one(url: str, queue: str, n: int, mode: str, prefetch: int, batch: int) -> float:
    """CPU µs per message of a fresh consumer process emptying ``queue``."""
    out = subprocess.run(
        [sys.executable, __file__, "--consume", mode, "--queue", queue]
        + ["--messages", str(n), "--prefetch-one", str(prefetch), "--batch", str(batch)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "MONITORD_TEST_AMQP_URL": url},
    )
    return float(json.loads(out.stdout)["cpu"]) * 1e6 / n


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--messages", type=int, default=30000)
    ap.add_argument("--prefetch", default="1000,10000", help="prefetch counts, comma-separated")
    ap.add_argument("--batch", type=int, default=1000, help="messages per multiple ack")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--consume", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--queue", help=argparse.SUPPRESS)
    ap.add_argument("--prefetch-one", type=int, default=1000, help=argparse.SUPPRESS)
    ap.add_argument("--cprofile", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.url = os.environ["MONITORD_TEST_AMQP_URL"]
    if args.consume:
        return child(args)
    print(
        f"body {len(body(1))} bytes; {args.messages} messages a run; load {os.getloadavg()[0]:.1f}"
    )
    print(f"parse (pamqp unmarshal, 3 frames): {parse_floor(50000):.1f} µs per message")
    prefetches = [int(p) for p in args.prefetch.split(",")]
    modes = args.modes.split(",")
    runs: dict[tuple[str, int], list[float]] = {}
    for r in range(args.rounds):
        cases = [(mode, prefetch) for prefetch in prefetches for mode in modes]
        queues = {case: f"floor-{uuid.uuid4().hex[:8]}" for case in cases}
        asyncio.run(fill(args.url, list(queues.values()), args.messages))
        for mode, prefetch in cases:
            us = one(args.url, queues[mode, prefetch], args.messages, mode, prefetch, args.batch)
            runs.setdefault((mode, prefetch), []).append(us)
            print(
                f"  round {r + 1} {mode:13} prefetch {prefetch:>6}: {us:6.1f} µs CPU per"
                f" message; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    print(f"medians of {args.rounds} (CPU µs per message, consumer process):")
    for (mode, prefetch), values in runs.items():
        print(
            f"  {mode:13} prefetch {prefetch:>6}: {statistics.median(values):6.1f}"
            f"  ({', '.join(f'{v:.1f}' for v in values)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
