"""What handing a batch to the ``--sql-process`` child costs, per event (issue 30).

Captures the SQL sink's batches of a real replay (a copy of a generated workflow), then times,
per event, encoding in the daemon and decoding in the child for: the crossing ``--sql-process``
uses (``sinks/runtime/crossing.py``: tuples, one pickle), the spool's codec
(``sinks/runtime/codec.py``: orjson of wire dicts) and a plain pickle of the event objects.
Each decoded batch is checked equal to the original (same classes, same attributes).

    TZ=UTC .venv/bin/python bench/crossing_bench.py --jobs 2000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from monitord.core.events import StampedeEvent
from sinks.runtime.codec import decode_batch, encode_batch
from sinks.runtime.crossing import decode_events, encode_events


def capture(jobs: int, work: Path) -> list[list[StampedeEvent]]:
    """The batches the SQL sink is handed in a replay of a ``jobs``-job workflow."""
    from monitord.daemon.config import MonitorConfig
    from monitord.daemon.run import run_replay
    from monitord.tools.synthetic import generate
    from sinks.sql.sink import SQLSink

    out = generate(work / "run", jobs, seed=1, name="crossing").dagman_out
    batches: list[list[StampedeEvent]] = []
    original = SQLSink.write_batch

    def keep(self: SQLSink, events: Sequence[StampedeEvent]) -> None:
        batches.append(list(events))
        original(self, events)

    SQLSink.write_batch = keep  # type: ignore[method-assign]
    os.environ["HOME"] = str(work)
    asyncio.run(
        run_replay(MonitorConfig(str(out), replay=True, dashboard=False, sql_process=False))
    )
    SQLSink.write_batch = original  # type: ignore[method-assign]
    return batches


WAYS: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], list[StampedeEvent]]]] = {
    "crossing (tuples, pickle)": (encode_events, decode_events),
    "codec (orjson wire dicts)": (encode_batch, decode_batch),
    "pickle of the events": (
        lambda b: pickle.dumps(list(b), protocol=pickle.HIGHEST_PROTOCOL),
        pickle.loads,
    ),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="crossing-"))
    try:
        batches = capture(args.jobs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    events = sum(len(b) for b in batches)
    print(f"{events} events in {len(batches)} batches; load {os.getloadavg()[0]:.2f}")
    print("| crossing | encode µs/event | decode µs/event | bytes/event |")
    print("|---|---:|---:|---:|")
    for name, (encode, decode) in WAYS.items():
        for batch in batches:  # each way gives back the same events
            back = decode(encode(batch))
            assert [type(e) for e in back] == [type(e) for e in batch] and back == batch, name
        enc, dec = [], []
        size = 0
        for _ in range(args.rounds):
            t0 = time.process_time()
            data = [encode(b) for b in batches]
            t1 = time.process_time()
            for d in data:
                decode(d)
            t2 = time.process_time()
            enc.append(t1 - t0)
            dec.append(t2 - t1)
            size = sum(len(d) for d in data)
        print(
            f"| {name} | {statistics.median(enc) / events * 1e6:.2f} | "
            f"{statistics.median(dec) / events * 1e6:.2f} | {size / events:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
