"""The database sink: Stampede events into a workflow database, one transaction per batch.

Error policy (behaviour spec 7.4): a batch the database rejects because of its
data is rolled back and redone statement by statement, skipping the rejected
rows (one log line per batch, and ``counters``); a transient failure (locked
database, lost connection) is rolled back and reported as a retryable
:class:`SinkError`, so that the shared retry machinery replays the same batch
later.  Rows other workflows wrote (the replica tables) are no rejection: the
loader skips them in the batch.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import structlog
from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from monitord.core.events import StampedeEvent
from monitord.system.ownership import create_owned
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.factory import SinkRequest, endpoint_property
from sinks.runtime.marks import Marks

from .database import (
    SchemaBusy,
    SchemaVersionError,
    connect_timeout_args,
    end_persisted_journal,
    is_sqlite,
    make_engine,
    open_schema,
    parse_url,
    purge_workflow,
    safe_url,
    schema_transaction,
    scrub,
    write_transaction,
)
from .declared import SQL_CAPABILITIES, SQL_READS
from .errors import Rejected, is_row_error, is_transient
from .loader import BatchLoader
from .marks import ensure_marks_table, forget_marks, read_marks, write_marks
from .rotate import rotate_sqlite_file

log = structlog.get_logger(__name__)


def sqlite_file(url: URL) -> str | None:
    """The file behind a SQLite URL, or None for in-memory databases."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


def _identity(url: URL) -> tuple[int, int] | None:
    """A SQLite file's (device, inode), None when absent (or not a SQLite file)."""
    path = sqlite_file(url) if is_sqlite(url) else None
    try:
        st = os.stat(path) if path is not None else None
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if st is not None else None


class SQLSink:
    """Workflow database sink (``sqlite:///…``, ``postgresql://…``, ``mysql://…``, ``jdbc:…``).

    ``restart`` (replay or recovery, spec 4.7/7.1): a SQLite file is rotated to
    ``<db>.NNN`` before connecting; on other databases the workflow
    ``purge_wf_uuid`` (the root workflow) and its sub-workflows are deleted.
    """

    name = "sql"
    capabilities = SQL_CAPABILITIES
    reads = SQL_READS

    def __init__(
        self,
        url: str,
        *,
        restart: bool = False,
        purge_wf_uuid: str | None = None,
        pegasus_version: str | None = None,
        engine_kw: dict[str, Any] | None = None,
        durable: bool = True,
    ) -> None:
        try:
            self._url = parse_url(url)
        except ArgumentError:
            raise SinkError(f"invalid database URL {safe_url(url)}") from None
        self._restart = restart
        self._rotated = False
        # The file a restart rotates, as it is now: a copy of this sink opened in a loader
        # child after one died in its first open rotates only a file no open has rotated yet.
        self._unrotated = _identity(self._url) if restart else None
        self._purge_uuid = purge_wf_uuid
        self._pegasus_version = pegasus_version
        self._engine_kw = engine_kw or {}
        if not durable and is_sqlite(self._url):
            # A replay's own SQLite file: no fsync at commit. A killed replay loses nothing
            # (the OS has every write); an OS crash may leave the file damaged, and the
            # replay run again rotates it aside and writes it anew. A live daemon stays durable.
            self._engine_kw["sqlite_synchronous"] = "OFF"
            # and its rollback journal kept between transactions, its header zeroed at each
            # commit, not made and deleted by each one: a killed replay's transaction is still
            # undone at the next open (bench/README.md, "Issue 30, twelfth session: child30i")
            self._engine_kw["sqlite_journal"] = "PERSIST"
        self._engine: Engine | None = None
        # servers: autocommit pool for the shared tables (see _shared)
        self._side_engine: Engine | None = None
        self._loader = BatchLoader()
        self.display_url = safe_url(self._url)
        # Service mode: engines shared per database server (one pool for many workflows);
        # a SQLite engine stays this sink's own (disposed at close).
        self.engine_source: Callable[[URL], Engine] | None = None
        self._marks_table = False  # monitord_delivery_marks known to exist
        #: batches written row by row, rows the database refused then (health and /metrics)
        self.counters = {"row_by_row_batches": 0, "rows_rejected": 0}

    @classmethod
    def from_request(cls, request: SinkRequest) -> SQLSink:
        """The sink a destination asks for: a restart purges the root workflow; the
        endpoint's ``timeout`` property bounds connecting."""
        timeout = endpoint_property(request.properties, request.dest, "timeout")
        return cls(
            request.dest,
            restart=request.restart,
            purge_wf_uuid=request.root_wf_uuid,
            pegasus_version=request.pegasus_version,
            engine_kw=connect_timeout_args(request.dest, timeout) if timeout else None,
            durable=not request.replay,
        )

    @classmethod
    def from_recipe(cls, request: SinkRequest, unrotated: tuple[int, int] | None) -> SQLSink:
        """:meth:`from_request` in a loader child (``sinks/sql/recipe.py``): the file a
        restart rotates is the one the daemon saw when it made the recipe, as if built there."""
        sink = cls.from_request(request)
        sink._unrotated = unrotated if request.restart else None
        return sink

    def reopening(self) -> SQLSink:
        """This sink (not opened) for another process to open after one opened it already (a
        new loader child after the first died: :class:`~sinks.runtime.process_sink.ProcessSink`):
        the first open rotated the file or purged the workflow, this one must not undo the
        rows written since."""
        again = copy.copy(self)
        again._restart = False
        again._rotated = True
        again._loader = BatchLoader()
        return again

    @property
    def destination(self) -> str:
        """Where it writes, for people (``SinkHealth.destination``): the URL, no password."""
        return self.display_url

    @property
    def server_url(self) -> URL | None:
        """The database server's URL, or None for a SQLite file (which is per workflow)."""
        return None if is_sqlite(self._url) else self._url

    @property
    def lane_key(self) -> str | None:
        """The server many workflows share, password-free (``Capabilities.shared``)."""
        server = self.server_url
        return None if server is None else f"sql:{safe_url(server)}"

    def use_shared(self, shared: SharedResources) -> None:
        """The service's engines, one per database server (``shares_engine``)."""
        self.engine_source = shared.engines

    # --- Sink protocol ---------------------------------------------------

    def open(self) -> None:
        url = self._url
        try:
            if self._restart and is_sqlite(url) and not self._rotated:
                path = sqlite_file(url)
                if path is not None and _identity(url) == self._unrotated:
                    rotate_sqlite_file(path)
                self._rotated = True  # a retried open keeps the fresh file
            if is_sqlite(url) and (path := sqlite_file(url)) is not None:
                # service as root: the file (and so SQLite's journals) is the workflow
                # owner's; a no-op otherwise (monitord/ownership.py)
                create_owned(path)
            if self.engine_source is not None:
                self._engine = self.engine_source(url)
            else:
                self._engine = make_engine(url, **self._engine_kw)
            open_schema(self._engine, self._pegasus_version, self.display_url, self._purge)
        except SchemaVersionError as exc:
            # another version: refused; being created elsewhere, lock held too long: retried
            raise SinkError(
                f"{self.display_url}: {exc}", retryable=isinstance(exc, SchemaBusy)
            ) from None
        except SQLAlchemyError as exc:
            raise self._error("cannot open database", exc) from None
        except ImportError as exc:
            raise SinkError(f"no database driver for {self.display_url}: {exc}") from None
        except OSError as exc:
            raise SinkError(f"cannot open database {self.display_url}: {exc}") from None
        log.info("database opened", db=self.display_url)

    def _purge(self, conn: Connection, created: bool) -> None:
        """Replay on a server: the workflow's earlier rows go, in the schema's transaction."""
        if self._restart and not is_sqlite(self._url) and not created:
            if self._purge_uuid is None:
                log.warning("restart without a workflow to purge", db=self.display_url)
            else:
                # its delivery marks go with its rows: a start from line 1 counts in the same
                # stream again (sinks/runtime/marks.py), and marks must not outlive the rows
                forget_marks(conn, self._purge_uuid, drop_empty=False)
                purge_workflow(conn, self._purge_uuid)

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self._write(events, None)

    def write_marked(self, events: Sequence[StampedeEvent], marks: Marks) -> None:
        """A batch and its delivery marks, in one transaction (sinks/sql/marks.py)."""
        self._ensure_marks_table()
        self._write(events, marks)

    def write_with(
        self, events: Sequence[StampedeEvent], then: Callable[[Connection], None]
    ) -> None:
        """A batch and the caller's own rows (``then(conn)``, run after the events) in one
        transaction: ``monitord ingest`` records its producers' marks this way.  ``then``
        runs even for an empty batch; an exception from it rolls everything back."""
        self._write(events, None, then)

    def read_marks(self, stream: str) -> dict[str, int]:
        """Another writer of the file may drop the marks table between its making and the
        read (its workflow ended in order): made again and read once more, not an outage."""
        engine = self._require_engine()
        for last in (False, True):
            try:
                self._ensure_marks_table()
                with engine.connect() as conn:
                    return read_marks(conn, stream)
            except SQLAlchemyError as exc:
                self._marks_table = False  # perhaps dropped meanwhile: made again next time
                if last:
                    raise self._error("cannot read delivery marks", exc) from None
        raise AssertionError("unreachable")

    def forget_marks(self, root_uuid: str) -> None:
        """After the sink is closed, once its workflow ended with every event delivered."""
        if self.engine_source is not None and not is_sqlite(self._url):
            engine, own = self.engine_source(self._url), False
        else:
            engine, own = make_engine(self._url, **self._engine_kw), True
        try:
            with self._transaction(engine) as conn:
                forget_marks(conn, root_uuid, drop_empty=is_sqlite(self._url))
        except SQLAlchemyError as exc:
            log.warning(
                "cannot remove delivery marks", db=self.display_url, error=self._message(exc)
            )
        finally:
            if own:
                self._dispose(engine)
        self._marks_table = False

    def _ensure_marks_table(self) -> None:
        if self._marks_table:
            return
        try:
            with schema_transaction(self._require_engine()) as conn:
                ensure_marks_table(conn)
        except SQLAlchemyError as exc:
            raise self._error("cannot create the delivery marks table", exc) from None
        except SchemaBusy as exc:
            raise SinkError(f"{self.display_url}: {exc}", retryable=True) from None
        self._marks_table = True

    def _write(
        self,
        events: Sequence[StampedeEvent],
        marks: Marks | None,
        then: Callable[[Connection], None] | None = None,
    ) -> None:
        if not events and then is None:
            return
        engine = self._require_engine()
        loader = self._loader
        try:
            try:
                with self._shared(), self._transaction(engine) as conn:
                    loader.load(conn, events)
                    if marks is not None:
                        self._write_marks(conn, marks)
                    if then is not None:
                        then(conn)
            except SQLAlchemyError as exc:
                loader.reset()
                if not is_row_error(exc):
                    raise
                with self._shared(), self._transaction(engine) as conn:
                    loader.load(conn, events, slow=True)
                    if marks is not None:
                        self._write_marks(conn, marks)
                    if then is not None:
                        then(conn)
                self._wrote_row_by_row(exc, len(events), loader.rejected)
        except SQLAlchemyError as exc:
            # rolled back: the ids cached during the batch may name rows that do not exist
            loader.reset()
            # and the marks table may be gone: a daemon that ends drops it from a SQLite file
            # when it holds no other marks (forget_marks), under another one writing there
            self._marks_table = False
            raise self._error("database write failed", exc) from None
        except Exception as exc:  # a loader bug must not leave stale ids cached
            loader.reset()
            if isinstance(exc, self._transient_dbapi_errors(engine)):
                # a driver error SQLAlchemy let through unwrapped (seen while returning a dead
                # connection to the pool): the server went away, the batch can be redone
                raise SinkError(
                    f"database write failed ({self.display_url}): "
                    f"{scrub(f'{type(exc).__name__}: {exc}', self._url)[:2000]}",
                    retryable=True,
                ) from None
            raise SinkError(f"{self.display_url}: loader failed: {exc!r}") from exc
        loader.committed()

    def _wrote_row_by_row(self, cause: SQLAlchemyError, events: int, rejected: Rejected) -> None:
        """One line per batch that fell back to row-by-row writes, not one per rejected row:
        the table, the count and one example."""
        self.counters["row_by_row_batches"] += 1
        self.counters["rows_rejected"] += rejected.total
        fields = {"db": self.display_url, "events": events, "cause": self._message(cause)[:500]}
        if rejected.example is None:
            log.warning("batch rejected, written row by row: no row skipped", **fields)
            return
        table, key, error = rejected.example
        log.error(
            "batch rejected, written row by row: rows skipped",
            rows=rejected.total,
            table=table,
            key=scrub(key, self._url),  # row values: a job may be named like the password
            error=scrub(error, self._url)[:500],
            tables=dict(rejected.counts),
            **fields,
        )

    @staticmethod
    def _transient_dbapi_errors(engine: Engine) -> tuple[type[BaseException], ...]:
        dbapi = engine.dialect.loaded_dbapi
        return (dbapi.OperationalError, dbapi.InterfaceError)

    def _write_marks(self, conn: Connection, marks: Marks) -> None:
        """In the batch's transaction.  A SQLite file's table is made there again if a daemon
        that ended dropped it since (forget_marks): our write lock keeps it until the commit."""
        if is_sqlite(self._url):
            ensure_marks_table(conn)
        write_marks(conn, marks.stream, marks.counts)

    @contextmanager
    def _transaction(self, engine: Engine) -> Iterator[Connection]:
        """A write transaction.  On SQLite it takes the write lock at BEGIN, queueing for it
        under the busy timeout: a deferred one that read first is refused at once while another
        daemon writes the same file (a spurious outage, a retry; its marks left behind)."""
        with engine.connect() as conn, write_transaction(conn):
            yield conn

    @contextmanager
    def _shared(self) -> Iterator[None]:
        """On a server, an autocommit connection for the global tables (see BatchLoader)."""
        if is_sqlite(self._url):
            yield
            return
        if self._side_engine is None:
            # its own small pool, AUTOCOMMIT from the start: a per-connection isolation switch
            # would be undone at check-in, which fails on a connection the server dropped
            side_kw = {"isolation_level": "AUTOCOMMIT", "pool_size": 1, "max_overflow": 2}
            self._side_engine = make_engine(self._url, **{**self._engine_kw, **side_kw})
        with self._side_engine.connect() as side:
            self._loader.shared = side
            try:
                yield
            finally:
                self._loader.shared = None

    def flush(self) -> None:
        """Every batch is committed by :meth:`write_batch`; nothing is held back."""

    def close(self) -> None:
        if self._side_engine is not None:
            self._side_engine.dispose()
            self._side_engine = None
        if self._engine is not None:
            if self.engine_source is None or is_sqlite(self._url):
                self._dispose(self._engine)
            self._engine = None

    def _dispose(self, engine: Engine) -> None:
        """Close the sink's own engine; a persisted journal (a replay's) is removed first."""
        if self._engine_kw.get("sqlite_journal") == "PERSIST":
            end_persisted_journal(engine)
        engine.dispose()

    # --- helpers -----------------------------------------------------------

    def _require_engine(self) -> Engine:
        if self._engine is None:
            raise SinkError(f"{self.display_url}: sink used before open()")
        return self._engine

    def _message(self, exc: SQLAlchemyError) -> str:
        """The driver's own message (not the statement and its parameters), password-free."""
        orig = getattr(exc, "orig", None)
        text = f"{type(orig or exc).__name__}: {orig if orig is not None else exc}"
        return scrub(text, self._url)[:2000]

    def _error(self, what: str, exc: SQLAlchemyError) -> SinkError:
        return SinkError(
            f"{what} ({self.display_url}): {self._message(exc)}", retryable=is_transient(exc)
        )
