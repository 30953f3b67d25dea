"""The loader's hot path: Core statements compiled once, run on the DBAPI cursor.

SQLAlchemy's per-``execute`` bookkeeping costs more than SQLite's own insert, and
a replay writes hundreds of thousands of rows.  So the fast
path compiles each statement once for the engine's dialect and drives the
driver cursor of the *same* connection (hence the same transaction) directly.
Values are already coerced by the loader, so no bind processors are needed.
Driver errors are wrapped into SQLAlchemy's exception classes so that callers
classify them exactly like errors raised through Core.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Table, bindparam
from sqlalchemy.exc import DBAPIError

from .multirow import MultiRow, multi_row, statements

Row = dict[str, Any]


class Prepared:
    """One compiled statement and how to lay out its parameters."""

    __slots__ = ("sql", "names", "positional", "returning", "multi", "values", "_take")

    def __init__(
        self,
        sql: str,
        names: Sequence[str],
        positional: bool,
        returning: bool,
        multi: MultiRow | None = None,
    ) -> None:
        self.sql = sql
        self.names = tuple(names)
        self.positional = positional
        self.returning = returning
        #: SQLite: the statement as multi-row INSERTs, for ``executemany`` (:mod:`.multirow`)
        self.multi = multi
        #: psycopg2, a plain INSERT: (``INSERT .. VALUES %s``, the row's template), for
        #: ``execute_values`` (:meth:`RawSQL._run_many`)
        self.values: tuple[str, str] | None = None
        # one C call per row instead of a lookup per column (always a tuple)
        self._take = itemgetter(*self.names) if len(self.names) > 1 else None

    def params(self, row: Row) -> Any:
        if self.positional:
            if self._take is not None:
                try:
                    return self._take(row)
                except KeyError:  # a column the row leaves out is NULL
                    pass
            return tuple([row.get(n) for n in self.names])
        return {n: row.get(n) for n in self.names}

    def params_of(self, cols: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[Any]:
        """Parameters for ``rows`` of values in the order of ``cols``: the rows themselves
        when the statement binds exactly those columns in that order (SQLite, MySQL), each
        row's values picked by position (one C call) when it binds them in another order
        (an UPDATE's SET clause follows the table's columns, not the row's)."""
        if self.positional:
            names = self.names
            if names == cols:
                return rows
            if len(names) > 1 and set(names) <= set(cols):
                return list(map(itemgetter(*map(cols.index, names)), rows))
        return [self.params(dict(zip(cols, r, strict=True))) for r in rows]


class RawSQL:
    """Statements compiled once for a dialect; run on one batch's DBAPI cursor."""

    def __init__(self) -> None:
        self._prepared: dict[Any, Prepared] = {}
        self._dialect: Any = None
        #: SQLite: the connection's bound on bound parameters (multi-row INSERTs); else 0
        self._variables = 0
        self._conn: Connection | None = None
        self._dbapi_conn: Any = None
        self._cursor: Any = None

    def open(self, conn: Connection) -> None:
        """Start a batch on ``conn`` (inside its open transaction)."""
        self._conn = conn
        self._dbapi_conn = conn.connection.dbapi_connection
        if conn.dialect is not self._dialect:
            self._dialect = conn.dialect
            self._prepared.clear()
            self._variables = 0
            if conn.dialect.name == "sqlite":
                import sqlite3

                self._variables = self._dbapi_conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._cursor = self._dbapi_conn.cursor()

    def close(self) -> None:
        if self._cursor is not None:
            try:
                self._cursor.close()
            except Exception:  # a dead connection's cursor: nothing to release
                pass
        self._cursor = None
        self._conn = None
        self._dbapi_conn = None

    def prepare(self, key: Any, stmt: Any, returning: bool = False) -> Prepared:
        """Compile ``stmt`` once under ``key``; ``returning`` fetches the new PK."""
        prep = self._prepared.get(key)
        if prep is None:
            use_returning = returning and self._dialect.name not in ("sqlite", "mysql", "mariadb")
            if use_returning:
                stmt = stmt.returning(stmt.table.autoincrement_column)
            compiled = stmt.compile(dialect=self._dialect)
            names = (
                list(compiled.positiontup or ()) if compiled.positional else list(compiled.binds)
            )
            sql = compiled.string
            multi = multi_row(sql, self._variables) if self._variables else None
            prep = self._prepared[key] = Prepared(
                sql, names, bool(compiled.positional), use_returning, multi
            )
        return prep

    def _insert(self, table: Table, cols: tuple[str, ...], returning: bool) -> Prepared:
        key = ("insert", table.name, cols, returning)
        prep = self._prepared.get(key)
        if prep is None:
            stmt = table.insert().values({c: bindparam(c) for c in cols})
            prep = self.prepare(key, stmt, returning)
            if self._dialect.driver == "psycopg2" and not prep.returning and not prep.positional:
                # (``inline``: without the implicit ``RETURNING`` of the primary key that
                # SQLAlchemy gives a one-row INSERT, and this path discards)
                inline = table.insert().inline().values({c: bindparam(c) for c in cols})
                prep.values = values_form(inline.compile(dialect=self._dialect).string, prep.names)
        return prep

    def insert_id(self, table: Table, row: Row) -> int:
        """Insert one row and return its new surrogate key."""
        prep = self._insert(table, tuple(row), True)
        params = prep.params(row)
        cur = self._cursor
        try:
            cur.execute(prep.sql, params)
            if prep.returning:
                return int(cur.fetchone()[0])
            return int(cur.lastrowid)
        except self._dialect.loaded_dbapi.Error as exc:
            raise self._wrap(exc, prep.sql, params) from exc

    def insert_ids(
        self, table: Table, rows: list[Row], key: str | tuple[str, ...]
    ) -> dict[Any, int]:
        """Insert ``rows`` in one statement per 1,000 (PostgreSQL: ``INSERT .. VALUES ..
        RETURNING``) and return each new surrogate key by the row's ``key`` column (a tuple
        of columns: by the tuple of their values): one round trip instead of one per row.
        Every row carries the keys of the first one; the ids are mapped by ``key``, not by
        position (RETURNING's order is not promised)."""
        from psycopg2.extras import execute_values

        cols = tuple(rows[0])
        pk = table.autoincrement_column
        assert pk is not None and self._dialect.driver == "psycopg2"
        q = self._dialect.identifier_preparer.quote
        keys = (key,) if isinstance(key, str) else key
        sql = (
            f"INSERT INTO {q(table.name)} ({', '.join(map(q, cols))}) VALUES %s"
            f" RETURNING {q(pk.name)}, {', '.join(map(q, keys))}"
        )
        params = [tuple([r[c] for c in cols]) for r in rows]
        try:
            found = execute_values(self._cursor, sql, params, page_size=1000, fetch=True)
        except self._dialect.loaded_dbapi.Error as exc:
            raise self._wrap(exc, sql, params[:1]) from exc
        if isinstance(key, str):
            return {k: int(i) for i, k in found}
        return {tuple(k): int(i) for i, *k in found}

    def scalar(self, prep: Prepared, row: Row) -> Any:
        """The first column of the first row ``prep`` selects, or None."""
        params = prep.params(row)
        cur = self._cursor
        try:
            cur.execute(prep.sql, params)
            found = cur.fetchone()
        except self._dialect.loaded_dbapi.Error as exc:
            raise self._wrap(exc, prep.sql, params) from exc
        return None if found is None else found[0]

    def rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Every row of a query in the dialect's own SQL (positional parameters)."""
        cur = self._cursor
        try:
            cur.execute(sql, params)
            return cur.fetchall()
        except self._dialect.loaded_dbapi.Error as exc:
            raise self._wrap(exc, sql, params) from exc

    def insert_many(self, table: Table, rows: list[Row]) -> None:
        """``executemany`` INSERT; every row carries the keys of the first one."""
        self.execute_many(self._insert(table, tuple(rows[0]), False), rows)

    def insert_values(self, table: Table, cols: tuple[str, ...], rows: list[Any]) -> None:
        """``executemany`` INSERT of value tuples in the order of ``cols``."""
        self.run_values(self._insert(table, cols, False), cols, rows)

    def run_values(self, prep: Prepared, cols: tuple[str, ...], rows: list[Any]) -> None:
        """``executemany`` of ``prep`` with value tuples in the order of ``cols``."""
        if prep.values is not None and prep.names == cols and len(rows) > 1:
            self._run_many(prep, rows, positional=True)  # (PostgreSQL: no dict a row)
            return
        self._run_many(prep, prep.params_of(cols, rows))

    def execute_many(self, prep: Prepared, rows: list[Row]) -> None:
        self._run_many(prep, [prep.params(r) for r in rows])

    def _run_many(self, prep: Prepared, params: list[Any], positional: bool = False) -> None:
        """``positional``: ``params`` are value tuples in the order of ``prep.names``, for
        ``execute_values``' positional template (PostgreSQL, a plain INSERT)."""
        try:
            if prep.multi is not None and len(params) > 1:
                execute = self._cursor.execute
                for sql, flat in statements(prep.multi, params):
                    execute(sql, flat)
            elif prep.values is not None and len(params) > 1:
                # one INSERT of 1,000 rows, not 1,000 INSERTs: PostgreSQL parses and plans
                # one statement a page (its CPU per row 10 -> 4 µs; bench/README.md, stream30j)
                from psycopg2.extras import execute_values

                head, template = prep.values
                if positional:  # (the same row, without a dict built for it)
                    template = "(" + ", ".join(["%s"] * len(prep.names)) + ")"
                execute_values(self._cursor, head, params, template=template, page_size=1000)
            elif self._dialect.driver == "psycopg2" and len(params) > 1:
                # psycopg2's executemany is one server round trip per row; execute_batch
                # sends the statements in pages
                from psycopg2.extras import execute_batch

                execute_batch(self._cursor, prep.sql, params, page_size=500)
            else:
                self._cursor.executemany(prep.sql, params)
        except self._dialect.loaded_dbapi.Error as exc:
            raise self._wrap(exc, prep.sql, params[:1]) from exc

    def _wrap(self, exc: Exception, sql: str, params: Any) -> BaseException:
        invalidated = bool(self._dialect.is_disconnect(exc, self._dbapi_conn, self._cursor))
        if invalidated and self._conn is not None:
            self._conn.invalidate()
        return DBAPIError.instance(
            sql,
            params,
            exc,
            self._dialect.loaded_dbapi.Error,
            hide_parameters=True,
            connection_invalidated=invalidated,
            dialect=self._dialect,
        )


def values_form(sql: str, names: Sequence[str]) -> tuple[str, str] | None:
    """A plain ``INSERT INTO t (..) VALUES (%(a)s, ..)`` binding ``names`` as
    ``execute_values`` takes it: the statement with ``VALUES %s``, and the row's template;
    None for any other shape (a cast, or a suffix such as ``ON CONFLICT`` or ``RETURNING``
    that would apply to the whole multi-row statement)."""
    template = "(" + ", ".join(f"%({n})s" for n in names) + ")"
    head, sep, tail = sql.rpartition(" VALUES ")
    if not sep or tail != template or not head.startswith("INSERT INTO "):
        return None
    return f"{head} VALUES %s", template
