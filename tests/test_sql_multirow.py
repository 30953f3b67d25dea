"""Issue 30 (child30g): SQLite rows of one ``executemany`` INSERT go as multi-row INSERTs,
in a few statements, leaving the rows (and ids) that one statement per row leaves."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine

from sinks.sql import rawsql
from sinks.sql import schema as s
from sinks.sql.multirow import ROWS, multi_row, statements
from sinks.sql.rawsql import RawSQL
from sinks.sql.rowstore import _RC_META_COLS, _rc_meta_upsert


def _write(lfns: list[tuple[Any, ...]], metas: list[tuple[Any, ...]]) -> tuple[Any, list[str]]:
    """``lfns`` into ``rc_lfn``, then ``metas`` merged into ``rc_meta``: the rows and every
    INSERT statement SQLite ran."""
    engine = create_engine("sqlite://")
    s.metadata.create_all(engine, tables=[s.rc_lfn, s.rc_meta])
    seen: list[str] = []
    with engine.connect() as conn:
        conn.connection.dbapi_connection.set_trace_callback(seen.append)  # type: ignore[union-attr]
        raw = RawSQL()
        raw.open(conn)
        raw.insert_values(s.rc_lfn, ("lfn",), lfns)
        upsert = raw.prepare("rc_meta_upsert", _rc_meta_upsert("sqlite"))
        raw.run_values(upsert, _RC_META_COLS, metas)
        raw.close()
        found = (
            conn.exec_driver_sql("SELECT lfn_id, lfn FROM rc_lfn ORDER BY lfn_id").all(),
            conn.exec_driver_sql("SELECT lfn_id, key, value FROM rc_meta ORDER BY 1, 2").all(),
        )
    return found, [q for q in seen if q.startswith("INSERT")]


def test_many_rows_go_in_few_statements_with_the_rows_of_one_statement_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lfns = [(f"f{i}",) for i in range(600)]
    # the same key twice in one run: the later value wins, as row after row
    metas = [(i % 300 + 1, "size", str(i)) for i in range(600)]
    rows, inserts = _write(lfns, metas)
    assert len(inserts) == 22  # 9 * 64 + 16 + 8 rows, each table
    monkeypatch.setattr(rawsql, "multi_row", lambda sql, variables: None)
    one_each, inserts = _write(lfns, metas)
    assert len(inserts) == 1200
    assert rows == one_each
    assert rows[1][0] == (1, "size", "300")


def test_only_a_one_row_insert_of_positional_values_is_cut() -> None:
    cut = multi_row("INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING", 32766)
    assert cut is not None and cut.most == ROWS
    assert cut.text(2) == "INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON CONFLICT DO NOTHING"
    assert multi_row("UPDATE t SET a=? WHERE b=?", 32766) is None
    assert multi_row("INSERT INTO t (a) VALUES (:a)", 32766) is None
    assert multi_row("INSERT INTO t (a) SELECT a FROM u WHERE b = ?", 32766) is None
    # a bound of 100 parameters: 5 columns, 16 rows a statement
    narrow = multi_row("INSERT INTO t (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)", 100)
    assert narrow is not None and narrow.most == 16
    sizes = [sql.count("(?") for sql, _ in statements(narrow, [(1, 2, 3, 4, 5)] * 300)]
    assert sizes == [16] * 18 + [8, 4]
