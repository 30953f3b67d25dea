"""A fresh SQLite database is created from the kept statements (``sinks/sql/schema_ddl.py``),
and those are exactly what ``metadata.create_all`` sends: the same DDL, byte for byte."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sinks.sql import schema_ddl
from sinks.sql.database import make_engine, open_schema, parse_url
from sinks.sql.schema import metadata


def _master(db: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("select type, name, tbl_name, sql from sqlite_master"))


def _open(db: Path) -> bool:
    engine = make_engine(parse_url(f"sqlite:///{db}"))
    try:
        return open_schema(engine)
    finally:
        engine.dispose()


def test_the_kept_statements_are_what_create_all_sends_now() -> None:
    text = schema_ddl.TARGET.read_text(encoding="utf-8")
    assert text == schema_ddl.source(), "stale: run python -m sinks.sql.schema_ddl"
    assert len(schema_ddl.SQLITE_DDL) == len(metadata.tables) + sum(
        len(t.indexes) for t in metadata.tables.values()
    )


def test_a_fresh_database_has_the_ddl_create_all_makes(tmp_path: Path) -> None:
    kept, made = tmp_path / "kept.db", tmp_path / "made.db"
    assert _open(kept)
    engine = make_engine(parse_url(f"sqlite:///{made}"))
    with engine.begin() as conn:
        metadata.create_all(conn)
    engine.dispose()
    assert _master(kept) == _master(made)
    assert {name for _, name, _, _ in _master(kept)} >= set(metadata.tables)


def test_a_fresh_database_is_made_by_the_kept_statements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The creation runs the kept statements (one more shows in the database), not
    ``create_all``; a database that already holds a Stampede table is completed by
    ``create_all`` instead (the kept statements would fail on it)."""
    grown = (*schema_ddl.SQLITE_DDL, "CREATE TABLE kept_canary (x INTEGER)")
    monkeypatch.setattr(schema_ddl, "SQLITE_DDL", grown)
    fresh = tmp_path / "fresh.db"
    assert _open(fresh)
    assert "kept_canary" in {name for _, name, _, _ in _master(fresh)}
    started = tmp_path / "started.db"
    with sqlite3.connect(started) as conn:
        conn.execute("CREATE TABLE rc_lfn (lfn_id INTEGER NOT NULL, PRIMARY KEY (lfn_id))")
    assert _open(started)
    names = {name for _, name, _, _ in _master(started)}
    assert "kept_canary" not in names and names >= set(metadata.tables)
