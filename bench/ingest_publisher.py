"""A paced publisher for ``bench/ingest_bench.py``'s latency figure, in a process of its own.

The bench's earlier publisher (aio-pika, one connection in the bench's process, a chunk of
messages then their confirms awaited before the next chunk) reached ~350 messages/s here: each
chunk waited a confirm round trip under load.  This one offers a steady rate:

* the messages are encoded before the clock starts: routing key, body and aiormq's
  ``Basic.Properties`` (headers, ``user_id``, persistent), nothing built per send;
* sends follow the clock, not a sleep per message: every tick (~1 ms) it publishes what is
  due by ``start + i / rate`` (a late tick catches up), from a shared wall-clock start so
  several processes together offer the sum of their rates;
* confirms are not awaited one by one: each publish is a task, up to ``window`` in flight,
  and all of them are awaited at the end (a nack or a lost confirm fails the run); nor is
  each frame's write (``wait=False``: aiormq would hold its channel lock until the socket
  took the frame).

Each message's send and confirm times (``time.time()``, the bench compares them with
PostgreSQL's marks: the confirm is when the broker holds it, so it splits the latency into the
broker's part and the ingest's) are written with the achieved rate and how far the sends fell
behind the schedule.

    python bench/ingest_publisher.py JOB.pickle RESULT.pickle
    # JOB: {"url", "exchange", "rate", "start", "window", "messages": [(key, headers, body, user)]}
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import sys
import time
from array import array
from pathlib import Path
from typing import Any, cast

import aiormq
from aiormq.abc import ConfirmationFrameType
from pamqp import commands as spec

TICK = 0.001  # seconds between two looks at the clock when nothing is due


def encoded(messages: list[tuple[str, dict[str, Any], bytes, str | None]]) -> list[Any]:
    """(routing key, body, properties) per message, as the producer sends them."""
    return [
        (key, body, spec.Basic.Properties(headers=h, user_id=u, delivery_mode=2))
        for key, h, body, u in messages
    ]


async def publish(job: dict[str, Any]) -> dict[str, Any]:
    messages = encoded(job["messages"])
    rate, start, exchange = float(job["rate"]), float(job["start"]), job["exchange"]
    sent = array("d", bytes(8 * len(messages)))
    confirmed = array("d", bytes(8 * len(messages)))

    def confirmed_at(i: int, _: object) -> None:
        confirmed[i] = time.time()
        window.release()

    conn = await aiormq.connect(job["url"])
    channel = cast(aiormq.Channel, await conn.channel(publisher_confirms=True))
    window = asyncio.Semaphore(int(job["window"]))
    tasks: list[asyncio.Task[ConfirmationFrameType | None]] = []
    late = 0.0
    await asyncio.sleep(max(0.0, start - time.time()))
    i = 0
    while i < len(messages):
        now = time.time()
        due = min(len(messages), int((now - start) * rate) + 1)
        while i < due:
            await window.acquire()
            key, body, props = messages[i]
            sent[i] = time.time()
            late = max(late, sent[i] - (start + i / rate))
            task = asyncio.ensure_future(
                channel.basic_publish(
                    body, exchange=exchange, routing_key=key, properties=props, wait=False
                )
            )
            task.add_done_callback(functools.partial(confirmed_at, i))
            tasks.append(task)
            i += 1
        await asyncio.sleep(max(TICK / 10, min(TICK, start + i / rate - time.time())))
    done = await asyncio.gather(*tasks)
    nacked = sum(1 for frame in done if not isinstance(frame, spec.Basic.Ack))
    await conn.close()
    span = sent[-1] - sent[0] if len(sent) > 1 else 0.0
    return {
        "sent": sent,
        "confirmed": confirmed,
        "nacked": nacked,
        "achieved": (len(sent) - 1) / span if span > 0 else 0.0,
        "late": late,
        "cpu": time.process_time(),
    }


def main() -> int:
    job = pickle.loads(Path(sys.argv[1]).read_bytes())
    result = asyncio.run(publish(job))
    Path(sys.argv[2]).write_bytes(pickle.dumps(result))
    return 1 if result["nacked"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
