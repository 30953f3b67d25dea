"""Issue 30: on PostgreSQL (psycopg2) the loader's plain INSERTs of many rows go as one
multi-row ``INSERT .. VALUES`` a page (``execute_values``), not one statement a row; the rows
and the errors are those of the statements one by one (``sinks/sql/rawsql.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    bindparam,
    create_engine,
    insert,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import IntegrityError

from sinks.sql.database import parse_url
from sinks.sql.rawsql import Prepared, RawSQL, values_form
from tests.servers import create_database, drop_database, require_server


@pytest.fixture
def engine() -> Iterator[Engine]:
    base = require_server("postgres")
    url = create_database(base, f"{make_url(base).database}_values_{uuid.uuid4().hex[:8]}")
    eng = create_engine(parse_url(url))
    try:
        yield eng
    finally:
        eng.dispose()
        drop_database(base, str(make_url(url).database))


def state_table() -> Table:
    """A jobstate-like table: a serial key, a composite unique key, a nullable column."""
    return Table(
        "state",
        MetaData(),
        Column("state_id", Integer, primary_key=True, autoincrement=True),
        Column("inst", Integer, nullable=False),
        Column("name", String(50), nullable=False),
        Column("ts", Numeric(16, 6), nullable=True),
        Column("seq", Integer, nullable=False, unique=True),
    )


ROWS = [(1, "SUBMIT", 1.5, 1), (1, "EXECUTE", None, 2), (2, "it's; --", 3.25, 3)]
COLS = ("inst", "name", "ts", "seq")


def test_many_rows_are_one_insert_and_the_rows_of_one_statement_each(engine: Engine) -> None:
    table = state_table()
    table.metadata.create_all(engine)
    raw = RawSQL()
    with engine.begin() as conn:
        raw.open(conn)
        raw.insert_values(table, COLS, ROWS)
        sent = raw._cursor.query
        raw.close()
    assert sent.count(b"INSERT") == 1, sent
    with engine.connect() as conn:
        got = conn.execute(table.select().order_by(table.c.state_id)).all()
    # the serial keys in the rows' order, the values as given (None stays NULL)
    assert [tuple(r) for r in got] == [
        (i + 1, inst, name, None if ts is None else pytest.approx(ts), seq)
        for i, (inst, name, ts, seq) in enumerate(ROWS)
    ]


def test_value_rows_go_as_they_are_in_the_same_statement(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of values in the statement's column order are sent as they are (a positional
    template; no dict built a row): the statement the server gets is the one the rows as
    dicts give, byte for byte."""
    table = state_table()
    table.metadata.create_all(engine)
    raw = RawSQL()
    with engine.begin() as conn:
        raw.open(conn)
        raw.insert_many(table, [dict(zip(COLS, r, strict=True)) for r in ROWS])
        as_dicts = raw._cursor.query
        conn.execute(table.delete())
        with monkeypatch.context() as m:
            m.setattr(Prepared, "params", lambda *_: pytest.fail("a dict built for a row"))
            m.setattr(Prepared, "params_of", lambda *_: pytest.fail("dicts built for rows"))
            raw.insert_values(table, COLS, ROWS)
        assert raw._cursor.query == as_dicts
        raw.close()
    with engine.connect() as conn:
        assert [r[1:] for r in conn.execute(table.select().order_by(table.c.state_id))] == [
            (inst, name, None if ts is None else pytest.approx(ts), seq)
            for inst, name, ts, seq in ROWS
        ]


def test_a_duplicate_row_still_fails_the_batch_as_an_integrity_error(engine: Engine) -> None:
    table = state_table()
    table.metadata.create_all(engine)
    raw = RawSQL()
    with pytest.raises(IntegrityError), engine.begin() as conn:
        raw.open(conn)
        raw.insert_values(table, COLS, [*ROWS, (3, "again", None, 2)])
    raw.close()
    with engine.connect() as conn:
        assert conn.execute(table.select()).all() == []  # (the transaction rolled back whole)


def test_only_a_plain_insert_takes_the_multi_row_form(engine: Engine) -> None:
    """An INSERT with a suffix (``ON CONFLICT``, ``RETURNING``) keeps one statement a row:
    the suffix would apply to the whole multi-row statement."""
    from sqlalchemy.dialects.postgresql import insert as pg_insert

    table = state_table()
    values: dict[str, Any] = {c: bindparam(c) for c in COLS}
    forms = [
        insert(table).inline().values(values),
        insert(table).values(values).returning(table.c.state_id),
        pg_insert(table).inline().values(values).on_conflict_do_nothing(),
    ]
    plain, returning, upsert = (
        values_form(stmt.compile(dialect=engine.dialect).string, COLS) for stmt in forms
    )
    assert plain == (
        "INSERT INTO state (inst, name, ts, seq) VALUES %s",
        "(%(inst)s, %(name)s, %(ts)s, %(seq)s)",
    )
    assert returning is None
    assert upsert is None
