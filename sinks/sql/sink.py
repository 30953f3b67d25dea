"""The database sink: Stampede events into a workflow database, one transaction per batch.

Error policy (behaviour spec 7.4): a batch the database rejects because of its
data is rolled back and redone statement by statement, skipping (and logging)
the rejected rows; a transient failure (locked database, lost connection) is
rolled back and reported as a retryable :class:`SinkError`, so that the shared
retry machinery replays the same batch later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog
from sqlalchemy import Engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from monitord.events import StampedeEvent
from sinks.base import SinkError

from .database import (
    SchemaVersionError,
    ensure_schema,
    is_sqlite,
    make_engine,
    parse_url,
    purge_workflow,
    safe_url,
    scrub,
)
from .errors import is_row_error, is_transient
from .loader import BatchLoader
from .rotate import rotate_sqlite_file

log = structlog.get_logger(__name__)


def sqlite_file(url: URL) -> str | None:
    """The file behind a SQLite URL, or None for in-memory databases."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


class SQLSink:
    """Workflow database sink (``sqlite:///…``, ``postgresql://…``, ``mysql://…``, ``jdbc:…``).

    ``restart`` (replay or recovery, spec 4.7/7.1): a SQLite file is rotated to
    ``<db>.NNN`` before connecting; on other databases the workflow
    ``purge_wf_uuid`` (the root workflow) and its sub-workflows are deleted.
    """

    name = "sql"
    # Per-event Python work: the runner drives it from its own process (sinks/process_worker.py).
    cpu_bound = True

    def __init__(
        self,
        url: str,
        *,
        restart: bool = False,
        purge_wf_uuid: str | None = None,
        pegasus_version: str | None = None,
        engine_kw: dict[str, Any] | None = None,
    ) -> None:
        try:
            self._url = parse_url(url)
        except ArgumentError:
            raise SinkError(f"invalid database URL {safe_url(url)}") from None
        self._restart = restart
        self._purge_uuid = purge_wf_uuid
        self._pegasus_version = pegasus_version
        self._engine_kw = engine_kw or {}
        self._engine: Engine | None = None
        self._loader = BatchLoader()
        self.display_url = safe_url(self._url)

    # --- Sink protocol ---------------------------------------------------

    def open(self) -> None:
        url = self._url
        try:
            if self._restart and is_sqlite(url):
                path = sqlite_file(url)
                if path is not None:
                    rotate_sqlite_file(path)
            self._engine = make_engine(url, **self._engine_kw)
            with self._engine.begin() as conn:
                created = ensure_schema(conn, self._pegasus_version, self.display_url)
                if self._restart and not is_sqlite(url) and not created:
                    if self._purge_uuid is None:
                        log.warning("restart without a workflow to purge", db=self.display_url)
                    else:
                        purge_workflow(conn, self._purge_uuid)
        except SchemaVersionError as exc:
            raise SinkError(f"{self.display_url}: {exc}") from None
        except SQLAlchemyError as exc:
            raise self._error("cannot open database", exc) from None
        except ImportError as exc:
            raise SinkError(f"no database driver for {self.display_url}: {exc}") from None
        except OSError as exc:
            raise SinkError(f"cannot open database {self.display_url}: {exc}") from None
        log.info("database opened", db=self.display_url)

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if not events:
            return
        engine = self._require_engine()
        loader = self._loader
        try:
            try:
                with engine.connect() as conn, conn.begin():
                    loader.load(conn, events)
            except SQLAlchemyError as exc:
                loader.reset()
                if not is_row_error(exc):
                    raise
                log.warning(
                    "batch rejected, retrying row by row",
                    db=self.display_url,
                    error=self._message(exc),
                    events=len(events),
                )
                with engine.connect() as conn, conn.begin():
                    loader.load(conn, events, slow=True)
        except SQLAlchemyError as exc:
            loader.reset()
            raise self._error("database write failed", exc) from None
        except Exception as exc:  # a loader bug must not leave stale ids cached
            loader.reset()
            raise SinkError(f"{self.display_url}: loader failed: {exc!r}") from exc
        loader.committed()

    def flush(self) -> None:
        """Every batch is committed by :meth:`write_batch`; nothing is held back."""

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

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
