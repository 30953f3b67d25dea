"""Schema DDL, DB creation, URL rules, SQLite rotation and non-SQLite purge (spec 7.1, 7.6)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.schema import CreateTable

from monitord.core.events import make_event
from sinks.runtime.base import SinkError
from sinks.sql import SQLSink, purge_workflow, rotate_sqlite_file
from sinks.sql.database import make_engine, normalise_url, parse_url, safe_url
from sinks.sql.schema import metadata
from tests.bp_events import CORPUS

REFERENCE_DB = CORPUS / "process_wf_success" / "expected" / "stampede.db"


def _schema(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "select type, name, sql from sqlite_master where sql is not null order by rowid"
        ).fetchall()


def test_fresh_db_has_reference_ddl(tmp_path: Path) -> None:
    if not REFERENCE_DB.is_file():
        pytest.skip(f"reference database not available: {REFERENCE_DB}")
    db = tmp_path / "x.db"
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    sink.close()
    assert _schema(db) == _schema(REFERENCE_DB)


def test_ddl_is_deterministic(tmp_path: Path) -> None:
    """Index order must not depend on set iteration (hash seeds)."""
    schemas = []
    for i in range(3):
        engine = create_engine(f"sqlite:///{tmp_path / f'{i}.db'}")
        metadata.create_all(engine)
        engine.dispose()
        schemas.append(_schema(tmp_path / f"{i}.db"))
    assert schemas[0] == schemas[1] == schemas[2]
    names = [name for kind, name, _ in schemas[0] if kind == "index"]
    assert names.index("job_exec_job_id_COL") < names.index("job_type_desc_COL")


def test_fresh_db_version_row(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    before = int(time.time())
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    sink.close()
    with sqlite3.connect(db) as conn:
        ((vn, v, ts),) = conn.execute(
            "select version_number, version, version_timestamp from dbversion"
        ).fetchall()
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
    assert (vn, v) == (14, "14")
    assert before <= ts <= int(time.time())
    assert {"master_workflow", "master_workflowstate", "ensemble", "trigger", "rc_lfn"} <= tables
    # reopening an existing v14 DB adds no second version row
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    sink.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from dbversion").fetchone() == (1,)


def test_older_schema_version_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "create table dbversion (id integer primary key, version_number integer,"
            " version varchar(50), version_timestamp integer)"
        )
        conn.execute("insert into dbversion values (1, 11, '11', 0)")
    with pytest.raises(SinkError, match="version 11"):
        SQLSink(f"sqlite:///{db}").open()


def test_server_dialects_compile() -> None:
    job = metadata.tables["job"]
    pg = str(CreateTable(job).compile(dialect=postgresql.dialect()))
    assert "type_desc job_type_desc NOT NULL" in pg and "BIGSERIAL" in pg
    my = str(CreateTable(job).compile(dialect=mysql.dialect()))
    assert "ENGINE=InnoDB" in my and "utf8mb4" in my and "ENUM(" in my


def test_foreign_keys_are_on(tmp_path: Path) -> None:
    engine = make_engine(parse_url(f"sqlite:///{tmp_path / 'x.db'}"))
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


def test_jdbc_urls() -> None:
    assert normalise_url("jdbc:sqlite:/tmp/x.db") == "sqlite:////tmp/x.db"
    assert normalise_url("jdbc:sqlite:///tmp/x.db") == "sqlite:///tmp/x.db"
    assert normalise_url("jdbc:mysql://h/db") == "mysql://h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"


def test_password_never_shown(tmp_path: Path) -> None:
    url = "postgresql://alice:s3cr3t-pw@127.0.0.1:1/stampede"
    assert "s3cr3t-pw" not in safe_url(url)
    sink = SQLSink(url, engine_kw={"connect_args": {"connect_timeout": 2}})
    assert "s3cr3t-pw" not in sink.display_url
    with pytest.raises(SinkError) as info:
        sink.open()
    assert info.value.retryable
    assert "s3cr3t-pw" not in str(info.value)
    assert "alice" in str(info.value)


# --- rotation (PM-652/689, GH-2134) ---------------------------------------------


def test_rotation_keeps_one_full_backup_and_the_mode(tmp_path: Path) -> None:
    db = tmp_path / "w.stampede.db"
    db.write_bytes(b"first")
    os.chmod(db, 0o640)
    assert rotate_sqlite_file(db) == tmp_path / "w.stampede.db.000"
    assert db.exists() and db.stat().st_size == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o640
    db.write_bytes(b"second")
    assert rotate_sqlite_file(db) == tmp_path / "w.stampede.db.001"
    assert (tmp_path / "w.stampede.db.000").stat().st_size == 0  # older backup truncated
    assert (tmp_path / "w.stampede.db.001").read_bytes() == b"second"
    assert stat.S_IMODE(db.stat().st_mode) == 0o640


def test_rotation_of_missing_file_is_a_no_op(tmp_path: Path) -> None:
    assert rotate_sqlite_file(tmp_path / "none.db") is None
    assert not (tmp_path / "none.db").exists()


def test_restart_rotates_and_repopulates(tmp_path: Path) -> None:
    db = tmp_path / "w.stampede.db"
    plan = make_event("wf.plan", {"xwf.id": "u-1", "ts": 1, "root.xwf.id": "u-1"})
    for _ in range(2):
        sink = SQLSink(f"sqlite:///{db}", restart=True)
        sink.open()
        sink.write_batch([plan])
        sink.close()
    assert (tmp_path / "w.stampede.db.000").exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select wf_uuid from workflow").fetchall() == [("u-1",)]
    # without restart the existing DB is kept and appended to
    sink = SQLSink(f"sqlite:///{db}", restart=False)
    sink.open()
    sink.close()
    assert not (tmp_path / "w.stampede.db.001").exists()


def test_a_retried_open_rotates_only_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay's first open that fails (retryably) and is retried rotates the old database
    once: the retry opens the fresh file, it does not push it aside as another backup."""
    import sinks.sql.sink as sql_sink

    db = tmp_path / "w.stampede.db"
    old = SQLSink(f"sqlite:///{db}")
    old.open()
    old.close()
    real = sql_sink.open_schema
    failures = [SinkError("database is locked", retryable=True)] * 2

    def flaky(*args: object, **kwargs: object) -> bool:
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sql_sink, "open_schema", flaky)
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    for _ in range(2):
        with pytest.raises(SinkError):
            sink.open()
        sink.close()
    sink.open()
    sink.close()
    assert sorted(p.name for p in tmp_path.glob("w.stampede.db.*")) == ["w.stampede.db.000"]


# --- purge (non-SQLite restart; tested on SQLite by calling it directly) -------


def _ev(name: str, wf: str, **attrs: object) -> object:
    a: dict[str, object] = {"xwf.id": wf}
    a.update({k.replace("__", "."): v for k, v in attrs.items()})
    return make_event(name, a)


def test_purge_removes_workflow_family_and_its_files(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    events = []
    for wf, root, parent in (
        ("root", "root", None),
        ("sub", "root", "root"),
        ("other", "other", None),
    ):
        extra = {"parent__xwf__id": parent} if parent else {}
        events.append(_ev("wf.plan", wf, ts=1, root__xwf__id=root, **extra))
        events.append(_ev("task.info", wf, task__id="T", type_desc="compute", transformation="t"))
        events.append(_ev("wf.map.file", wf, task__id="T", lfn__id=f"{wf}.txt"))
        events.append(_ev("rc.meta", wf, lfn__id=f"{wf}.txt", key="size", value="1"))
        events.append(_ev("xwf.start", wf, ts=2.0, restart_count=0, reason=None))
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    sink.write_batch(events)  # type: ignore[arg-type]
    sink.close()

    engine = make_engine(parse_url(f"sqlite:///{db}"))
    with engine.begin() as conn:
        assert purge_workflow(conn, "root") is True
        assert purge_workflow(conn, "no-such-uuid") is False
    engine.dispose()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select wf_uuid from workflow").fetchall() == [("other",)]
        assert conn.execute("select lfn from rc_lfn").fetchall() == [("other.txt",)]
        assert conn.execute("select count(*) from rc_meta").fetchone() == (1,)
        assert conn.execute("select count(*) from task").fetchone() == (1,)
        assert conn.execute("select count(*) from workflowstate").fetchone() == (1,)


@pytest.mark.parametrize(("replay", "journal"), [(True, "persist"), (False, "delete")])
def test_a_replay_keeps_its_journal_file_until_it_closes(
    tmp_path: Path, replay: bool, journal: str
) -> None:
    """A replay's SQLite file keeps its rollback journal between transactions (``PERSIST``:
    no file made and deleted per batch), and removes it as it closes; a live daemon keeps
    SQLite's DELETE.  The rows are the same either way."""
    from types import SimpleNamespace

    from monitord.daemon.config import MonitorConfig
    from monitord.daemon.outputs import build_outputs

    path = tmp_path / "wf.db"
    cfg = MonitorConfig(
        str(tmp_path / "wf.dagman.out"), replay=replay, dests=[f"sqlite:///{path}"], dashboard=False
    )
    bd = SimpleNamespace(wf_uuid="u-1", planner_version="5.0.5")
    (sink,) = build_outputs(cfg, str(tmp_path), bd, restart=True).sinks
    assert isinstance(sink, SQLSink)
    sink.open()
    try:
        sink.write_batch([_ev("wf.plan", "u-1", ts=1, root__xwf__id="u-1")])  # type: ignore[list-item]
        assert sink._engine is not None
        with sink._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == journal
        assert (tmp_path / "wf.db-journal").exists() is replay
    finally:
        sink.close()
    assert not (tmp_path / "wf.db-journal").exists()
    with sqlite3.connect(path) as conn:
        assert conn.execute("select wf_uuid from workflow").fetchall() == [("u-1",)]


@pytest.mark.parametrize(("replay", "synchronous"), [(True, 0), (False, 2)])
def test_a_replay_skips_fsync_a_live_daemon_keeps_it(
    tmp_path: Path, replay: bool, synchronous: int
) -> None:
    """The daemon's outputs (monitord/daemon/outputs.py) ask a replay's SQLite file for no
    fsync at commit (OFF = 0: a rerun rotates a damaged file aside and writes it anew); a
    live daemon's keeps SQLite's FULL (2)."""
    from types import SimpleNamespace

    from monitord.daemon.config import MonitorConfig
    from monitord.daemon.outputs import build_outputs

    db = f"sqlite:///{tmp_path / 'wf.db'}"
    cfg = MonitorConfig(str(tmp_path / "wf.dagman.out"), replay=replay, dests=[db], dashboard=False)
    bd = SimpleNamespace(wf_uuid="u-1", planner_version="5.0.5")
    (sink,) = build_outputs(cfg, str(tmp_path), bd, restart=True).sinks
    assert isinstance(sink, SQLSink)
    sink.open()
    try:
        assert sink._engine is not None
        with sink._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == synchronous
    finally:
        sink.close()
