"""The dashboard's master database (``~/.pegasus/workflow.db``, behaviour doc §7.5).

Only the root workflow is recorded: its ``wf.plan`` becomes a
``master_workflow`` row (with ``db_url``, the workflow's event destination)
and each of its ``xwf.start``/``xwf.end`` a ``master_workflowstate`` row.  On
replay or recovery the workflow's earlier dashboard rows are purged first.
The reference commits after every event; this sink commits once per batch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import structlog
from sqlalchemy import Connection, Engine, delete, insert, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from monitord.core.catalogue import DASHBOARD
from monitord.core.events import EVENT_CLASSES, UNSET, StampedeEvent, WfPlan, XwfEnd, XwfStart
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.factory import SinkRequest

from . import schema as s
from .database import (
    SchemaBusy,
    SchemaVersionError,
    is_sqlite,
    make_engine,
    open_schema,
    parse_url,
    safe_url,
    scrub,
)
from .declared import DASHBOARD_CAPABILITIES
from .errors import is_transient

log = structlog.get_logger(__name__)

# resumes: a service resumed from a snapshot sends a few states again; an exact duplicate
# (same workflow, state and time: the table's unique key) is skipped, not an error
#: The kinds the dashboard records (the catalogue's ``dashboard`` flag), by class.
_KINDS = frozenset(EVENT_CLASSES[name] for name in DASHBOARD)


def _v(value: Any) -> Any:
    """A field's value for a column: an unset attribute is NULL."""
    return None if value is UNSET else value


def default_dashboard_url(home: str | None = None) -> str:
    home = home or os.path.expanduser("~")
    return f"sqlite:///{os.path.join(home, '.pegasus', 'workflow.db')}"


#: seconds a dashboard writer queues for the shared SQLite file's lock before it is an outage
#: (every daemon of the user writes it; each holds it for a few milliseconds at a time)
DASHBOARD_BUSY_TIMEOUT = 60.0


def dashboard_engine_kw(url: URL) -> dict[str, Any]:
    """SQLite: every transaction takes the write lock at BEGIN and queues for it (many writers)."""
    if not is_sqlite(url):
        return {}
    return {"sqlite_begin": "IMMEDIATE", "connect_args": {"timeout": DASHBOARD_BUSY_TIMEOUT}}


def prepare_sqlite_file(path: str) -> bool:
    """Create the directory (0755) and the file (0600) like the reference; False if not writable."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, mode=0o755, exist_ok=True)
        if not os.path.exists(path):
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    except OSError:
        return False
    return os.access(directory, os.W_OK) and os.access(path, os.W_OK)


class DashboardSink:
    name = "dashboard"
    capabilities = DASHBOARD_CAPABILITIES

    def __init__(
        self,
        url: str,
        *,
        root_wf_uuid: str,
        db_url: str,
        restart: bool = False,
        pegasus_version: str | None = None,
    ) -> None:
        self._url = parse_url(url)
        self._root = root_wf_uuid
        self._db_url = db_url
        self._restart = restart
        self._pegasus_version = pegasus_version
        self._engine: Engine | None = None
        self._wf_id: int | None = None
        self.display_url = safe_url(self._url)

    @classmethod
    def from_request(cls, request: SinkRequest) -> DashboardSink:
        """The master database ``request.dest`` for its root workflow (``root_wf_uuid``),
        whose events go to ``db_url`` (both there: the factory's ``check``)."""
        assert request.root_wf_uuid is not None and request.db_url is not None
        return cls(
            request.dest,
            root_wf_uuid=request.root_wf_uuid,
            db_url=request.db_url,
            restart=request.restart,
            pegasus_version=request.pegasus_version,
        )

    @property
    def destination(self) -> str:
        """Where it writes, for people (``SinkHealth.destination``): the URL, no password."""
        return self.display_url

    @property
    def lane_key(self) -> str:
        """One master DB per user, written by many workflows: one lane, so no lock fights."""
        return f"dashboard:{self.display_url}"

    def use_shared(self, shared: SharedResources) -> None:
        """Nothing to share: the master DB's engine is its own."""

    def open(self) -> None:
        if is_sqlite(self._url) and self._url.database:
            if not prepare_sqlite_file(self._url.database):
                raise SinkError(f"dashboard database {self.display_url} is not writable")
        try:
            if self._engine is None:
                self._engine = make_engine(self._url, **dashboard_engine_kw(self._url))
            open_schema(self._engine, self._pegasus_version, self.display_url, self._purge)
        except SchemaVersionError as exc:
            raise SinkError(
                f"dashboard {self.display_url}: {exc}", retryable=isinstance(exc, SchemaBusy)
            ) from None
        except SQLAlchemyError as exc:
            # a locked database (or a server's lock wait) is an outage: retried, never disabled
            raise SinkError(
                f"dashboard {self.display_url}: {scrub(str(exc), self._url)}",
                retryable=is_transient(exc),
            ) from None

    def _purge(self, conn: Connection, _created: bool) -> None:
        if self._restart:
            conn.execute(delete(s.master_workflow).where(s.master_workflow.c.wf_uuid == self._root))

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        mine = [e for e in events if type(e) in _KINDS and e.xwf_id == self._root]
        if not mine or self._engine is None:
            return
        try:
            with self._engine.begin() as conn:
                for event in mine:
                    if isinstance(event, WfPlan):
                        self._plan(conn, event)
                    elif isinstance(event, XwfStart | XwfEnd):
                        self._state(conn, event)
        except SQLAlchemyError as exc:
            raise SinkError(
                f"dashboard {self.display_url}: {scrub(str(exc), self._url)}",
                retryable=is_transient(exc),
            ) from None

    def _plan(self, conn: Any, plan: WfPlan) -> None:
        existing = conn.execute(
            select(s.master_workflow.c.wf_id).where(s.master_workflow.c.wf_uuid == self._root)
        ).scalar()
        if existing is not None:
            log.error("dashboard already has this workflow, row kept", wf_uuid=self._root)
            self._wf_id = existing
            return
        ts = _v(plan.ts)
        row = {
            "wf_uuid": self._root,
            "dax_label": _v(plan.dax_label),
            "dax_version": _v(plan.dax_version),
            "dax_file": _v(plan.dax_file),
            "dag_file_name": _v(plan.dag_file_name),
            "timestamp": float(ts) if ts is not None else None,
            "submit_hostname": _v(plan.submit_hostname),
            "submit_dir": _v(plan.submit_dir),
            "user": _v(plan.user),
            "grid_dn": _v(plan.grid_dn),
            "planner_version": _v(plan.planner_version),
            "db_url": self._db_url,
            "archived": False,
        }
        self._wf_id = conn.execute(insert(s.master_workflow).values(**row)).inserted_primary_key[0]

    def _state(self, conn: Any, event: XwfStart | XwfEnd) -> None:
        if self._wf_id is None:
            self._wf_id = conn.execute(
                select(s.master_workflow.c.wf_id).where(s.master_workflow.c.wf_uuid == self._root)
            ).scalar()
            if self._wf_id is None:
                log.warning(
                    "dashboard state for a workflow without its plan row", wf_uuid=self._root
                )
                return
        t = s.master_workflowstate
        end = isinstance(event, XwfEnd)
        state = "WORKFLOW_TERMINATED" if end else "WORKFLOW_STARTED"
        ts = float(event.ts)
        held = select(t.c.wf_id).where(
            t.c.wf_id == self._wf_id, t.c.state == state, t.c.timestamp == ts
        )
        if conn.execute(held).first() is not None:
            return  # sent again by a daemon resumed after a crash
        conn.execute(
            insert(t).values(
                wf_id=self._wf_id,
                state=state,
                timestamp=ts,
                restart_count=int(event.restart_count),
                status=_v(event.status) if isinstance(event, XwfEnd) else None,
                reason=_v(event.reason),
            )
        )

    def flush(self) -> None:
        """Every batch is already committed."""

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
