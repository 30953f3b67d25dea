"""Workflows that register the same files in one database (issue 23).

The replica tables (``rc_lfn``, ``rc_pfn``, ``rc_meta``) are keyed by file name, not by
workflow: a site's central database, or the service's, holds one row per file whatever the
number of workflows that wrote it.  Three generated workflows planned side by side (one parent
directory, so their register jobs name the same PFNs under the same outputs directory; distinct
seeds, so distinct uuids) go one after the other, at once, and through the service into one
PostgreSQL, one MariaDB and one SQLite database, and through the service into a server whose
connections are cut while they play.  Each workflow's rows must equal its own SQLite replay,
the shared tables the union, and no batch may fall back to row by row writes (which logs, and
costs a statement per row).  Writers started at one barrier make their inserts of one file
meet for sure; the fallback, for what is truly unexpected, is one line and a counter.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent
from sinks.runtime.marks import Marks
from sinks.sql import SQLSink
from sinks.sql.database import make_engine, parse_url
from tests.conftest import copy_submit_dir, require_corpus
from tests.dbcopy import copy_to_sqlite
from tests.proxies import Proxy, free_port
from tests.test_service import (
    attach,
    finished,
    generate_source,
    replay_all,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)
from tests.test_sql_loader import OTHER, ROOT, ev, job, plan
from tests.test_sql_servers import (
    GLOBAL_TABLES,
    KINDS,
    _global_rows,
    _only_workflow,
    assert_same,
    drop,
    fresh_db,
    replay_cmd,
    replay_env,
    row_counts,
)

WORKFLOWS = 3
JOBS = 40
FALLBACK = "row by row"  # the row-by-row fallback's log line says so


@dataclass
class Source:
    src: Path  # the untouched submit dir, copied for every run
    expected: Path  # its own SQLite replay
    wf_uuid: str


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Source]:
    """Three finished submit dirs in one parent, each replayed (a copy) into its own SQLite."""
    base = tmp_path_factory.mktemp("shared")
    dirs = [generate_source(base / "src" / f"wf{i}", JOBS, seed=2300 + i) for i in range(WORKFLOWS)]
    copies = [base / "replayed" / d.name for d in dirs]
    for d, copy in zip(dirs, copies, strict=True):
        copy_submit_dir(d, copy)
    home = base / "home"
    home.mkdir()
    replays = replay_all(copies, replay_env(home))
    _, err = replays.communicate(timeout=600)
    assert replays.returncode == 0, err[-3000:]
    made = []
    for d, copy in zip(dirs, copies, strict=True):
        expected = next(copy.glob("*.stampede.db"))
        with sqlite3.connect(expected) as con:
            (uuid,) = con.execute("SELECT wf_uuid FROM workflow").fetchone()
        made.append(Source(d, expected, str(uuid)))
    return made


def _check(copy: Path, sources: list[Source], tmp: Path) -> None:
    """Every workflow's rows as its own replay; the shared tables exactly the union."""
    tables = ",".join(t for t in row_counts(copy) if t not in GLOBAL_TABLES)
    union: dict[str, set[tuple[object, ...]]] = {t: set() for t in GLOBAL_TABLES}
    pfn_rows = 0
    for i, s in enumerate(sources):
        mine = _only_workflow(copy, s.wf_uuid, tmp / f"only{i}.db")
        assert_same(s.expected, mine, "--tables", tables)
        pfn_rows += row_counts(s.expected)["rc_pfn"]
        for name, rows in _global_rows(s.expected).items():
            union[name] |= rows
    assert _global_rows(copy) == union
    counts = row_counts(copy)
    assert counts["workflow"] == WORKFLOWS
    assert counts["rc_lfn"] == len(union["rc_lfn"]) and counts["rc_pfn"] == len(union["rc_pfn"])
    assert pfn_rows > len(union["rc_pfn"]), "the workflows share no PFN: nothing was tested"


def _run_copy(source: Source, dest: Path) -> Path:
    """A fresh copy of a source for one more run; returns its dagman.out."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    return copy_submit_dir(source.src, dest)


def _command(kind: str, dagman_out: Path, url: str) -> list[str]:
    """A replay (``-r``) into a server; a SQLite file would be rotated by each replay (as the
    reference does), so the workflows are followed to their end into it instead."""
    if kind != "sqlite":
        return replay_cmd(dagman_out, "-d", url)
    return [
        sys.executable,
        "-m",
        "monitord.cli",
        "follow",
        "-f",
        "--no-dashboard",
        "-d",
        url,
        dagman_out.name,
    ]


def _database(kind: str, tmp: Path, name: str) -> str:
    """One database for the three workflows: a SQLite file, or a fresh one on a server."""
    if kind == "sqlite":
        return f"sqlite:///{tmp / 'shared.db'}"
    return fresh_db(kind, f"{name}{os.getpid()}")  # other runs share the server


def _as_sqlite(kind: str, url: str, tmp: Path, template: Path) -> Path:
    """The shared database as a SQLite file (a server's copied, ids preserved)."""
    if kind == "sqlite":
        return tmp / "shared.db"
    copy = tmp / "shared-copy.db"
    copy_to_sqlite(url, copy, template)
    return copy


def _drop(kind: str, url: str) -> None:
    if kind != "sqlite":
        drop(kind, url)


@pytest.mark.parametrize("kind", ("sqlite", *KINDS))
def test_replays_one_after_another_share_the_file_rows(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = _database(kind, tmp_path, "shared_files")
    srcs: list[Source] = request.getfixturevalue("sources")
    try:
        for i, src in enumerate(srcs):
            dagman_out = _run_copy(src, tmp_path / f"run{i}")
            proc = subprocess.run(
                _command(kind, dagman_out, url),
                cwd=dagman_out.parent,
                env=replay_env(tmp_path / "home"),
                capture_output=True,
                text=True,
                timeout=600,
            )
            err = proc.stderr
            (tmp_path / f"replay{i}.log").write_text(err)
            assert proc.returncode == 0, err[-3000:]
            assert "Traceback" not in err, err[-3000:]
            assert "[error" not in err, err[-3000:]
            assert FALLBACK not in err, err[-3000:]
        _check(_as_sqlite(kind, url, tmp_path, srcs[0].expected), srcs, tmp_path)
    finally:
        _drop(kind, url)


@pytest.mark.parametrize("kind", ("sqlite", *KINDS))
def test_service_follows_them_into_one_database(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    require_corpus()  # stampede-diff
    url = _database(kind, tmp_path, "shared_service")
    srcs: list[Source] = request.getfixturevalue("sources")
    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    log = tmp_path / "service.log"
    proc = start_service(cfg, env, log)
    try:
        runs = [_run_copy(src, tmp_path / "runs" / f"wf{i}") for i, src in enumerate(srcs)]
        for dagman_out in runs:
            done = attach(dagman_out, env, "--no-dashboard", "-d", url)
            assert done.returncode == 0, done.stderr
        for dagman_out in runs:
            run = dagman_out.parent
            wait_until(lambda r=run: finished(r), 300, f"{run} to end", log)
    finally:
        assert stop_service(proc) == 0
    try:
        records = [
            json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")
        ]
        assert not [r for r in records if r.get("level") == "error"], log.read_text()[-3000:]
        assert not [r for r in records if FALLBACK in r["event"]], log.read_text()[-3000:]
        _check(_as_sqlite(kind, url, tmp_path, srcs[0].expected), srcs, tmp_path)
    finally:
        _drop(kind, url)


@pytest.mark.parametrize("kind", ("sqlite", *KINDS))
def test_concurrent_replays_share_the_file_rows(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The same three at once (a central database): their inserts of the same files meet.

    Each logs to a file: a full stderr pipe would stall a writer holding SQLite's lock."""
    url = _database(kind, tmp_path, "shared_concurrent")
    srcs: list[Source] = request.getfixturevalue("sources")
    try:
        runs = [_run_copy(src, tmp_path / f"run{i}") for i, src in enumerate(srcs)]
        logs = [tmp_path / f"replay{i}.log" for i in range(len(runs))]
        procs = []
        for dagman_out, log in zip(runs, logs, strict=True):
            with log.open("w") as fh:
                procs.append(
                    subprocess.Popen(
                        _command(kind, dagman_out, url),
                        cwd=dagman_out.parent,
                        env=replay_env(tmp_path / "home"),
                        stderr=fh,
                    )
                )
        for proc, log in zip(procs, logs, strict=True):
            code = proc.wait(timeout=600)
            err = log.read_text()
            assert code == 0, err[-3000:]
            assert "[error" not in err and FALLBACK not in err, err[-3000:]
            assert "sink down" not in err, err[-3000:]  # writers queue for a lock, no outage
        _check(_as_sqlite(kind, url, tmp_path, srcs[0].expected), srcs, tmp_path)
    finally:
        _drop(kind, url)


WRITERS = 4
FILES = 300
ROUNDS = 5


def _register(wf: str, round_: int, first: bool) -> list[StampedeEvent]:
    """One batch of workflow ``wf`` registering round ``round_``'s files (every writer the
    same names): ``rc_lfn`` get-or-insert, ``rc_meta`` upsert, ``rc_pfn`` insert-if-new."""
    events = [plan(wf, root=wf)] if first else []
    for n in range(FILES):
        lfn = f"r{round_}/f{n:04d}.out"
        events.append(ev("rc.meta", wf, lfn__id=lfn, key="size", value=str(n), ts=1))
        events.append(ev("rc.pfn", wf, lfn__id=lfn, pfn=f"file:///outputs/{lfn}", site="local"))
    return events


def _counts(url: str, *tables: str) -> list[int]:
    engine = make_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            return [
                int(conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one()) for t in tables
            ]
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", KINDS)
def test_writers_registering_the_same_files_at_once_commit_whole(kind: str) -> None:
    """Four sinks (four workflows) started at one barrier write batches naming the same 300
    files, five rounds: their inserts of one name meet between concurrent transactions, and
    every batch still commits whole (no row-by-row fallback, no retry); each file is one row.

    The three replays at once above overlap only by chance (a select-then-insert of ``rc_lfn``
    passed them on PostgreSQL); here the same mutation takes the fallback in most batches.
    """
    url = fresh_db(kind, f"shared_writers{os.getpid()}")
    uuids = [f"{i:08d}-2323-2323-2323-232323232323" for i in range(WRITERS)]
    sinks = [SQLSink(url) for _ in uuids]
    failures: list[str] = []
    barrier = threading.Barrier(WRITERS)

    def write(i: int, round_: int) -> None:
        batch = _register(uuids[i], round_, first=round_ == 0)
        barrier.wait(timeout=60)
        try:
            sinks[i].write_batch(batch)
        except Exception as exc:  # noqa: BLE001 - any failure is the test's finding
            failures.append(f"writer {i}, round {round_}: {exc!r}"[:500])

    try:
        for sink in sinks:
            sink.open()
        with capture_logs() as logs:
            for round_ in range(ROUNDS):
                threads = [threading.Thread(target=write, args=(i, round_)) for i in range(WRITERS)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=120)
        for sink in sinks:
            sink.close()
        assert not failures, failures
        noisy = [e for e in logs if e["log_level"] in ("warning", "error")]
        assert not noisy, noisy[:3]
        assert all(s.counters == {"row_by_row_batches": 0, "rows_rejected": 0} for s in sinks)
        files = FILES * ROUNDS
        got = _counts(url, "workflow", "rc_lfn", "rc_pfn", "rc_meta")
        assert got == [WRITERS, files, files, files]
    finally:
        drop(kind, url)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unexpected_rejection_is_one_line_and_reaches_the_metrics(kind: str) -> None:
    """The row-by-row fallback, kept for what is truly unexpected (here a job edge written
    twice), on a server: one line for the batch (table, count, one example key; no password,
    even where the key holds it), the rest of the batch written, and the counters in the
    service's /metrics through the delivery runtime (the real sink, not a stand-in)."""
    from monitord.service.metrics import render_metrics
    from monitord.service.sinkpool import SinkPool
    from monitord.service.snapshot import service_snapshot

    url = fresh_db(kind, f"shared_fallback{os.getpid()}")
    password = str(make_url(url).password)
    secret_job = password  # a job named like the password: the database echoes the key
    edge = ev("job.edge", parent__job__id=secret_job, child__job__id="b")
    pool = SinkPool(local_lanes=1)
    try:
        sinks = pool.sink_set("/run/x.dagman.out", ROOT)([SQLSink(url)])
        with capture_logs() as logs:
            sinks.publish([plan(), job(secret_job), job("b"), edge])
            sinks.flush()
            sinks.publish([edge, ev("xwf.meta", key="k", value="v"), job("c")])
            sinks.flush()
            (health,) = pool.health()
            text_ = render_metrics(service_snapshot({}, pool, started_at=1.0))
            sinks.close()
            (after,) = pool.health()  # the workflow's delivery ended: its counters stay
            text_after = render_metrics(service_snapshot({}, pool, started_at=1.0))
        assert _counts(url, "job_edge", "workflow_meta", "job") == [1, 1, 3]
        fallback = [e for e in logs if FALLBACK in e["event"]]
        assert len(fallback) == 1, fallback
        (line,) = fallback
        assert line["log_level"] == "error" and line["events"] == 3, line
        assert (line["table"], line["rows"], line["tables"]) == ("job_edge", 1, {"job_edge": 1})
        assert "child_exec_job_id='b'" in line["key"] and "***" in line["key"], line
        rendered = json.dumps(line, default=str)
        assert password not in rendered, rendered
        assert not [e for e in logs if e["event"] == "rejected row"]
        assert (health.row_by_row_batches, health.rows_rejected) == (1, 1)
        name = health.name
        assert f'monitord_sink_row_by_row_batches_total{{sink="{name}"}} 1.0' in text_
        assert f'monitord_sink_rows_rejected_total{{sink="{name}"}} 1.0' in text_
        assert password not in text_
        assert (after.name, after.row_by_row_batches, after.rows_rejected) == (name, 1, 1)
        assert (after.events_written, after.workflows) == (health.events_written, 0)
        assert f'monitord_sink_row_by_row_batches_total{{sink="{name}"}} 1.0' in text_after
    finally:
        pool.close()
        drop(kind, url)


CUTS = 6  # times the proxy resets every connection while the workflows play (~10 s)
RATE = 150.0  # dagman.out lines per second of each player


def _status(port: int) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize("kind", KINDS)
def test_service_through_connection_cuts_writes_each_file_once(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The issue's outage side, without stopping the shared server: the three workflows played
    into one server database through a proxy that resets every connection six times while
    they run.  A batch cut short may have committed its shared rows (the autocommit side
    connection) and lost the rest; redone, it must find them and commit whole.  After it every
    workflow's rows equal its replay, the shared tables the union, no batch was written row by
    row, no row rejected."""
    from monitord.tools.player import Player

    require_corpus()  # stampede-diff
    real_url = fresh_db(kind, f"shared_cuts{os.getpid()}")
    real = make_url(real_url)
    proxy = Proxy(real.host or "127.0.0.1", int(real.port or 0))
    url = real.set(port=proxy.port).render_as_string(hide_password=False)
    srcs: list[Source] = request.getfixturevalue("sources")
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = service_env(tmp_path, cfg)
    props = tmp_path / "fast-retries.properties"
    props.write_text("pegasus.monitord.spool.max_backoff=0.5\n")  # back soon after a cut
    log = tmp_path / "service.log"
    proc = start_service(cfg, env, log)
    rng = random.Random(23)
    try:
        players = []
        for i, src in enumerate(srcs):
            dest = tmp_path / "runs" / f"wf{i}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            player = Player(str(src.src), str(dest), lines_per_second=RATE, seed=i)
            player.prepare()
            dagman_out = dest / next(src.src.glob("*.dag.dagman.out")).name
            done = attach(dagman_out, env, "--no-dashboard", "--conf", str(props), "-d", url)
            assert done.returncode == 0, done.stderr
            players.append((player, dest))
        for player, _ in players:
            player.start()
        for _ in range(CUTS):
            time.sleep(rng.uniform(0.3, 1.0))
            proxy.refuse()
            time.sleep(rng.uniform(0.3, 0.8))
            proxy.restore()
        for player, dest in players:
            player.join(300)
            wait_until(lambda d=dest: finished(d), 300, f"{dest} to end", log)
        wait_until(lambda: not _status(port)["workflows"], 120, "all delivered", log)
    finally:
        assert stop_service(proc) == 0
        proxy.close()
    try:
        records = [
            json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")
        ]
        downs = [r for r in records if r["event"].startswith("sink down")]
        fallbacks = [r for r in records if FALLBACK in r["event"] or r["event"] == "rejected row"]
        assert not fallbacks, fallbacks[:3]
        assert not [r for r in records if r.get("level") == "error"], log.read_text()[-3000:]
        assert downs, "no cut met a delivery: nothing was tested"
        _check(_as_sqlite(kind, real_url, tmp_path, srcs[0].expected), srcs, tmp_path)
        print(f"\n{kind}: {CUTS} cuts, {len(downs)} deliveries seen down, rows equal")
    finally:
        drop(kind, real_url)


def test_a_marks_table_dropped_by_a_daemon_that_ended_is_made_again(tmp_path: Path) -> None:
    """Daemons writing one SQLite file: the first to end drops the delivery marks table when
    it holds no marks any more (the file as the reference leaves it), under another daemon that
    made it and whose batch waits for the lock.  That one makes it again: in its batch's
    transaction, and for a read within the same call (no false "sink down").  It used to fail on ``no such table`` at every
    retry and leave its events spooled (three follows at once, 2 of 6 trials)."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    writer, ended = SQLSink(url), SQLSink(url)
    writer.open()
    ended.open()
    try:
        assert writer.read_marks("s") == {}  # the writer makes the table, and knows it
        ended.forget_marks(OTHER)  # the other workflow ended: no marks left, table dropped
        writer.write_marked([plan(), ev("xwf.meta", key="k", value="v")], Marks("s", {ROOT: 2}))
        assert writer.read_marks("s") == {ROOT: 2}
        ended.forget_marks(ROOT)  # (as if the writer's workflow had ended elsewhere)
        assert writer.read_marks("s") == {}  # made again and read once more: no false outage
        assert writer.read_marks("s") == {}
    finally:
        writer.close()
        ended.close()
    with sqlite3.connect(tmp_path / "shared.db") as con:
        assert con.execute("SELECT key, value FROM workflow_meta").fetchall() == [("k", "v")]
