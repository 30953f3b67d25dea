"""The Stampede schema's SQLite DDL, kept as the statements ``metadata.create_all`` sends.

Creating a fresh SQLite database through ``create_all`` checks every table first (48
``PRAGMA`` queries) and compiles 32 statements: about half of a 10-job replay's CPU after its
imports.  Every replay into a SQLite file creates one, so the statements SQLAlchemy sends are
kept as data (``sinks/sql/schema_sqlite.py``) and sent as they are: the database carries the
same DDL, byte for byte, as one ``create_all`` made.  ``python -m sinks.sql.schema_ddl``
rewrites the file; tests/test_schema_ddl.py fails when it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, event

from . import schema as s
from .schema_sqlite import SQLITE_DDL

TARGET = Path(__file__).with_name("schema_sqlite.py")

HEADER = '''"""The Stampede schema's SQLite statements, as ``create_all`` sends them.  GENERATED: do not
edit; ``python -m sinks.sql.schema_ddl`` writes it from ``sinks/sql/schema.py``."""

# fmt: off
# ruff: noqa: E501

'''


def create_all(conn: Connection, existing: set[str]) -> None:
    """``metadata.create_all``; on a SQLite database that holds none of its tables yet, by the
    kept statements."""
    if conn.dialect.name == "sqlite" and not existing & s.metadata.tables.keys():
        for statement in SQLITE_DDL:
            conn.exec_driver_sql(statement)
    else:
        s.metadata.create_all(conn)


def captured() -> tuple[str, ...]:
    """The statements ``create_all`` sends to a fresh SQLite database now (its checks left out)."""
    engine = create_engine("sqlite://")
    sent: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _keep(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.startswith("PRAGMA"):
            sent.append(statement)

    with engine.begin() as conn:
        s.metadata.create_all(conn)
    engine.dispose()
    return tuple(sent)


def source() -> str:
    lines = [HEADER, "SQLITE_DDL: tuple[str, ...] = (\n"]
    lines += [f"    {statement!r},\n" for statement in captured()]
    lines.append(")\n")
    return "".join(lines)


def main() -> int:
    TARGET.write_text(source(), encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
