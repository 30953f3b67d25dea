"""The SQL sink on real PostgreSQL and MariaDB servers (started by ``scripts/services.sh``).

Every server database is copied row by row into SQLite (``tests/dbcopy.py``, ids preserved)
and compared with stampede-diff: against the reference's ``stampede.db`` for the corpus, and
against a SQLite replay of the same directory for generated workflows.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from monitord.tools.synthetic import generate
from sinks.sql import SQLSink
from sinks.sql.database import parse_url
from tests.conftest import (
    CORPUS,
    CORPUS_TZ,
    STAMPEDE_DIFF,
    copy_submit_dir,
    corpus_samples,
    replay_copy,
    require_corpus,
)
from tests.dbcopy import copy_to_sqlite, describe_schema
from tests.servers import create_database, drop_database, require_server, service

KINDS = ("postgres", "mysql")
#: tables shared by every workflow in a database; compared separately for concurrent runs
GLOBAL_TABLES = ("rc_lfn", "rc_pfn", "rc_meta")
CONCURRENT = 8


def fresh_db(kind: str, suffix: str) -> str:
    """A new empty database on the ``kind`` server, named after the test database."""
    base = require_server(kind)
    name = f"{make_url(base).database}_{suffix}"
    return create_database(base, name)


def drop(kind: str, url: str) -> None:
    drop_database(require_server(kind), str(make_url(url).database))


def stampede_diff(expected: Path, actual: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args, str(expected), str(actual)],
        capture_output=True,
        text=True,
        check=False,
    )


def assert_same(expected: Path, actual: Path, *args: str) -> None:
    result = stampede_diff(expected, actual, *args)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def replay_cmd(dagman_out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "monitord.cli", "--no-dashboard", *args, "-r", dagman_out.name]


def replay_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}


def row_counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        names = [
            r[0]
            for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {n: con.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        con.close()


# --------------------------------------------------------------------------- corpus


def _tamper(url: str) -> None:
    """Change every workflow's rows, so that only a real purge brings the reference's back."""
    engine = create_engine(parse_url(url))
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE job_instance SET exitcode = 99"))
            conn.execute(text("UPDATE workflow SET dax_label = 'tampered'"))
            conn.execute(text("DELETE FROM jobstate WHERE jobstate_submit_seq = 1"))
    finally:
        engine.dispose()


@pytest.mark.parametrize("sample", corpus_samples() or ["corpus-missing"])
@pytest.mark.parametrize("kind", KINDS)
def test_corpus_replay_into_server_matches_reference(
    kind: str, sample: str, tmp_path: Path
) -> None:
    """Replay → server → SQLite copy: every row as the reference wrote it; then a second replay
    (purge of the workflow and its sub-workflows, on a tampered database) gives the same."""
    require_corpus()
    url = fresh_db(kind, f"c_{sample}")
    expected = CORPUS / sample / "expected" / "stampede.db"
    try:
        replay_copy(CORPUS / sample / "input", tmp_path, "-d", url)
        counts = copy_to_sqlite(url, tmp_path / "first.db", expected)
        assert_same(expected, tmp_path / "first.db")
        assert counts["dbversion"] == 1
        _tamper(url)
        replay_copy(CORPUS / sample / "input", tmp_path, "-d", url)
        copy_to_sqlite(url, tmp_path / "second.db", expected)
        assert_same(expected, tmp_path / "second.db")
        print(f"\n{kind} {sample}: {sum(counts.values())} rows")
    finally:
        drop(kind, url)


# ------------------------------------------------------------- generated workflows


@dataclass
class Generated:
    dagman_out: Path
    wf_uuid: str
    expected: Path  # its SQLite replay


def _generate_and_replay(base: Path, count: int, jobs: int, seed0: int) -> list[Generated]:
    """``count`` workflows (own parent dirs, so their outputs differ), replayed into SQLite."""
    made = []
    for i in range(count):
        g = generate(base / f"wf{i}" / "submit", jobs, seed=seed0 + i, name=f"wf{i}")
        made.append(Generated(g.dagman_out, g.wf_uuid, base / f"wf{i}" / "expected.db"))
    procs = [
        subprocess.Popen(
            replay_cmd(m.dagman_out, "-d", f"sqlite:///{m.expected}"),
            cwd=m.dagman_out.parent,
            env=replay_env(base / "home"),
            stderr=subprocess.PIPE,
            text=True,
        )
        for m in made
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    return made


@pytest.fixture(scope="module")
def concurrent_workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    """Generated once per module, requested only after the test found its server."""
    return _generate_and_replay(tmp_path_factory.mktemp("concurrent"), CONCURRENT, 100, 101)


def _only_workflow(copy: Path, wf_uuid: str, dest: Path) -> Path:
    """``copy`` without the rows of every other root workflow (cascades do the rest)."""
    shutil.copyfile(copy, dest)
    con = sqlite3.connect(dest)
    try:
        con.execute("PRAGMA foreign_keys = ON")
        con.execute(
            "DELETE FROM workflow WHERE root_wf_id <> "
            "(SELECT wf_id FROM workflow WHERE wf_uuid = ?)",
            (wf_uuid,),
        )
        con.commit()
    finally:
        con.close()
    return dest


def _global_rows(db: Path) -> dict[str, set[tuple[object, ...]]]:
    con = sqlite3.connect(db)
    try:
        return {
            "rc_lfn": set(con.execute("SELECT lfn FROM rc_lfn")),
            "rc_pfn": set(
                con.execute(
                    "SELECT l.lfn, p.pfn, p.site FROM rc_pfn p JOIN rc_lfn l USING (lfn_id)"
                )
            ),
            "rc_meta": set(
                con.execute("SELECT l.lfn, m.key FROM rc_meta m JOIN rc_lfn l USING (lfn_id)")
            ),
        }
    finally:
        con.close()


@pytest.mark.parametrize("kind", KINDS)
def test_concurrent_daemons_into_one_database(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """8 daemons, 8 workflows, one database: each workflow's rows as its own SQLite replay."""
    url = fresh_db(kind, "concurrent")
    concurrent_workflows: list[Generated] = request.getfixturevalue("concurrent_workflows")
    try:
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                replay_cmd(m.dagman_out, "-d", url),
                cwd=m.dagman_out.parent,
                env=replay_env(tmp_path / "home"),
                stderr=subprocess.PIPE,
                text=True,
            )
            for m in concurrent_workflows
        ]
        errors = [p.communicate(timeout=900)[1] for p in procs]
        elapsed = time.perf_counter() - started
        for i, err in enumerate(errors):
            (tmp_path / f"daemon{i}.log").write_text(err)
        for p, err in zip(procs, errors, strict=True):
            assert p.returncode == 0, err[-3000:]
            assert "Traceback" not in err, err[-3000:]
            assert "[error" not in err, err[-3000:]
        copy = tmp_path / "server.db"
        counts = copy_to_sqlite(url, copy, concurrent_workflows[0].expected)
        with sqlite3.connect(copy) as con:
            assert con.execute("SELECT COUNT(*) FROM workflow").fetchone()[0] == CONCURRENT
        tables = ",".join(t for t in row_counts(copy) if t not in GLOBAL_TABLES)
        union: dict[str, set[tuple[object, ...]]] = {t: set() for t in GLOBAL_TABLES}
        pfn_rows = 0
        for i, m in enumerate(concurrent_workflows):
            mine = _only_workflow(copy, m.wf_uuid, tmp_path / f"wf{i}.db")
            assert_same(m.expected, mine, "--tables", tables)
            expected_global = _global_rows(m.expected)
            pfn_rows += row_counts(m.expected)["rc_pfn"]
            for name, rows in expected_global.items():
                union[name] |= rows
        # the shared tables hold exactly the union of what each workflow wrote
        assert _global_rows(copy) == union
        assert counts["rc_pfn"] == pfn_rows
        print(
            f"\n{kind}: {CONCURRENT} concurrent replays in {elapsed:.1f} s, "
            f"{sum(counts.values())} rows"
        )
    finally:
        drop(kind, url)


@pytest.mark.serial  # stops a shared test server
def test_postgres_restart_mid_run(tmp_path: Path) -> None:
    """The server restarts while the daemon writes: no row lost, none doubled."""
    base = require_server("postgres")
    url = fresh_db("postgres", "restart")
    try:
        (made,) = _generate_and_replay(tmp_path, 1, 1000, 7)
        proc = subprocess.Popen(
            replay_cmd(made.dagman_out, "-d", url),
            cwd=made.dagman_out.parent,
            env=replay_env(tmp_path / "home"),
            stderr=subprocess.PIPE,
            text=True,
        )
        engine = create_engine(parse_url(url))
        try:
            deadline = time.monotonic() + 120
            rows = 0
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    with engine.connect() as conn:
                        rows = conn.execute(text("SELECT COUNT(*) FROM jobstate")).scalar() or 0
                except Exception:  # tables not created yet
                    rows = 0
                if rows:
                    break
                time.sleep(0.1)
        finally:
            engine.dispose()
        assert proc.poll() is None, "the replay ended before the restart: workflow too small"
        started_before = _server_started(base)
        service("restart", "postgres")
        still_running = proc.poll() is None
        _, err = proc.communicate(timeout=600)
        (tmp_path / "daemon.log").write_text(err)
        assert proc.returncode == 0, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        assert _server_started(base) != started_before
        assert still_running, "the replay ended during the restart: workflow too small"
        copy = tmp_path / "server.db"
        copy_to_sqlite(url, copy, made.expected)
        assert_same(made.expected, copy)
        retries = err.count("sink error, retrying")
        print(f"\npostgres restart after {rows} jobstate rows; {retries} retried batches")
    finally:
        drop("postgres", url)


def _server_started(base_url: str) -> object:
    """When the PostgreSQL server (postmaster) started: changes with every restart."""
    engine = create_engine(parse_url(base_url))
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT pg_postmaster_start_time()")).scalar()
    finally:
        engine.dispose()


# --------------------------------------------------------------------- schema, URLs, errors

#: ``describe_schema`` of the databases the reference 5.1.3 created on these servers
#: (``pegasus-monitord -r -d mysql://…`` / ``postgresql://…``, MariaDB 10.11, PostgreSQL 15)
REFERENCE_SCHEMA = Path(__file__).parent / "data" / "server_schema"


@pytest.mark.parametrize("kind", KINDS)
def test_server_schema_matches_reference(kind: str) -> None:
    """Same tables, column types and lengths, keys, indexes, cascades and enums as the
    reference creates on the same server."""
    url = fresh_db(kind, "schema")
    try:
        sink = SQLSink(url)
        sink.open()
        sink.close()
        expected = (REFERENCE_SCHEMA / f"{kind}.txt").read_text().splitlines()
        assert describe_schema(url) == expected
    finally:
        drop(kind, url)


URL_FORMS = {
    "postgres": ("postgresql://", "postgres://", "postgresql+psycopg2://", "jdbc:postgresql://"),
    "mysql": ("mysql://", "mysql+pymysql://", "jdbc:mysql://"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_url_forms(kind: str) -> None:
    """Every URL spelling users write reaches the same database (created once, then checked)."""
    url = fresh_db(kind, "forms")
    try:
        rest = url.split("://", 1)[1]
        for form in URL_FORMS[kind]:
            sink = SQLSink(form + rest)
            sink.open()
            sink.close()
        engine = create_engine(parse_url(url))
        try:
            with engine.connect() as conn:
                rows = conn.execute(text("SELECT version_number, version FROM dbversion")).all()
        finally:
            engine.dispose()
        assert [tuple(r) for r in rows] == [(14, "14")]
    finally:
        drop(kind, url)


@pytest.mark.parametrize("kind", KINDS)
def test_wrong_password_is_one_clean_line(kind: str, tmp_path: Path) -> None:
    require_corpus()
    secret = "Wr0ngSecretPw"
    url = make_url(fresh_db(kind, "pw"))
    try:
        bad = url.set(password=secret).render_as_string(hide_password=False)
        run = tmp_path / "run"
        dagman_out = copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
        proc = subprocess.run(
            replay_cmd(dagman_out, "-d", bad),
            cwd=run,
            env=replay_env(tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=300,
        )
        output = proc.stdout + proc.stderr
        assert secret not in output
        assert "Traceback" not in output
        failures = [line for line in output.splitlines() if "cannot create events output" in line]
        assert len(failures) == 1, output[-3000:]
        assert "***" in failures[0]
    finally:
        drop(kind, url.render_as_string(hide_password=False))


@pytest.mark.parametrize("kind", ("sqlite", *KINDS))
def test_failed_batch_is_retried_without_duplicates(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch loses its connection half-way once; redoing it must give the exact DB.

    The shared rows committed before the failure (rc_lfn, rc_meta on servers) and the ids
    cached during the rolled-back part must not turn into duplicates or dangling references.
    """
    require_corpus()
    from sqlalchemy.exc import OperationalError

    from sinks.runtime.base import SinkError
    from sinks.sql.rawsql import RawSQL
    from tests.bp_events import load_bp_events

    sample = "hierarchical_wf_success"
    expected = CORPUS / sample / "expected" / "stampede.db"
    url = f"sqlite:///{tmp_path / 'x.db'}" if kind == "sqlite" else fresh_db(kind, "retry")
    original = RawSQL._run_many
    calls = {"n": 0, "fail_at": -1}

    def flaky(self: RawSQL, prep: object, rows: list[object], **how: Any) -> None:
        calls["n"] += 1
        if calls["n"] == calls["fail_at"]:
            raise OperationalError("INSERT …", None, ConnectionError("injected: connection lost"))
        original(self, prep, rows, **how)  # type: ignore[arg-type]

    monkeypatch.setattr(RawSQL, "_run_many", flaky)
    events = load_bp_events(CORPUS / sample / "expected" / "events.bp")
    sink = SQLSink(url)
    sink.open()
    failures = 0
    try:
        for start in range(0, len(events), 40):
            batch = events[start : start + 40]
            calls["n"], calls["fail_at"] = 0, 2  # the second executemany of the batch
            try:
                sink.write_batch(batch)
            except SinkError as exc:
                assert exc.retryable
                failures += 1
                calls["fail_at"] = -1
                sink.write_batch(batch)
        sink.close()
        assert failures > 3
        copy = tmp_path / "copy.db"
        copy_to_sqlite(url, copy, expected)
        assert_same(expected, copy)
    finally:
        if kind != "sqlite":
            drop(kind, url)
