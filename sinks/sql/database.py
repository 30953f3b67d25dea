"""Connecting to a Stampede database: URL rules, engine set-up, creation, versioning, purge.

Everything here runs once per sink (at open, or at a replay purge), never per
event.  Passwords never reach a log line or an exception message: URLs are
rendered with :func:`safe_url` and driver errors are scrubbed by :func:`scrub`.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import structlog
from sqlalchemy import Connection, Engine, create_engine, delete, event, inspect, select, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from monitord.system.secrets import mask_secret

from . import schema as s
from .schema_ddl import create_all

log = structlog.get_logger(__name__)


class SchemaVersionError(RuntimeError):
    """The database carries a schema version this loader cannot work with."""


def normalise_url(url: str) -> str:
    """Apply the ``jdbc:`` rule of the reference: drop the prefix, ``sqlite:`` → ``sqlite:///``."""
    url = url.strip()
    if url.startswith("jdbc:"):
        url = url[len("jdbc:") :]
        if url.startswith("sqlite:") and not url.startswith("sqlite://"):
            url = "sqlite:///" + url[len("sqlite:") :]
    return url


def parse_url(url: str) -> URL:
    """Parse a (possibly ``jdbc:``) database URL; a bare scheme gets an installed driver.

    ``postgres://`` (accepted by the reference's SQLAlchemy 1.3, refused by 2.x) means
    ``postgresql://``; ``mysql://`` / ``postgresql://`` get the driver we ship when
    SQLAlchemy's own default is not installed.
    """
    parsed = make_url(normalise_url(url))
    backend, plus, driver = parsed.drivername.partition("+")
    if backend == "postgres":
        parsed = parsed.set(drivername="postgresql" + plus + driver)
    for default, alternatives in _DRIVERS.items():
        if parsed.drivername != default:
            continue
        for module, driver in alternatives:
            if importlib.util.find_spec(module) is not None:
                return parsed.set(drivername=driver)
    return parsed


#: bare scheme → (module, driver name) in order of preference; SQLAlchemy's own
#: default comes first so that an installed default is always used.
_DRIVERS = {
    "mysql": (("MySQLdb", "mysql+mysqldb"), ("pymysql", "mysql+pymysql")),
    "mariadb": (("MySQLdb", "mariadb+mysqldb"), ("pymysql", "mariadb+pymysql")),
    "postgresql": (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2")),
}


def connect_timeout_args(url: str, timeout: str) -> dict[str, Any] | None:
    """Engine options for an endpoint's ``timeout`` property: the driver's connect timeout.

    Seconds; SQLite takes it as its busy timeout (as the reference passes it). A value that is
    not a number is ignored with a warning.
    """
    try:
        seconds = float(timeout)
    except ValueError:
        log.warning("endpoint timeout is not a number, ignored", timeout=timeout)
        return None
    try:
        backend = parse_url(url).get_backend_name()
    except Exception:  # the sink itself reports a bad URL
        return None
    if backend == "sqlite":
        return {"connect_args": {"timeout": seconds}}
    return {"connect_args": {"connect_timeout": max(1, int(seconds))}}


def safe_url(url: URL | str) -> str:
    """The URL as it may appear in logs: password masked."""
    if isinstance(url, str):
        try:
            url = make_url(normalise_url(url))
        except Exception:  # an unparseable URL cannot be shown safely
            return "<unparseable database URL>"
    return url.render_as_string(hide_password=True)


def scrub(message: str, url: URL) -> str:
    """Remove the password of ``url`` from a driver's message, should it echo it."""
    return mask_secret(message, str(url.password) if url.password else None)


def is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def make_engine(
    url: URL,
    *,
    sqlite_begin: str = "DEFERRED",
    sqlite_synchronous: str | None = None,
    sqlite_journal: str | None = None,
    **engine_kw: Any,
) -> Engine:
    """An engine with the per-backend settings the loader relies on.

    SQLite: foreign keys ON (cascades and SET NULL depend on it), and explicit
    ``BEGIN`` so that SAVEPOINTs used for row-by-row retries work under pysqlite
    (``sqlite_begin="IMMEDIATE"``: every transaction takes the write lock at once, see
    :data:`SQLITE_BEGIN`); ``sqlite_synchronous``: its ``PRAGMA synchronous`` (default: SQLite's,
    FULL); ``sqlite_journal``: its ``PRAGMA journal_mode`` (default: SQLite's, DELETE; see
    :func:`end_persisted_journal`).  MySQL: utf8mb4 connection charset.
    """
    kwargs: dict[str, Any] = {}
    backend = url.get_backend_name()
    if backend == "mysql":
        query = dict(url.query)
        query.setdefault("charset", "utf8mb4")
        url = url.set(query=query)
        kwargs["pool_recycle"] = 3600
    if backend != "sqlite":
        kwargs["pool_pre_ping"] = True
    kwargs.update(engine_kw)
    engine = create_engine(url, **kwargs)
    if backend == "sqlite":
        _sqlite_pragmas(engine, sqlite_begin, sqlite_synchronous, sqlite_journal)
    return engine


_SYNCHRONOUS = frozenset({"OFF", "NORMAL", "FULL", "EXTRA"})
#: rollback journals only: each keeps a killed writer's transaction undone at the next open
_JOURNALS = frozenset({"DELETE", "TRUNCATE", "PERSIST"})


def _sqlite_pragmas(
    engine: Engine, begin: str, synchronous: str | None, journal: str | None
) -> None:
    if synchronous is not None and synchronous not in _SYNCHRONOUS:
        raise ValueError(f"PRAGMA synchronous={synchronous!r}")
    if journal is not None and journal not in _JOURNALS:
        raise ValueError(f"PRAGMA journal_mode={journal!r}")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        if synchronous is not None:
            cur.execute(f"PRAGMA synchronous={synchronous}")
        if journal is not None:
            cur.execute(f"PRAGMA journal_mode={journal}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(SQLITE_BEGIN, begin)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if mode == "IMMEDIATE" else "BEGIN")


def end_persisted_journal(engine: Engine) -> None:
    """Remove the ``-journal`` file a ``PERSIST`` journal leaves beside the database (SQLite
    deletes it as the mode becomes DELETE again): the file is left as the default mode would
    leave it.  Not done (logged) when the database cannot be reached; the journal left is a
    cold one (its header zeroed at the last commit), which SQLite ignores and rotation moves."""
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA journal_mode=DELETE")
    except SQLAlchemyError as exc:
        log.warning("cannot remove the SQLite journal file", error=type(exc).__name__)


#: execution option: ``"IMMEDIATE"`` makes a SQLite transaction take the write lock at BEGIN.
#: A deferred transaction that reads, then writes, is refused at once (SQLITE_BUSY, no busy
#: wait: waiting could deadlock) when another writer holds the lock; an immediate one queues
#: for it under the busy timeout.  Readers are not blocked any longer by it: the lock taken
#: (RESERVED) lets them read until the commit, as a deferred writer's does.
SQLITE_BEGIN = "monitord_sqlite_begin"


@contextmanager
def write_transaction(conn: Connection) -> Iterator[Connection]:
    """A transaction on ``conn`` that writes.  On SQLite it takes the write lock at BEGIN,
    queueing for it under the busy timeout: a deferred one that read first is refused at once
    while another daemon writes the same file."""
    if conn.dialect.name == "sqlite":
        conn.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
    with conn.begin():
        yield conn


#: advisory lock key / name under which schema creation and purges are serialised
SCHEMA_LOCK_KEY = 0x6D6F6E69746F7264 & 0x7FFFFFFFFFFFFFFF
SCHEMA_LOCK_NAME = "pegasus.monitord.schema"


class SchemaBusy(SchemaVersionError):
    """The schema is being created or changed by another process: retryable, never a refusal."""


class SchemaLockTimeout(SchemaBusy):
    """Another daemon held the schema lock for longer than we wait."""


class SchemaIncomplete(SchemaBusy):
    """Tables without their ``dbversion`` row: a creation not yet committed (MariaDB commits
    each CREATE TABLE at once), by a process that does not take our lock."""


#: how long opening waits for a schema another process is still creating (then: retryable)
SCHEMA_WAIT = 60.0


@contextmanager
def schema_transaction(engine: Engine, timeout: int = 300) -> Iterator[Connection]:
    """A transaction that creates or checks the schema, serialised between daemons, committed
    before the next daemon may look.

    Without the lock, two daemons both find an empty database and both run CREATE TABLE, and one
    fails; with a lock released before the commit, the next daemon sees the tables (DDL commits
    at once in MariaDB) without the ``dbversion`` row.  PostgreSQL: a transaction-level advisory
    lock (released by the commit itself); MySQL/MariaDB: a session lock taken before the
    transaction begins and released after it is committed (or rolled back); SQLite: the write
    lock taken at BEGIN (``BEGIN IMMEDIATE``), held until the commit.
    """
    with engine.connect() as conn:
        backend = conn.dialect.name
        if backend == "sqlite":
            with write_transaction(conn):
                yield conn
            return
        if backend == "postgresql":
            with conn.begin():
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
                yield conn
            return
        if backend not in ("mysql", "mariadb"):
            with conn.begin():
                yield conn
            return
        got = conn.execute(
            text("SELECT GET_LOCK(:name, :timeout)"), {"name": SCHEMA_LOCK_NAME, "timeout": timeout}
        ).scalar()
        conn.commit()  # the lock is the session's: the creation gets a transaction of its own
        if got != 1:
            raise SchemaLockTimeout(f"could not get the schema lock within {timeout} s")
        try:
            with conn.begin():
                yield conn
        finally:
            _release_lock(conn)


def _release_lock(conn: Connection) -> None:
    """Release the MySQL session lock; a connection that cannot is closed (which releases it)."""
    try:
        conn.execute(text("SELECT RELEASE_LOCK(:name)"), {"name": SCHEMA_LOCK_NAME})
        conn.commit()
    except SQLAlchemyError:
        conn.invalidate()


def ensure_schema(
    conn: Connection,
    pegasus_version: str | None = None,
    display_url: str = "",
    complete: bool = False,
) -> bool:
    """Create the schema on an empty database, or check the version of an existing one.

    Returns True when the database was created.  Versions other than 14 raise
    :class:`SchemaVersionError`: older ones need the reference's migration chain,
    which this loader does not carry.  Tables without their version row raise
    :class:`SchemaIncomplete` (a creation in progress), unless ``complete``: the caller
    waited long enough that it was interrupted, and it is finished here.
    """
    insp = inspect(conn)
    tables = set(insp.get_table_names())
    if "dbversion" in tables:
        version = conn.execute(
            select(s.dbversion.c.version_number).order_by(s.dbversion.c.id.desc()).limit(1)
        ).scalar()
        if version is None:
            if not complete:
                raise SchemaIncomplete("database is being created: dbversion has no row yet")
            return _complete_interrupted(conn, tables, display_url)
        if version != s.DB_VERSION:
            raise SchemaVersionError(
                f"database schema version {version} is not {s.DB_VERSION}; "
                "upgrade it with pegasus-db-admin first"
            )
        missing = [t for t in s.metadata.sorted_tables if t.name not in tables]
        if missing:
            s.metadata.create_all(conn, tables=missing)
        return False
    if "workflow" in tables:
        if not complete:
            raise SchemaIncomplete(
                "database is being created: Stampede tables but no dbversion yet"
            )
        return _complete_interrupted(conn, tables, display_url)
    create_all(conn, tables)  # SQLite: the kept statements (sinks/sql/schema_ddl.py)
    _insert_version(conn)
    log.info("Pegasus database was successfully created.")
    log.info(f"Database version: '{pegasus_version or s.DB_VERSION}' ({display_url})")
    return True


def _insert_version(conn: Connection) -> None:
    conn.execute(
        s.dbversion.insert().values(
            version_number=s.DB_VERSION,
            version=str(s.DB_VERSION),
            version_timestamp=int(time.time()),
        )
    )


def _complete_interrupted(conn: Connection, tables: set[str], display_url: str) -> bool:
    """Finish a creation that stopped between its tables and its version row.

    MariaDB commits each CREATE TABLE at once, so a creator killed mid-way (or one without our
    lock that died) leaves tables and no ``dbversion`` row; nobody else holds the schema lock
    and nothing changed during the wait, so waiting longer would only spool forever.
    """
    missing = [t for t in s.metadata.sorted_tables if t.name not in tables]
    log.warning(
        "database schema was left incomplete (tables without a version row: an interrupted "
        "creation); completing it",
        url=display_url,
        missing_tables=len(missing),
    )
    if missing:
        s.metadata.create_all(conn, tables=missing)
    _insert_version(conn)
    return False


def open_schema(
    engine: Engine,
    pegasus_version: str | None = None,
    display_url: str = "",
    then: Callable[[Connection, bool], None] | None = None,
    wait: float | None = None,
) -> bool:
    """:func:`ensure_schema` (then ``then(conn, created)``) in one :func:`schema_transaction`.

    A schema another process is still creating is waited for (``wait`` seconds, default
    :data:`SCHEMA_WAIT`; re-checked in a new transaction, under the lock).  One still
    incomplete after the wait was interrupted: the last check completes it.
    """
    deadline = time.monotonic() + (SCHEMA_WAIT if wait is None else wait)
    while True:
        last = time.monotonic() >= deadline
        try:
            with schema_transaction(engine) as conn:
                created = ensure_schema(conn, pegasus_version, display_url, complete=last)
                if then is not None:
                    then(conn, created)
                return created
        except SchemaIncomplete:
            time.sleep(0.5)


def purge_workflow(conn: Connection, wf_uuid: str) -> bool:
    """Delete a workflow and everything hanging off it (replay on a non-SQLite DB).

    The ``rc_lfn`` rows referenced from the files of the workflow and of every
    workflow rooted at it go first (PM-1218; cascades take ``rc_pfn``,
    ``rc_meta``); deleting the workflow row then cascades to all its rows and to
    its sub-workflows.  Returns False when the workflow is not in the database.
    """
    wf = s.workflow
    wf_id = conn.execute(select(wf.c.wf_id).where(wf.c.wf_uuid == wf_uuid)).scalar()
    if wf_id is None:
        return False
    family = select(wf.c.wf_id).where(wf.c.root_wf_id == wf_id)
    files = s.workflow_files
    # materialised first: MySQL refuses a subquery on a table the cascade modifies
    lfn_ids = list(
        conn.execute(
            select(files.c.lfn_id)
            .where((files.c.wf_id == wf_id) | files.c.wf_id.in_(family))
            .distinct()
        ).scalars()
    )
    for start in range(0, len(lfn_ids), 500):
        chunk = lfn_ids[start : start + 500]
        conn.execute(delete(s.rc_lfn).where(s.rc_lfn.c.lfn_id.in_(chunk)))
    conn.execute(delete(wf).where(wf.c.wf_id == wf_id))
    log.info("purged workflow from database", wf_uuid=wf_uuid)
    return True
