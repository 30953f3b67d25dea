"""The central database side of the ingest: the project's SQL sink (schema, loader, retry
rules) plus two things of the ingest's own, written in the transaction of the rows:

* ``monitord_ingest_producers``: each monitord producer's high-water mark (the highest
  ``monitord-seq`` whose message is loaded) and the broker-validated user it publishes as.
  A mark moves by compare-and-set (``WHERE seq = <what this batch read>``), so two ingest
  processes that ever held one partition at once (a consumer the broker gave up on while
  it was still writing) cannot both load a message: the second one's batch rolls back.
* ``monitord_ingest_streams``: per (stream, workflow uuid), the highest event number loaded
  (``monitord-stream`` / ``monitord-event``, :mod:`sinks.amqp.stream`) and the user; the
  identity that survives an event being produced again (a resumed daemon, a second replay),
  moved by compare-and-set in the same transaction as the producers' marks and the rows.
* the dashboard's master tables (``master_workflow``, ``master_workflowstate``) for root
  workflows, through the dashboard sink's own row writers.

Blocking (SQLAlchemy): the consumer calls it from a worker thread, one call at a time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    MetaData,
    String,
    Table,
    insert,
    literal,
    select,
    tuple_,
    update,
)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from monitord.core.events import UNSET, StampedeEvent, WfPlan, XwfEnd, XwfStart
from sinks.runtime.base import SinkError
from sinks.sql import schema as stampede
from sinks.sql.dashboard import DashboardSink
from sinks.sql.database import make_engine, parse_url
from sinks.sql.sink import SQLSink

metadata = MetaData()

producers = Table(
    "monitord_ingest_producers",
    metadata,
    Column("producer", String(64), primary_key=True),
    Column("user_id", String(255), nullable=True),
    Column("seq", BigInteger, nullable=False),
    Column("updated", Float, nullable=False),
    mysql_engine="InnoDB",
)

streams = Table(
    "monitord_ingest_streams",
    metadata,
    Column("stream", String(64), primary_key=True),
    Column("wf_uuid", String(255), primary_key=True),
    Column("user_id", String(255), nullable=True),
    Column("events", BigInteger, nullable=False),
    Column("updated", Float, nullable=False),
    mysql_engine="InnoDB",
)

StreamKey = tuple[str, str]  # (stream, workflow uuid)


class MarkMoved(Exception):
    """A producer's mark is not what the batch read: another process loaded it meanwhile."""


@dataclass(frozen=True)
class Mark:
    user: str | None
    seq: int


@dataclass(frozen=True)
class MarkUpdate:
    producer: Any  # a producer (str), or a (stream, workflow) StreamKey
    user: str | None
    old: int | None  # what the batch read (None: the producer is new)
    new: int


class Store:
    def __init__(self, url: str, *, master_db_url: str) -> None:
        self.url = url
        self.sink = SQLSink(url)
        self.display_url = self.sink.display_url
        self._master_db_url = master_db_url
        self._masters: dict[str, DashboardSink] = {}  # root uuid -> its row writers
        self.known: set[str] = set()  # workflow uuids the database holds
        self._not_roots: set[str] = set()
        self._held: Connection | None = None  # the batch's reads' connection (reading())

    def open(self) -> None:
        """The Stampede schema (the SQL sink's open), then the marks table: created if missing;
        two processes creating it at once, the loser finds it made on its second look."""
        self.sink.open()
        engine = make_engine(parse_url(self.url))
        try:
            for attempt in (1, 2):
                try:
                    with engine.begin() as conn:
                        metadata.create_all(conn, checkfirst=True)
                    return
                except SQLAlchemyError as exc:
                    if attempt == 2:
                        raise SinkError(
                            f"{self.display_url}: cannot create {producers.name}: "
                            f"{type(exc).__name__}",
                            retryable=True,
                        ) from None
        finally:
            engine.dispose()

    def close(self) -> None:
        self.sink.close()

    # ------------------------------------------------------------------ reads
    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A batch's reads (marks, streams, workflows) on one pooled connection: one
        checkout, one pre-ping and one reset, not one of each a read (each a round trip the
        writer's thread waits on, with the GIL to take again after it).  A connection lost
        meanwhile fails the read that finds it (SinkError, retryable), as before."""
        try:
            conn = self.sink._require_engine().connect()
        except SinkError:
            raise
        except Exception as exc:  # SQLAlchemyError, a driver error let through
            raise SinkError(f"{self.display_url}: {type(exc).__name__}", retryable=True) from None
        self._held = conn
        try:
            yield
        finally:
            self._held = None
            with contextlib.suppress(Exception):  # (a dead connection: the pool discards it)
                conn.close()

    def _read(self, query: object) -> list[tuple[object, ...]]:
        try:
            if self._held is not None:
                return [tuple(row) for row in self._held.execute(query)]  # type: ignore[call-overload]
            with self.sink._require_engine().connect() as conn:
                return [tuple(row) for row in conn.execute(query)]  # type: ignore[call-overload]
        except SinkError:
            raise
        except Exception as exc:  # SQLAlchemyError, a driver error let through
            raise SinkError(f"{self.display_url}: {type(exc).__name__}", retryable=True) from None

    def ping(self) -> None:
        """The database answers (a pooled connection it dropped is replaced by the pool's
        pre-ping); SinkError (retryable) if not."""
        self._read(select(literal(1)))

    def marks(self, names: Iterable[str]) -> dict[str, Mark]:
        wanted = sorted(set(names))
        if not wanted:
            return {}
        t = producers
        rows = self._read(
            select(t.c.producer, t.c.user_id, t.c.seq).where(t.c.producer.in_(wanted))
        )
        return {str(p): Mark(None if u is None else str(u), int(s)) for p, u, s in rows}  # type: ignore[call-overload]

    def streams(self, keys: Iterable[StreamKey]) -> dict[StreamKey, Mark]:
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        t = streams
        rows = self._read(
            select(t.c.stream, t.c.wf_uuid, t.c.user_id, t.c.events).where(
                tuple_(t.c.stream, t.c.wf_uuid).in_(wanted)
            )
        )
        return {
            (str(st), str(wf)): Mark(None if u is None else str(u), int(n))  # type: ignore[call-overload]
            for st, wf, u, n in rows
        }

    def workflows(self, uuids: Iterable[str]) -> set[str]:
        """Which of ``uuids`` the database holds (remembered: rows are never removed here)."""
        wanted = sorted(set(uuids) - self.known)
        if wanted:
            wf = stampede.workflow
            rows = self._read(select(wf.c.wf_uuid).where(wf.c.wf_uuid.in_(wanted)))
            self.known.update(str(r[0]) for r in rows)
        return self.known.intersection(uuids)

    # ------------------------------------------------------------------ the transaction
    def commit(
        self,
        events: Sequence[StampedeEvent],
        marks: Sequence[MarkUpdate],
        stream_marks: Sequence[MarkUpdate] = (),
    ) -> None:
        """Load ``events`` and move ``marks`` (producers) and ``stream_marks`` ((stream,
        workflow)), all or nothing (SinkError: rolled back; ``retryable`` for an outage; a
        :class:`MarkMoved` cause: re-read the marks)."""

        def then(conn: Connection) -> None:
            self._masters_of(conn, events)
            now = time.time()
            t, s = producers, streams
            for m in marks:
                _move(
                    conn,
                    m,
                    insert(t).values(producer=m.producer, user_id=m.user, seq=m.new, updated=now),
                    update(t)
                    .where(t.c.producer == m.producer, t.c.seq == m.old)
                    .values(seq=m.new, updated=now),
                )
            for m in stream_marks:
                stream, wf = m.producer
                _move(
                    conn,
                    m,
                    insert(s).values(
                        stream=stream, wf_uuid=wf, user_id=m.user, events=m.new, updated=now
                    ),
                    update(s)
                    .where(s.c.stream == stream, s.c.wf_uuid == wf, s.c.events == m.old)
                    .values(events=m.new, updated=now),
                )

        self.sink.write_with(events, then)
        self.known.update(str(e.xwf_id) for e in events if type(e) is WfPlan)

    def _masters_of(self, conn: Connection, events: Sequence[StampedeEvent]) -> None:
        event: Any
        for event in events:
            kind = type(event)
            if kind is not WfPlan and kind is not XwfStart and kind is not XwfEnd:
                continue
            uuid = str(event.xwf_id)
            if kind is WfPlan:
                root = event.root_xwf_id
                if root is not None and root is not UNSET and root != uuid:
                    self._not_roots.add(uuid)
                    continue
                writer = self._masters.setdefault(uuid, self._writer(uuid))
                writer._plan(conn, event)
                continue
            if uuid in self._not_roots:
                continue
            known = self._masters.get(uuid)
            if known is None:
                held = select(stampede.master_workflow.c.wf_id).where(
                    stampede.master_workflow.c.wf_uuid == uuid
                )
                if conn.execute(held).first() is None:
                    self._not_roots.add(uuid)
                    continue
                known = self._masters[uuid] = self._writer(uuid)
            known._state(conn, event)

    def _writer(self, root: str) -> DashboardSink:
        """The dashboard sink's row writers for one root workflow, on the ingest's connection
        (never opened: the ingest's transaction is theirs)."""
        return DashboardSink(self.url, root_wf_uuid=root, db_url=self._master_db_url)

    def forget_caches(self) -> None:
        """After a failed transaction: ids the dashboard writers cached may be rolled back."""
        self._masters.clear()
        self._not_roots.clear()


def _move(conn: Connection, mark: MarkUpdate, create: Any, move: Any) -> None:
    """A mark created (``old`` None) or moved from ``old`` by compare-and-set; anything else
    (another process created or moved it meanwhile) is :class:`MarkMoved`."""
    if mark.old is None:
        try:
            conn.execute(create)
        except IntegrityError:
            raise MarkMoved(mark.producer) from None
        return
    if conn.execute(move).rowcount != 1:
        raise MarkMoved(mark.producer)
