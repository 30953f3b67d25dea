"""Delivery marks in the workflow database: what a resumed service may skip (sinks/runtime/marks.py).

One row per workflow uuid, written in the transaction of every batch that carries marks, so
the row says exactly which of the workflow's events the database holds.  The table is
monitord's own bookkeeping, outside the Stampede schema (its own metadata): it is created
only by a daemon that numbers its events (the service), never by a replay, so a replayed
database carries the reference's tables and nothing else.  Pegasus's tools ignore it.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    MetaData,
    String,
    Table,
    delete,
    inspect,
    select,
    update,
)

from . import schema as stampede

metadata = MetaData()

delivery_marks = Table(
    "monitord_delivery_marks",
    metadata,
    Column("wf_uuid", String(255), primary_key=True),
    Column("stream", String(64), nullable=False),
    Column("events", BigInteger, nullable=False),
    mysql_engine="InnoDB",
)


def ensure_marks_table(conn: Connection) -> None:
    metadata.create_all(conn, checkfirst=True)


def read_marks(conn: Connection, stream: str) -> dict[str, int]:
    t = delivery_marks
    rows = conn.execute(select(t.c.wf_uuid, t.c.events).where(t.c.stream == stream))
    return {str(uuid): int(n) for uuid, n in rows}


def write_marks(conn: Connection, stream: str, counts: dict[str, int]) -> None:
    """Record ``counts`` (one writer per workflow: an update, else an insert)."""
    t = delivery_marks
    for uuid, n in counts.items():
        done = conn.execute(
            update(t).where(t.c.wf_uuid == uuid).values(stream=stream, events=n)
        ).rowcount
        if not done:
            conn.execute(t.insert().values(wf_uuid=uuid, stream=stream, events=n))


def forget_marks(conn: Connection, root_uuid: str, *, drop_empty: bool) -> None:
    """A workflow ended in order and its events are all delivered: the marks of it and of its
    sub-workflows are not needed any more (whichever daemon wrote them).

    ``drop_empty`` (a SQLite file, one workflow's): the table goes too once empty, so the
    database has the reference's tables only.  A server database keeps the (shared) table.
    """
    t = delivery_marks
    if not inspect(conn).has_table(t.name):
        return
    wf = stampede.workflow
    root_id = select(wf.c.wf_id).where(wf.c.wf_uuid == root_uuid).scalar_subquery()
    family = select(wf.c.wf_uuid).where(wf.c.root_wf_id == root_id)
    uuids = [root_uuid, *conn.execute(family).scalars()]
    conn.execute(delete(t).where(t.c.wf_uuid.in_(uuids)))
    if drop_empty and conn.execute(select(t.c.wf_uuid).limit(1)).first() is None:
        t.drop(conn)
