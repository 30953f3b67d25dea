"""Where an ingest batch's time goes: CPU profile, round trips and transactions per 1,000 events.

The ingest's own batch path (:func:`classify`, :func:`plan`, :meth:`Store.commit`) is driven
in this process, without the broker, on a fresh PostgreSQL (or ``--db``) database, with the
stream of ``--workflows`` generated workflows replayed by monitord producers (``ingest =
true``, the same input as ``bench/ingest_bench.py``; ``--stream FILE`` keeps it between runs).

Printed: events/s of the batch path alone, CPU seconds (process time: what a loaded machine
distorts least) against wall seconds, driver round trips (``cursor.execute`` /
``executemany`` calls, each a round trip to the server) and commits per 1,000 events, the
round trips by statement kind, and the top of the cProfile by cumulative time.

    MONITORD_TEST_AMQP_URL=... MONITORD_TEST_POSTGRES_URL=... \\
        .venv/bin/python bench/ingest_profile.py [--workflows 4] [--jobs 250] [--batch 1000]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "bench"))

from ingest_bench import add_stream_options, load_stream, relabel  # noqa: E402
from sqlalchemy import event  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from monitord.ingest.batch import classify, plan  # noqa: E402
from monitord.ingest.store import Store  # noqa: E402
from tests.ingest_harness import TapMessage  # noqa: E402
from tests.servers import create_database, drop_database  # noqa: E402

_VERB = re.compile(r"^\s*(\w+)(?:\s+(?:INTO|FROM)?\s*(\w+))?", re.I)


class Counts:
    """Driver round trips, counted on the DBAPI cursor (the loader's raw path bypasses Core)."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.commits = 0
        self.server = 0.0  # CPU seconds of the database's backends (:func:`backends_cpu`)

    def note(self, sql: str) -> None:
        for part in sql.split(";")[:1]:
            m = _VERB.match(part)
            self.kinds[" ".join(g for g in (m.groups() if m else ()) if g).lower()] += 1


def counting_cursor(counts: Counts) -> Any:
    import psycopg2.extensions

    class Cursor(psycopg2.extensions.cursor):  # type: ignore[misc]
        def execute(self, sql: Any, params: Any = None) -> Any:
            counts.note(sql if isinstance(sql, str) else sql.decode())
            return super().execute(sql, params)

        def executemany(self, sql: Any, params: Any) -> Any:
            counts.note(sql if isinstance(sql, str) else sql.decode())
            return super().executemany(sql, params)

    return Cursor


def backends_cpu(url: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving ``url``'s database (the server on
    this machine; Linux ``/proc``): the database's own cost of the batches, without the other
    clients of a shared server."""
    import psycopg2

    tick = os.sysconf("SC_CLK_TCK")
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid()"
            )
            pids = [int(r[0]) for r in cur.fetchall()]
    finally:
        conn.close()
    used = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / tick
    return used


def run(url: str, stream: list[TapMessage], batch: int, counts: Counts) -> tuple[float, float]:
    store = Store(url, master_db_url="bench")
    store.sink._engine_kw = {"connect_args": {"cursor_factory": counting_cursor(counts)}}
    store.open()
    engine = store.sink._require_engine()

    @event.listens_for(engine, "commit")
    def _commit(_conn: Any) -> None:
        counts.commits += 1

    counts.kinds.clear()
    counts.commits = 0
    server = backends_cpu(url)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(stream), batch):
        items = [
            classify(n, k, b, h, u, 1 << 20) for n, (k, h, b, u) in enumerate(stream[i : i + batch])
        ]
        marks = store.marks({it.producer for it in items if it.producer is not None})
        todo = plan(items, marks, store.workflows)
        assert not todo.dead, [(d.reason, d.detail) for d in todo.dead[:3]]
        store.commit(todo.events, list(todo.marks.values()))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server = {pid: t - server.get(pid, 0.0) for pid, t in backends_cpu(url).items()}
    counts.server = sum(server.values())
    store.close()
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_stream_options(ap, jobs=250)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--plain", action="store_true", help="no profiled run")
    args = ap.parse_args()
    stream = load_stream(args.stream, args.workflows, args.jobs)[: args.limit]
    base = os.environ["MONITORD_TEST_POSTGRES_URL"]
    print(f"stream: {len(stream)} messages; batch {args.batch}; load {os.getloadavg()[0]:.1f}")
    counts = Counts()
    for label, profile in (("plain", False), ("profiled", True))[: 1 if args.plain else 2]:
        name = f"{make_url(base).database}_prof_{uuid.uuid4().hex[:6]}"
        url = create_database(base, name)
        try:
            prof = cProfile.Profile() if profile else None
            if prof is not None:
                prof.enable()
            wall, cpu = run(url, relabel(stream), args.batch, counts)
            if prof is not None:
                prof.disable()
        finally:
            drop_database(base, name)
        per_k = 1000 / len(stream)
        print(
            f"{label}: {len(stream) / wall:,.0f} events/s wall, {len(stream) / cpu:,.0f} events/s"
            f" of CPU ({wall:.2f} s wall, {cpu:.2f} s CPU); per 1,000 events:"
            f" {sum(counts.kinds.values()) * per_k:.1f} round trips,"
            f" {counts.commits * per_k:.2f} commits; PostgreSQL's backends"
            f" {counts.server * 1e6 / len(stream):.1f} µs CPU per event"
        )
        if prof is None:
            for kind, n in counts.kinds.most_common(12):
                print(f"    {n * per_k:8.1f}  {kind}")
        else:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
