"""Copy a Stampede database on a server into a SQLite file, so stampede-diff can compare it.

Independent of the loader and of ``sinks.sql.schema``: the SQLite file gets its DDL from a
template database (the reference's own ``stampede.db``), the server side is reflected, and every
row is copied as it is, ids included. A column or table present on one side only is an error, so
a server schema that lacks something the reference has cannot slip through.
"""

from __future__ import annotations

import datetime
import decimal
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, create_engine, select

MARKS_TABLE = "monitord_delivery_marks"
#: monitord ingest's own bookkeeping (monitord/ingest/store.py): not a Stampede table
INGEST_TABLES = ("monitord_ingest_producers", "monitord_ingest_streams")


class SchemaMismatch(AssertionError):
    """The server's tables or columns differ from the template's."""


def _sqlite_value(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else str(value)
    return value


def _template_ddl(template: Path) -> tuple[list[str], dict[str, list[str]]]:
    con = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    try:
        ddl = [
            sql
            for (sql,) in con.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid"
            )
        ]
        tables = [
            name
            for (name,) in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns = {t: [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')] for t in tables}
    finally:
        con.close()
    return ddl, columns


def copy_to_sqlite(url: str, dest: Path, template: Path) -> dict[str, int]:
    """Copy every table of the database at ``url`` into a new SQLite file ``dest``.

    ``dest`` gets the DDL of ``template``. Returns the number of rows copied per table.
    """
    ddl, columns = _template_ddl(template)
    scheme, sep, rest = url.partition("://")
    url = {"mysql": "mysql+pymysql", "postgresql": "postgresql+psycopg2"}.get(scheme, scheme)
    url = url + sep + rest
    engine = create_engine(url)
    counts: dict[str, int] = {}
    try:
        meta = MetaData()
        meta.reflect(engine)
        server_tables = set(meta.tables)
        if MARKS_TABLE in server_tables:
            # monitord's own bookkeeping (sinks/sql/marks.py): kept on a server, but it must be
            # empty once every workflow writing to the database has ended in order
            with engine.connect() as conn:
                left = conn.execute(select(meta.tables[MARKS_TABLE])).fetchall()
            if left:
                raise SchemaMismatch(f"{MARKS_TABLE} still holds {len(left)} rows: {left[:5]}")
            server_tables.discard(MARKS_TABLE)
        server_tables.difference_update(INGEST_TABLES)
        if server_tables != set(columns):
            raise SchemaMismatch(
                f"tables only on the server: {sorted(server_tables - set(columns))}; "
                f"only in the template: {sorted(set(columns) - server_tables)}"
            )
        dest.unlink(missing_ok=True)
        out = sqlite3.connect(dest)
        try:
            for statement in ddl:
                out.execute(statement)
            with engine.connect() as conn:
                for name, cols in columns.items():
                    table = meta.tables[name]
                    if set(table.c.keys()) != set(cols):
                        raise SchemaMismatch(
                            f"{name}: server columns {sorted(table.c.keys())}, "
                            f"template columns {sorted(cols)}"
                        )
                    order = list(table.primary_key.columns) or [table.c[cols[0]]]
                    rows = conn.execute(select(*[table.c[c] for c in cols]).order_by(*order))
                    values = [tuple(_sqlite_value(v) for v in row) for row in rows]
                    names = ", ".join(f'"{c}"' for c in cols)
                    marks = ", ".join("?" for _ in cols)
                    out.executemany(f'INSERT INTO "{name}" ({names}) VALUES ({marks})', values)
                    counts[name] = len(values)
            out.commit()
        finally:
            out.close()
    finally:
        engine.dispose()
    return counts


def _sorted_enum(column_type: str) -> str:
    """``enum('b','a')`` → ``enum('a','b')``: the reference emits enum values in set order."""
    if not column_type.startswith("enum("):
        return column_type
    values = sorted(column_type[len("enum(") : -1].split(","))
    return f"enum({','.join(values)})"


_MYSQL_SCHEMA = (
    "SELECT CONCAT_WS(' ', 'table', TABLE_NAME, ENGINE, SUBSTRING_INDEX(TABLE_COLLATION, '_', 1))"
    " FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    "SELECT CONCAT_WS(' ', 'column', TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, "
    "COLUMN_KEY, EXTRA) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()",
    "SELECT CONCAT_WS(' ', 'index', TABLE_NAME, INDEX_NAME, NON_UNIQUE, "
    "GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX), MAX(SUB_PART)) "
    "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
    "GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE",
    "SELECT CONCAT_WS(' ', 'fk', k.TABLE_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME, "
    "k.REFERENCED_COLUMN_NAME, r.DELETE_RULE) FROM information_schema.KEY_COLUMN_USAGE k "
    "JOIN information_schema.REFERENTIAL_CONSTRAINTS r ON r.CONSTRAINT_SCHEMA = "
    "k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME "
    "WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME IS NOT NULL",
)
_POSTGRES_SCHEMA = (
    "SELECT concat_ws(' ', 'column', table_name, column_name, data_type, udt_name, "
    "character_maximum_length, numeric_precision, numeric_scale, is_nullable) "
    "FROM information_schema.columns WHERE table_schema = 'public'",
    "SELECT concat_ws(' ', 'index', indexdef) FROM pg_indexes WHERE schemaname = 'public'",
    "SELECT concat_ws(' ', 'constraint', conrelid::regclass::text, contype, "
    "pg_get_constraintdef(oid)) FROM pg_constraint "
    "WHERE connamespace = 'public'::regnamespace",
    "SELECT concat_ws(' ', 'enum', t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumlabel))"
    " FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname",
)


def describe_schema(url: str) -> list[str]:
    """The server schema as sorted text lines: tables, column types, indexes, keys, enums.

    Only what the DDL decides (no AUTO_INCREMENT counters, no generated OIDs), so two
    databases created by different programs compare line by line.
    """
    from sqlalchemy import text

    scheme, sep, rest = url.partition("://")
    driver = {"mysql": "mysql+pymysql", "postgresql": "postgresql+psycopg2"}.get(scheme, scheme)
    engine = create_engine(driver + sep + rest)
    queries = _MYSQL_SCHEMA if engine.dialect.name in ("mysql", "mariadb") else _POSTGRES_SCHEMA
    lines: list[str] = []
    try:
        with engine.connect() as conn:
            for query in queries:
                lines.extend(
                    " ".join(map(_sorted_enum, r[0].split(" "))) for r in conn.execute(text(query))
                )
    finally:
        engine.dispose()
    return sorted(lines)
