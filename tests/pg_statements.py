"""What a PostgreSQL sink runs and leaves, for the loader's statement-count tests
(tests/test_sql_ids_ahead.py, tests/test_sql_lfns_ahead.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from sinks.sql.sink import SQLSink


def recording_sink(url: str, statements: list[str]) -> SQLSink:
    """An open sink on ``url`` whose cursors append each statement they ``execute`` to
    ``statements``."""
    import psycopg2.extensions

    class Cursor(psycopg2.extensions.cursor):  # type: ignore[misc]
        def execute(self, sql: Any, params: Any = None) -> Any:
            statements.append(sql if isinstance(sql, str) else sql.decode())
            return super().execute(sql, params)

    sink = SQLSink(url, engine_kw={"connect_args": {"cursor_factory": Cursor}})
    sink.open()
    return sink


def query(sink: SQLSink, sql: str, **params: Any) -> set[tuple[Any, ...]]:
    """The rows ``sql`` selects from the sink's database, as a set."""
    with sink._require_engine().connect() as conn:
        return {tuple(row) for row in conn.execute(text(sql), params)}
