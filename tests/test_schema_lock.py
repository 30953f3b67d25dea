"""Opening a database another writer holds: it is waited for, never refused (issue 21).

The schema is created under a lock held until the creation is committed, so that a second
daemon sees either no schema or a complete versioned one; a SQLite writer queues for the write
lock instead of failing at once; what is still locked after the wait is a retryable outage.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.engine import URL

from sinks.runtime.base import SinkError
from sinks.sql import SQLSink, schema
from sinks.sql import dashboard as dash
from sinks.sql import database as db
from sinks.sql.dashboard import DashboardSink
from tests.test_sql_servers import KINDS, drop, fresh_db

ROOT = "9a0e3c5e-0b7a-4d5e-9a57-6d8a2e1c0f01"


def slow_creation_commit(url: URL, started: threading.Event, seconds: float) -> Engine:
    """An engine whose commit of the schema creation (the dbversion row) is ``seconds`` late."""
    engine = db.make_engine(url)
    inserted: set[int] = set()

    @event.listens_for(engine, "before_cursor_execute")
    def _seen(conn: Any, _cur: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO DBVERSION"):
            inserted.add(id(conn))

    @event.listens_for(engine, "commit")
    def _late(conn: Any) -> None:
        if id(conn) in inserted and not started.is_set():
            started.set()
            time.sleep(seconds)

    return engine


@pytest.mark.parametrize("kind", KINDS)
def test_second_daemon_waits_for_the_creation_commit(kind: str) -> None:
    """The creator is slow to commit its version row: a daemon opening meanwhile waits for it
    (before: on MariaDB it got the lock at once and refused "schema version None")."""
    url = fresh_db(kind, f"lock{os.getpid()}")  # other runs share the server
    started = threading.Event()
    first = SQLSink(url)
    first.engine_source = lambda u: slow_creation_commit(u, started, 2.0)
    errors: list[BaseException] = []

    def open_first() -> None:
        try:
            first.open()
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    creator = threading.Thread(target=open_first)
    creator.start()
    second = SQLSink(url)
    try:
        assert started.wait(60), errors
        second.open()
        creator.join(60)
        assert not errors, errors
        engine = db.make_engine(db.parse_url(url))
        try:
            with engine.connect() as conn:
                assert conn.execute(text("SELECT COUNT(*) FROM dbversion")).scalar() == 1
        finally:
            engine.dispose()
    finally:
        creator.join(60)
        first.close()
        second.close()
        drop(kind, url)


def test_a_schema_being_created_is_waited_for(tmp_path: Path) -> None:
    """Tables there, version row not yet (a creator without our lock): waited for, then used."""
    path = tmp_path / "wf.db"
    engine = db.make_engine(db.parse_url(f"sqlite:///{path}"))
    try:
        db.open_schema(engine)
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM dbversion"))
        with engine.connect() as conn:
            with pytest.raises(db.SchemaIncomplete):
                db.ensure_schema(conn)  # before the wait is over: not touched

        def commit_row() -> None:
            time.sleep(0.5)
            con = sqlite3.connect(path)
            con.execute(
                "INSERT INTO dbversion (version_number, version, version_timestamp) "
                "VALUES (14, '14', 0)"
            )
            con.commit()
            con.close()

        writer = threading.Thread(target=commit_row)
        writer.start()
        assert db.open_schema(engine, wait=30) is False  # found complete, not created again
        writer.join()
        assert _version_rows(engine) == 1
    finally:
        engine.dispose()


def _version_rows(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM dbversion")).scalar() or 0)


@pytest.mark.parametrize("kind", ["sqlite", *KINDS])
def test_an_interrupted_creation_is_completed_after_the_wait(kind: str, tmp_path: Path) -> None:
    """Tables but no version row for longer than the wait (a creator killed between its
    CREATE TABLEs and its commit, as MariaDB allows): completed, then opened like any other."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'wf.db'}"
    else:
        url = fresh_db(kind, f"interrupted{os.getpid()}")
    engine = db.make_engine(db.parse_url(url))
    try:
        ordered = schema.metadata.sorted_tables  # dependencies first, as a creation runs
        schema.metadata.create_all(engine, tables=ordered[: len(ordered) // 2])  # no version row
        started = time.monotonic()
        assert db.open_schema(engine, wait=1.0) is False
        assert time.monotonic() - started >= 1.0  # waited for a creator first
        assert _version_rows(engine) == 1
        with engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
        assert {t.name for t in schema.metadata.sorted_tables} <= names
        assert db.open_schema(engine, wait=1.0) is False  # now a complete schema
        assert _version_rows(engine) == 1
    finally:
        engine.dispose()
        if kind != "sqlite":
            drop(kind, url)


def test_an_incomplete_schema_is_an_outage_not_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "SCHEMA_WAIT", 0.2)
    path = tmp_path / "wf.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE dbversion (id INTEGER PRIMARY KEY, version_number INTEGER)")
    con.close()
    sink = SQLSink(f"sqlite:///{path}")
    with pytest.raises(SinkError) as raised:
        sink.open()
    sink.close()
    assert raised.value.retryable, raised.value


def hold_write_lock(path: Path, seconds: float, held: threading.Event) -> threading.Thread:
    """Another daemon's write transaction on ``path``, ``seconds`` long."""

    def run() -> None:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        con.execute("UPDATE dbversion SET version = version")
        held.set()
        time.sleep(seconds)
        con.execute("COMMIT")
        con.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert held.wait(10)
    return thread


def dashboard(path: Path, restart: bool = True) -> DashboardSink:
    return DashboardSink(
        f"sqlite:///{path}", root_wf_uuid=ROOT, db_url="sqlite:///x.db", restart=restart
    )


def test_dashboard_open_queues_for_another_writer(tmp_path: Path) -> None:
    """A replay's purge while another daemon writes the dashboard: it waits, then opens (before:
    the read-then-write transaction was refused at once, "database is locked")."""
    path = tmp_path / "workflow.db"
    first = dashboard(path, restart=False)
    first.open()
    first.close()
    holder = hold_write_lock(path, 1.0, threading.Event())
    sink = dashboard(path)
    try:
        sink.open()
    finally:
        holder.join()
        sink.close()


def test_dashboard_still_locked_is_retryable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locked past the busy timeout: an outage the runtime retries, never a disabled sink."""
    path = tmp_path / "workflow.db"
    first = dashboard(path, restart=False)
    first.open()
    first.close()
    monkeypatch.setattr(dash, "DASHBOARD_BUSY_TIMEOUT", 0.2)
    holder = hold_write_lock(path, 1.5, threading.Event())
    sink = dashboard(path)
    try:
        _open_refused_while_locked(sink, holder)
    finally:
        sink.close()


def _open_refused_while_locked(sink: Any, holder: threading.Thread) -> None:
    """``sink.open()`` while ``holder`` keeps the write lock: a retryable "locked" error."""
    try:
        with pytest.raises(SinkError) as raised:
            sink.open()
        assert raised.value.retryable, raised.value
        assert "locked" in str(raised.value)
    finally:
        holder.join()


def test_a_locked_workflow_database_at_open_is_retryable(tmp_path: Path) -> None:
    """A workflow database another writer holds past the busy timeout while it is opened (the
    schema checked): an outage the runtime retries, not a refusal that disables the sink."""
    path = tmp_path / "wf.db"
    first = SQLSink(f"sqlite:///{path}")
    first.open()
    first.close()
    holder = hold_write_lock(path, 1.5, threading.Event())
    sink = SQLSink(f"sqlite:///{path}", engine_kw={"connect_args": {"timeout": 0.2}})
    _open_refused_while_locked(sink, holder)
    sink.open()  # the retry, once the other writer is done
    sink.close()
