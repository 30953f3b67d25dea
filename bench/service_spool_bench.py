"""How big a spool the service drains after a database outage, and how fast.

What an outage leaves behind: W workflows' spools (one per workflow, as the service's lanes
write them while the server is down) holding the events of a generated workflow, each copy
with its own workflow UUIDs.  Then the service's sink pool starts on them with the server up,
as after the outage: every workflow's delivery on the server's one lane, shared engine, one
spooled batch per turn.  Timed until every spool is empty; the database's row count is checked.

    MONITORD_TEST_POSTGRES_URL=postgresql://user:pass@127.0.0.1:5432/db \\
        .venv/bin/python bench/service_spool_bench.py [--workflows 20] [--jobs 400] [--no-marks]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from sqlalchemy import text  # noqa: E402

from monitord.core.events import StampedeEvent  # noqa: E402
from monitord.service.sinkpool import SinkPool  # noqa: E402
from sinks.runtime.base import Sink  # noqa: E402
from sinks.runtime.codec import encode_batch  # noqa: E402
from sinks.runtime.marks import marks_of  # noqa: E402
from sinks.runtime.spool import BatchSpool, SpoolSettings  # noqa: E402
from sinks.sql import SQLSink  # noqa: E402
from tests.servers import create_database, drop_database  # noqa: E402

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Capture:
    """Stands in for the daemon's sinks: keeps every published batch, encoded."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, bytes]] = []

    def __bool__(self) -> bool:
        return True

    def start(self) -> None: ...

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        self.batches.append((len(batch), encode_batch(batch, marks_of(batch))))

    def flush(self) -> None: ...

    def close(self) -> None: ...


class _CaptureOutputs:
    """The Monitor's outputs (monitord/daemon/parts.py Outputs): always the capture."""

    def __init__(self, capture: _Capture) -> None:
        self.capture = capture

    def sink_set(self, sinks: list[Sink], spool: SpoolSettings | None) -> _Capture:
        return self.capture

    async def settle(self) -> None: ...

    def forget_marks(self, root_uuid: str) -> None: ...


def workflow_batches(tmp: Path, jobs: int, marks: bool = True) -> list[tuple[int, bytes]]:
    """The event batches a replay of a generated workflow of ``jobs`` jobs publishes (with the
    delivery marks the service gives them, unless ``marks`` is False)."""
    from monitord.daemon.monitor import Monitor, MonitorConfig
    from monitord.daemon.resuming import CrashResume
    from monitord.tools.synthetic import generate

    made = generate(tmp / "wf", jobs, seed=5, name="bench")
    config = MonitorConfig(str(made.dagman_out), dashboard=False, notifications=False)
    capture = _Capture()
    # numbered as the service numbers its events (sinks/runtime/marks.py)
    resume = CrashResume(stream="bench" if marks else None)
    monitor = Monitor(config, _CaptureOutputs(capture), resume=resume)

    async def replay() -> None:
        try:
            await asyncio.to_thread(monitor.start)
            await monitor.replay_all()
        finally:
            await monitor.close()

    asyncio.run(replay())
    return capture.batches


def _renamer():  # type: ignore[no-untyped-def]
    """A ``re.sub`` callback giving each workflow UUID of one copy a new one, consistently."""
    ids: dict[bytes, bytes] = {}
    return lambda m: ids.setdefault(m[0], str(uuid.uuid4()).encode())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workflows", type=int, default=20)
    p.add_argument("--jobs", type=int, default=400, help="jobs of the generated workflow")
    p.add_argument("--url", default=os.environ.get("MONITORD_TEST_POSTGRES_URL"))
    p.add_argument(
        "--no-marks", action="store_true", help="batches without delivery marks (before resume)"
    )
    args = p.parse_args()
    if not args.url:
        print("no server: set MONITORD_TEST_POSTGRES_URL (scripts/services.sh start postgres)")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="spool-bench-"))
    batches = workflow_batches(tmp, args.jobs, marks=not args.no_marks)
    events = sum(count for count, _ in batches)
    name = f"{args.url.rsplit('/', 1)[-1]}_spoolbench"
    url = create_database(args.url, name)
    try:
        settings, size, total = [], 0, 0
        t0 = time.perf_counter()
        for w in range(args.workflows):
            s = SpoolSettings(str(tmp / f"run{w}" / "monitord.spool"))
            settings.append(s)
            spool = BatchSpool(s.path_for(SQLSink(url)))
            spool.open()
            fresh = _renamer()
            own_dir = str(tmp / f"copy{w}").encode()  # replica paths are global rows: per copy
            for count, data in batches:
                data = UUID.sub(fresh, data).replace(str(tmp).encode(), own_dir)
                spool.append(count, data)
                size += len(data)
            total += spool.events
            spool.sync()
            spool.close()
        filled = time.perf_counter() - t0
        print(
            f"spool left by the outage: {args.workflows} workflows x {events} events = "
            f"{total} events, {size / 1e6:.1f} MB (written in {filled:.1f} s)"
        )
        pool = SinkPool(local_lanes=1)
        t1 = time.perf_counter()
        sets = [
            pool.sink_set(f"/bench/run{w}", f"w{w}")([SQLSink(url)], settings[w])
            for w in range(args.workflows)
        ]
        handles = [h for s in sets for h in s.handles]
        for h in handles:  # a delivery starts on its first turn; nothing new is published
            with h.lane.cond:
                h.lane.schedule(h)
        while any(h.spooled or not h.policy.state == "up" or not h.drained_events
                  for h in handles):  # fmt: skip
            assert not any(h.failed for h in handles), [h.health() for h in handles]
            time.sleep(0.05)
        drained = time.perf_counter() - t1
        for s in sets:
            s.close()
        pool.close()
        engine = SQLSink(url)
        engine.open()
        assert engine._engine is not None
        with engine._engine.connect() as conn:
            rows = conn.execute(text("SELECT count(*) FROM jobstate")).scalar()
            wfs = conn.execute(text("SELECT count(*) FROM workflow")).scalar()
        engine.close()
        print(
            f"drained by the service's lane into PostgreSQL in {drained:.1f} s: "
            f"{total / drained:,.0f} events/s, {size / 1e6 / drained:.2f} MB/s; "
            f"{wfs} workflows, {rows} jobstate rows in the database"
        )
    finally:
        drop_database(args.url, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
