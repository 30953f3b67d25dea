"""``monitord ingest`` throughput and latency into PostgreSQL (docs/ingest.md, sizing).

1. Events: ``--workflows`` generated workflows are replayed by monitord producers
   (``ingest = true``) into a tap queue; that stream (every message with its producer and
   position headers) is the bench's input, republished under fresh producer ids per run.
2. Throughput: the whole stream is put in the partition queues first, then 1 (then 2)
   ingest processes are started on a fresh database; events/s = messages / time from the
   processes' being healthy (start-up excluded) to the last commit (read from the producers'
   marks in PostgreSQL, not the ingest's /metrics: the bench's polling is not the ingest's
   cost).  Also the CPU
   the processes used meanwhile (Linux ``/proc``), split into the event loop's thread (AMQP
   frames, decoding) and the others (the database calls): events per CPU-second is the figure
   a loaded machine distorts least.
3. Latency: a fresh database, ingests running, the stream published at a steady ``--rate``
   messages/s by ``--publishers`` processes (``bench/ingest_publisher.py``: pre-encoded,
   paced by the clock, confirms batched; each producer's messages from one of them); a poller
   reads the producers' marks (``monitord_ingest_producers``) every 10 ms: a message's
   latency is the first time its producer's mark reaches its position minus the time it was
   sent (p50/p99/max; resolution ~10 ms), with the rate achieved and how far the sends fell
   behind the schedule.

    MONITORD_TEST_AMQP_URL=amqp://u:p@127.0.0.1:5672/vhost \\
    MONITORD_TEST_POSTGRES_URL=postgresql://u:p@127.0.0.1:5432/db \\
        .venv/bin/python bench/ingest_bench.py [--workflows 4] [--jobs 300] [--rate 1000] [--stream FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import os
import pickle
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

import aio_pika  # noqa: E402
from aiormq.abc import FieldValue  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from sinks.amqp.stream import EVENT, STREAM, read_identity, stream_headers  # noqa: E402
from sinks.sql.database import parse_url  # noqa: E402
from tests.ingest_harness import (  # noqa: E402
    Broker,
    IngestProcess,
    TapMessage,
    finish,
    start_producers,
    wait_quiet,
)
from tests.servers import create_database, drop_database  # noqa: E402
from tests.test_sql_servers import _generate_and_replay  # noqa: E402


def make_stream(workflows: int, jobs: int) -> list[TapMessage]:
    """Every message monitord producers publish (``ingest = true``) for ``workflows``
    generated workflows of ``jobs`` jobs, with their headers, in publish order per producer."""
    with tempfile.TemporaryDirectory(prefix="ingest-stream-") as tmpdir:
        tmp = Path(tmpdir)
        made = _generate_and_replay(tmp / "wfs", workflows, jobs, 500)
        tap = Broker(os.environ["MONITORD_TEST_AMQP_URL"])
        tap.declare_tap()
        try:
            finish(start_producers(made, tap, tmp))
            return tap.drain(tap.tap)
        finally:
            tap.delete()


def add_stream_options(ap: argparse.ArgumentParser, jobs: int) -> None:
    """``--workflows``, ``--jobs``, ``--stream``: the stream :func:`load_stream` gives."""
    ap.add_argument("--workflows", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=jobs)
    ap.add_argument("--stream", type=Path, help="pickle of the stream (made if missing)")
    ap.add_argument("--limit", type=int, help="only the stream's first N messages")


def load_stream(path: Path | None, workflows: int, jobs: int) -> list[TapMessage]:
    """The stream kept in ``path`` (a pickle), else made (:func:`make_stream`) and kept there."""
    if path is not None and path.exists():
        stream: list[TapMessage] = pickle.loads(path.read_bytes())
        return stream
    stream = make_stream(workflows, jobs)
    if path is not None:
        path.write_bytes(pickle.dumps(stream))
    return stream


def relabel(stream: list[TapMessage]) -> list[TapMessage]:
    """The same messages under fresh producer ids (a fresh database sees new producers), with
    the headers today's producers send (a stream kept by an earlier monitord had others)."""
    ids: dict[str, str] = {}
    out = []
    for key, headers, body, user in stream:
        old = read_identity(headers)
        new = ids.setdefault(str(old.producer), uuid.uuid4().hex)
        numbered: dict[str, FieldValue] | None = None
        if old.stream is not None and old.number is not None:
            numbered = {STREAM: old.stream, EVENT: old.number}
        out.append((key, stream_headers(new, int(old.seq or 0), numbered), body, user))
    return out


async def publish(
    base: str, exchange: str, stream: list[TapMessage], rate: float | None
) -> list[float]:
    """Publish ``stream`` in order (confirmed), at ``rate`` messages/s if given; publish times."""
    sent: list[float] = []
    async with await aio_pika.connect(base) as conn:
        ch = await conn.channel(publisher_confirms=True)
        ex = await ch.get_exchange(exchange)
        start = time.monotonic()
        chunk = 200 if rate is None else max(1, int(rate / 100))
        for i in range(0, len(stream), chunk):
            if rate is not None:
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            part = stream[i : i + chunk]
            now = time.time()
            await asyncio.gather(
                *(ex.publish(aio_pika.Message(b, headers=h, user_id=u), k) for k, h, b, u in part)
            )
            sent.extend([now] * len(part))
    return sent


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(main thread, other threads) CPU seconds of a process, from ``/proc`` (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    main = rest = 0.0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        used = (int(fields[11]) + int(fields[12])) / tick
        if int(task) == pid:
            main += used
        else:
            rest += used
    return main, rest


SERVERS = ("beam.smp", "postgres")  # RabbitMQ's and PostgreSQL's processes (Linux ``comm``)


def servers_cpu(only: str | None = None) -> float:
    """CPU seconds of every RabbitMQ and PostgreSQL process so far (``only``: of that
    ``comm``'s): on a machine where the broker and the database share the cores with the
    ingest, what they take per event bounds its wall rate.  (Other clients of the same
    servers count too: note the load.)"""
    tick = os.sysconf("SC_CLK_TCK")
    used = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                comm, fields = fh.read().split("(", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        if comm in SERVERS and only in (None, comm):
            parts = fields.split()
            used += (int(parts[11]) + int(parts[12])) / tick
    return used


def last_seqs(stream: list[TapMessage]) -> dict[str, int]:
    """Each producer's highest position in ``stream``: its mark once all of it is loaded."""
    last: dict[str, int] = {}
    for _, headers, _, _ in stream:
        producer, seq, _, _ = read_identity(headers)
        last[str(producer)] = max(int(seq or 0), last.get(str(producer), -1))
    return last


class Committed:
    """Whether every producer's mark reached its last position: read from PostgreSQL (one
    query on the producers' marks, which move in the transaction of their rows), not from the
    ingest's ``/metrics``, whose polling every 0.1 s was ~6 % of the ingest's CPU."""

    def __init__(self, url: str, stream: list[TapMessage]) -> None:
        self.want = last_seqs(stream)
        self.engine = create_engine(parse_url(url))
        self.conn = self.engine.connect()

    def done(self) -> bool:
        rows = self.conn.execute(text("SELECT producer, seq FROM monitord_ingest_producers"))
        marks = {str(p): int(s) for p, s in rows}
        self.conn.commit()
        return all(marks.get(p, -1) >= s for p, s in self.want.items())

    def close(self) -> None:
        self.conn.close()
        self.engine.dispose()


def fresh_db(base: str) -> str:
    return create_database(base, f"{make_url(base).database}_bench_{uuid.uuid4().hex[:6]}")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (``uptime``'s), noted with every figure."""
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def py_spy(pid: int, out: Path, gil: bool = False) -> subprocess.Popen[bytes] | None:
    """``py-spy record`` of ``pid`` (all threads, idle excluded) into ``out`` (speedscope
    JSON) until the process ends or is stopped; ``gil``: only samples holding the GIL (what
    uses the CPU, not what waits for it); None when py-spy is not installed."""
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(exe).exists():
        print("  (py-spy not installed: no profile)")
        return None
    return subprocess.Popen(
        [exe, "record", "--pid", str(pid), "--format", "speedscope", "--output", str(out)]
        + ["--rate", "200", "--nonblocking"]
        + (["--gil"] if gil else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def throughput(
    base_amqp: str,
    base_pg: str,
    stream: list[TapMessage],
    n: int,
    tmp: Path,
    settings: dict[str, Any],
    profile: Path | None = None,
    gil: bool = False,
) -> tuple[float, float, float, float]:
    """events/s, and CPU µs per event in the event loop's thread, in the others and in the
    broker's and database's processes (:func:`servers_cpu`);
    ``profile``: a py-spy record of the first process over the timed part (``gil``: of the
    samples holding the GIL).  Timed until every producer's mark is committed."""
    tmp.mkdir(parents=True, exist_ok=True)
    broker = Broker(base_amqp, partitions=8)
    url = fresh_db(base_pg)
    procs = [IngestProcess(broker, url, tmp, f"{i + 1}/{n}", **settings) for i in range(n)]
    spy = None
    try:
        procs[0].start()
        procs[0].wait_healthy()  # the topology
        procs[0].stop()
        labelled = relabel(stream)
        took = time.monotonic()
        asyncio.run(publish(base_amqp, broker.exchange, labelled, None))
        took = time.monotonic() - took
        print(
            f"  broker: {len(stream)} messages published (confirmed, one connection) into"
            f" {broker.partitions} quorum partition queues at {len(stream) / took:,.0f} messages/s"
        )
        for p in procs:
            p.start()
        for p in procs:
            p.wait_healthy()
        committed = Committed(url, labelled)
        started = time.monotonic()  # (connected; the backlog waits in the partition queues)
        before = [cpu_seconds(p.proc.pid) for p in procs if p.proc is not None]
        servers, database = servers_cpu(), servers_cpu("postgres")
        if profile is not None and procs[0].proc is not None:
            spy = py_spy(procs[0].proc.pid, profile, gil)
        try:
            while not committed.done():
                if time.monotonic() - started > 1800:
                    raise RuntimeError(f"ingest stalled ({len(stream)} messages)")
                time.sleep(0.1)
        finally:
            committed.close()
        rate = len(stream) / (time.monotonic() - started)
        after = [cpu_seconds(p.proc.pid) for p in procs if p.proc is not None]
        servers, database = servers_cpu() - servers, servers_cpu("postgres") - database
        print(f"  of which PostgreSQL: {database * 1e6 / len(stream):.0f} µs per event")
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # (py-spy writes its file on an interrupt)
            spy.wait(60)
            print(f"  profile of process 1: {profile} (speedscope JSON)")
        loop = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
        rest = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
        per = 1e6 / len(stream)
        return rate, loop * per, rest * per, servers * per
    finally:
        for p in procs:
            p.stop()
        broker.delete()
        drop_database(base_pg, str(make_url(url).database))


def split_by_producer(stream: list[TapMessage], parts: int) -> list[list[int]]:
    """``stream``'s indexes in ``parts`` shares of whole producers (one producer's messages
    stay in one publisher, in order), balanced by message count."""
    by: dict[str, list[int]] = {}
    for i, (_, headers, _, _) in enumerate(stream):
        by.setdefault(str(read_identity(headers).producer), []).append(i)
    shares: list[list[int]] = [[] for _ in range(max(1, min(parts, len(by))))]
    for indexes in sorted(by.values(), key=len, reverse=True):
        min(shares, key=len).extend(indexes)
    return [sorted(share) for share in shares]


def paced_publish(
    base: str, exchange: str, stream: list[TapMessage], rate: float, parts: int, tmp: Path
) -> tuple[list[float], float, float]:
    """Publish ``stream`` at ``rate`` messages/s in all from ``parts`` processes
    (``bench/ingest_publisher.py``: pre-encoded, paced by the clock, confirms batched); each
    message's send time, the rate achieved, and the furthest a send fell behind schedule."""
    shares = split_by_producer(stream, parts)
    start = time.time() + 1.0 + 0.2 * len(shares)  # (the processes' imports and connections)
    procs = []
    for n, share in enumerate(shares):
        job = {
            "url": base,
            "exchange": exchange,
            "rate": rate * len(share) / len(stream),
            "start": start,
            "window": 2000,
            "messages": [stream[i] for i in share],
        }
        (tmp / f"job{n}").write_bytes(pickle.dumps(job))
        procs.append(
            subprocess.Popen(
                [sys.executable, str(PROJECT / "bench" / "ingest_publisher.py")]
                + [str(tmp / f"job{n}"), str(tmp / f"sent{n}")]
            )
        )
    for proc in procs:
        if proc.wait() != 0:
            raise RuntimeError(f"a publisher failed (exit {proc.returncode}): nacks or an error")
    sent = [0.0] * len(stream)
    confirmed = [0.0] * len(stream)
    late = 0.0
    for n, share in enumerate(shares):
        result = pickle.loads((tmp / f"sent{n}").read_bytes())
        late = max(late, result["late"])
        print(f"  publisher {n + 1}: {len(share)} messages, CPU {result['cpu']:.2f} s")
        for i, at, held in zip(share, result["sent"], result["confirmed"], strict=True):
            sent[i], confirmed[i] = at, held
    achieved = (len(sent) - 1) / max(max(sent) - min(sent), 1e-9)
    broker = sorted(b - a for a, b in zip(sent, confirmed, strict=True))
    print(
        f"  publish-to-confirm (the broker's part): p50 {statistics.median(broker) * 1000:.0f} ms,"
        f" p99 {broker[int(len(broker) * 0.99) - 1] * 1000:.0f} ms"
    )
    return sent, achieved, late


class MarkPoller(threading.Thread):
    """Every ``every`` seconds, each producer's committed mark and when it was seen (the
    marks move in the transaction of their rows: a message's row is queryable once its
    producer's mark reaches its position)."""

    def __init__(self, url: str, every: float = 0.01) -> None:
        super().__init__(name="marks")
        self.url, self.every = url, every
        self.done = threading.Event()
        self.seen: dict[str, tuple[list[int], list[float]]] = {}

    def run(self) -> None:
        engine = create_engine(parse_url(self.url))
        query = text("SELECT producer, seq FROM monitord_ingest_producers")
        with engine.connect() as conn:
            while not self.done.is_set():
                rows = conn.execute(query).all()
                conn.commit()
                at = time.time()
                for producer, seq in rows:
                    seqs, times = self.seen.setdefault(str(producer), ([], []))
                    if not seqs or int(seq) > seqs[-1]:
                        seqs.append(int(seq))
                        times.append(at)
                time.sleep(self.every)
        engine.dispose()

    def arrived(self, headers: dict[str, Any]) -> float:
        """When the row of the message with these headers was first seen."""
        ident = read_identity(headers)
        seqs, times = self.seen[str(ident.producer)]
        return times[bisect.bisect_left(seqs, int(ident.seq or 0))]


def latency(
    base_amqp: str,
    base_pg: str,
    stream: list[TapMessage],
    rate: float,
    n: int,
    tmp: Path,
    settings: dict[str, Any],
    publishers: int = 2,
) -> tuple[float, float, float, float, float]:
    """(p50, p99, max) seconds from a message's publishing to its row's being queryable, the
    rate the publishers reached and how far they fell behind their schedule at worst."""
    tmp.mkdir(parents=True, exist_ok=True)
    broker = Broker(base_amqp, partitions=8)
    url = fresh_db(base_pg)
    procs = [IngestProcess(broker, url, tmp, f"{i + 1}/{n}", **settings) for i in range(n)]
    poller = MarkPoller(url)
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_healthy()
        poller.start()
        labelled = relabel(stream)
        before = [cpu_seconds(p.proc.pid) for p in procs if p.proc is not None]
        servers = servers_cpu()
        sent, achieved, late = paced_publish(
            base_amqp, broker.exchange, labelled, rate, publishers, tmp
        )
        wait_quiet(broker, procs, quiet=2.0, timeout=1800)
        after = [cpu_seconds(p.proc.pid) for p in procs if p.proc is not None]
        used = sum(sum(a) - sum(b) for a, b in zip(after, before, strict=True))
        print(
            f"  CPU per event: ingest {used * 1e6 / len(stream):.0f} µs, broker and database"
            f" {(servers_cpu() - servers) * 1e6 / len(stream):.0f} µs"
        )
        poller.done.set()
        poller.join()
        lat = sorted(
            poller.arrived(h) - at for (_, h, _, _), at in zip(labelled, sent, strict=True)
        )
        return statistics.median(lat), lat[int(len(lat) * 0.99) - 1], lat[-1], achieved, late
    finally:
        poller.done.set()
        for p in procs:
            p.stop()
        broker.delete()
        drop_database(base_pg, str(make_url(url).database))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_stream_options(ap, jobs=300)
    ap.add_argument("--rate", type=float, default=2000.0, help="latency: events/s published")
    ap.add_argument(
        "--seconds", type=float, default=60.0, help="latency: seconds of the stream published"
    )
    ap.add_argument("--processes", default="1", help="throughput: process counts, e.g. 1,2")
    ap.add_argument(
        "--publishers",
        type=int,
        default=2,
        help="latency: publisher processes (whole producers each)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="each figure's runs (median printed)")
    ap.add_argument("--batch", type=int, default=1000, help="the ingest's [ingest] batch")
    ap.add_argument(
        "--batch-wait",
        type=float,
        default=0.2,
        help="the ingest's [ingest] batch_wait (its default)",
    )
    ap.add_argument("--prefetch", type=int, default=None, help="the ingest's [ingest] prefetch")
    ap.add_argument("--only", choices=("throughput", "latency"), help="one of the two figures")
    ap.add_argument("--profile", type=Path, help="py-spy record of round 1 into this file")
    ap.add_argument("--gil", action="store_true", help="--profile: samples holding the GIL")
    args = ap.parse_args()
    base_amqp = os.environ["MONITORD_TEST_AMQP_URL"]
    base_pg = os.environ["MONITORD_TEST_POSTGRES_URL"]
    stream = load_stream(args.stream, args.workflows, args.jobs)[: args.limit]
    settings: dict[str, Any] = {"batch": args.batch, "batch_wait": args.batch_wait}
    if args.prefetch is not None:
        settings["prefetch"] = args.prefetch
    print(f"stream: {len(stream)} messages; settings {settings}; {load_average()}")
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as tmpdir:
        tmp = Path(tmpdir)
        for n in [int(x) for x in args.processes.split(",")] if args.only != "latency" else []:
            runs = []
            for r in range(args.rounds):
                profile = args.profile if r == 0 and n == 1 else None
                runs.append(
                    throughput(
                        base_amqp,
                        base_pg,
                        stream,
                        n,
                        tmp / f"t{n}-{r}",
                        settings,
                        profile,
                        args.gil,
                    )
                )
                rate, loop, rest, servers = runs[-1]
                print(
                    f"{n} ingest process(es), round {r + 1}: {rate:,.0f} events/s; CPU per event"
                    f" {loop:.0f} µs in the event loop + {rest:.0f} µs in the other threads"
                    f" ({1e6 / (loop + rest):,.0f} events per CPU-second); broker and database"
                    f" {servers:.0f} µs; {load_average()}"
                )
            rate, loop, rest, servers = (statistics.median(x) for x in zip(*runs, strict=True))
            print(
                f"{n} ingest process(es), median of {len(runs)}: {rate:,.0f} events/s;"
                f" {loop:.0f} + {rest:.0f} µs CPU per event ({1e6 / (loop + rest):,.0f} events"
                f" per CPU-second); broker and database {servers:.0f} µs per event"
            )
        if args.only == "throughput":
            return 0
        part = stream[: max(1, int(args.rate * args.seconds))]
        lats = []
        for r in range(args.rounds):
            lats.append(
                latency(
                    base_amqp,
                    base_pg,
                    part,
                    args.rate,
                    1,
                    tmp / f"lat{r}",
                    settings,
                    args.publishers,
                )
            )
            p50, p99, most, achieved, late = lats[-1]
            print(
                f"latency at {args.rate:,.0f} events/s offered ({len(part)} events,"
                f" {args.publishers} publishers; achieved {achieved:,.0f}/s, at worst"
                f" {late * 1000:.0f} ms behind schedule), round {r + 1}: p50 {p50 * 1000:.0f} ms,"
                f" p99 {p99 * 1000:.0f} ms, max {most * 1000:.0f} ms; {load_average()}"
            )
        p50, p99, most, achieved, late = (statistics.median(x) for x in zip(*lats, strict=True))
        print(
            f"publish-to-row latency at {args.rate:,.0f} events/s offered (achieved"
            f" {achieved:,.0f}/s), median of {len(lats)}: p50 {p50 * 1000:.0f} ms,"
            f" p99 {p99 * 1000:.0f} ms, max {most * 1000:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
