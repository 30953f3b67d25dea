"""How long a message waits in an ingest lane (``monitord/ingest/consumer.py`` ``Lane``) at a
steady rate, the broker and the database left out: what the lane's batching adds to
publish-to-row latency, which ``bench/ingest_bench.py`` measures whole but, on a loaded
machine, under the noise of the broker's and PostgreSQL's share of the cores.

A task hands the lane one message every ``1 / rate`` seconds (paced by the clock); the
lane's batches go to a stand-in for the database writer that takes ``--commit`` seconds (a
sleep: the lane's event loop stays free, as when the writer thread commits) and records, for
each message of the batch, the time from its arrival to the end of its commit.  Little CPU:
the figures are the lane's schedule, nearly free of the machine's load.

    PYTHONPATH=TREE .venv/bin/python bench/ingest_lane_bench.py [--rate 1000] [--commit 0.02,0.1,0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from types import SimpleNamespace
from typing import Any

from monitord.ingest.consumer import Lane


class Writer:
    """The stand-in for the ingest around a lane: ``cfg`` and ``process``."""

    def __init__(self, batch: int, batch_wait: float, commit: float) -> None:
        self.cfg = SimpleNamespace(batch=batch, batch_wait=batch_wait)
        self.commit = commit
        self.arrived: dict[int, float] = {}
        self.waits: list[float] = []
        self.batches = 0

    async def process(self, lane: Lane, batch: list[Any]) -> None:
        await asyncio.sleep(self.commit)
        now = time.monotonic()
        self.waits.extend(now - self.arrived[m] for m in batch)
        self.batches += 1


async def run(rate: float, seconds: float, writer: Writer) -> None:
    lane = Lane(writer, 0, None, None)  # type: ignore[arg-type]
    consumer = asyncio.ensure_future(lane.run())
    start = time.monotonic()
    total = int(rate * seconds)
    i = 0
    while i < total:
        due = min(total, int((time.monotonic() - start) * rate) + 1)
        while i < due:
            writer.arrived[i] = time.monotonic()
            await lane.on_message(i)  # type: ignore[arg-type]
            i += 1
        await asyncio.sleep(0.001)
    while len(writer.waits) < total:
        await asyncio.sleep(0.01)
    lane.stop()
    await consumer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rate", type=float, default=1000.0, help="messages/s into the lane")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--commit", default="0.02,0.1,0.3", help="seconds a batch's commit takes")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--batch-wait", type=float, default=0.2)
    args = ap.parse_args()
    for commit in (float(c) for c in args.commit.split(",")):
        writer = Writer(args.batch, args.batch_wait, commit)
        asyncio.run(run(args.rate, args.seconds, writer))
        waits = sorted(writer.waits)
        print(
            f"rate {args.rate:,.0f}/s, commit {commit * 1000:.0f} ms: {writer.batches} batches"
            f" (mean {len(waits) / writer.batches:.0f}); arrival to commit p50"
            f" {statistics.median(waits) * 1000:.0f} ms, p99"
            f" {waits[int(len(waits) * 0.99) - 1] * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
