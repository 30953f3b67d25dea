"""Stampede events → database rows (behaviour spec 7.2/7.3), one transaction per batch.

Rows whose ids later rows need (workflow, job, job_instance, host, rc_lfn, task)
are inserted as soon as their event is seen and their ids cached by natural key.
Everything else is queued per table and written with ``executemany`` when the
batch ends; ``job_instance`` updates are merged per instance first, so the last
value of each column wins exactly as the reference's successive merges do.

``slow`` mode is the reference's integrity-error fallback: after a rolled-back
batch every statement runs on its own inside a SAVEPOINT, and a row the database
rejects is logged and skipped.  The caches are dropped on every rollback and
refilled from the database on demand, so they never hold ids of rolled-back rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import structlog
from sqlalchemy import Connection, Table, and_, bindparam, select, update
from sqlalchemy.exc import IntegrityError, StatementError

from monitord.core.events import StampedeEvent
from monitord.core.jobmachine import db_state_names

from . import schema as s
from .errors import is_transient
from .rawsql import RawSQL

log = structlog.get_logger(__name__)

Row = dict[str, Any]

# --- value coercions (7.2) -------------------------------------------------


def to_float(value: Any) -> float | None:
    """Timestamps, start times and durations are stored as floats."""
    if value is None or isinstance(value, float):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def to_int(value: Any) -> int | None:
    if value is None or isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return None


def to_bool(value: Any) -> bool:
    """``job.info clustered`` arrives as 0/1 (or a string of it)."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "t", "yes", "y")
    return bool(value)


def escape_argv(value: Any) -> Any:
    """The reference stores argv with ``\\`` doubled and ``'`` as ``\\'``."""
    if value is None:
        return None
    return str(value).replace("\\", "\\\\").replace("'", "\\'")


def _ident(value: Any) -> Any:
    return value


# --- jobstate names (7.3) ----------------------------------------------------

#: event name → (state for status 0 or none, state for a failure status): the inverse of
#: the job state table's ``db`` column.
JOBSTATE_NAMES: dict[str, tuple[str, str]] = db_state_names()

#: Events that have no database effect at all.
IGNORED = frozenset(
    {
        "static.start",
        "static.end",
        "static.meta.start",
        "static.meta.end",
        "inv.start",
        "job_inst.grid.submit.start",
        "job_inst.globus.submit.start",
        "job_inst.composite",
        "task.monitoring",
    }
)


def jobstate_name(event_name: str, status: Any) -> str:
    """The DB state for a ``job_inst.*`` event; unknown kinds give upper-case ``<x>``."""
    names = JOBSTATE_NAMES.get(event_name)
    if names is None:
        return event_name[len("job_inst.") :].upper()
    failed = status is not None and status != 0 and status != "0"
    return names[1] if failed else names[0]


# --- column maps: (wire key, column, coercion) -------------------------------

Conv = Callable[[Any], Any]
ColumnMap = tuple[tuple[str, str, Conv], ...]

WORKFLOW_COLS: ColumnMap = (
    ("xwf.id", "wf_uuid", _ident),
    ("dag.file.name", "dag_file_name", _ident),
    ("ts", "timestamp", to_float),
    ("submit.hostname", "submit_hostname", _ident),
    ("submit.dir", "submit_dir", _ident),
    ("argv", "planner_arguments", escape_argv),
    ("user", "user", _ident),
    ("grid_dn", "grid_dn", _ident),
    ("planner.version", "planner_version", _ident),
    ("dax.label", "dax_label", _ident),
    ("dax.version", "dax_version", _ident),
    ("dax.file", "dax_file", _ident),
)
JOB_COLS: ColumnMap = (
    ("job.id", "exec_job_id", _ident),
    ("submit_file", "submit_file", _ident),
    ("type_desc", "type_desc", _ident),
    ("clustered", "clustered", to_bool),
    ("max_retries", "max_retries", _ident),
    ("executable", "executable", _ident),
    ("argv", "argv", escape_argv),
    ("task_count", "task_count", _ident),
)
TASK_COLS: ColumnMap = (
    ("task.id", "abs_task_id", _ident),
    ("transformation", "transformation", _ident),
    ("argv", "argv", escape_argv),
    ("type_desc", "type_desc", _ident),
)
INVOCATION_COLS: ColumnMap = (
    ("inv.id", "task_submit_seq", _ident),
    ("start_time", "start_time", to_float),
    ("dur", "remote_duration", to_float),
    ("remote_cpu_time", "remote_cpu_time", to_float),
    ("exitcode", "exitcode", _ident),
    ("transformation", "transformation", _ident),
    ("executable", "executable", _ident),
    ("argv", "argv", escape_argv),
    ("task.id", "abs_task_id", _ident),
    ("maxrss", "maxrss", _ident),
    ("avg_cpu", "avg_cpu", to_float),
)
#: ``main.end`` merges these into the job instance, when present in the event.
MAIN_END_COLS: ColumnMap = (
    ("site", "site", _ident),
    ("user", "user", _ident),
    ("work_dir", "work_dir", _ident),
    ("local.dur", "local_duration", to_float),
    ("cluster.start", "cluster_start", to_float),
    ("cluster.dur", "cluster_duration", to_float),
    ("stdin_file", "stdin_file", _ident),
    ("stdout.file", "stdout_file", _ident),
    ("stdout.text", "stdout_text", _ident),
    ("stderr.file", "stderr_file", _ident),
    ("stderr.text", "stderr_text", _ident),
    ("multiplier_factor", "multiplier_factor", _ident),
    ("exitcode", "exitcode", _ident),
    ("sched.id", "sched_id", _ident),
)
POST_END_COLS: ColumnMap = (
    ("exitcode", "exitcode", _ident),
    ("sched.id", "sched_id", _ident),
)


def _row(attrs: dict[str, Any], cols: ColumnMap, out: Row) -> Row:
    for key, col, conv in cols:
        out[col] = conv(attrs.get(key))
    return out


def _required(table: Table) -> tuple[str, ...]:
    auto = table.autoincrement_column
    return tuple(c.name for c in table.c if not c.nullable and c is not auto)


#: Leaf tables written by executemany, with the NOT NULL columns checked first.
LEAF_TABLES: tuple[Table, ...] = (
    s.workflowstate,
    s.workflow_meta,
    s.job_edge,
    s.task_edge,
    s.task_meta,
    s.jobstate,
    s.invocation,
    s.integrity,
    s.tag,
    s.rc_pfn,
    s.workflow_files,
)
#: rc_lfn is global and unbounded; its cache is simply restarted when this big.
LFN_CACHE_MAX = 200_000

REQUIRED: dict[str, tuple[str, ...]] = {t.name: _required(t) for t in s.metadata.sorted_tables}


class WfCache:
    """Ids known for one workflow.  ``complete`` means this loader created the
    workflow row, so a cache miss proves the row is absent from the database."""

    __slots__ = ("wf_id", "uuid", "root_id", "complete", "jobs", "instances", "tasks", "tagged")

    def __init__(self, wf_id: int, uuid: str, root_id: int | None, complete: bool) -> None:
        self.wf_id = wf_id
        self.uuid = uuid
        self.root_id = root_id
        self.complete = complete
        self.jobs: dict[str, int] = {}
        self.instances: dict[tuple[str, int], int] = {}
        self.tasks: dict[str, int] = {}
        self.tagged: set[int] = set()


class BatchLoader:
    """Applies batches of events to an open connection; keeps id caches between batches.

    ``shared`` (database servers): an autocommit connection for the tables every workflow
    shares, ``rc_lfn`` and ``rc_meta``.  The reference commits those rows at once too; here it
    also means that daemons writing other workflows into the same database never wait on (or
    deadlock with) each other's open batch for a file name they have in common, and a retried
    batch finds them already there (get-or-insert, upsert) instead of duplicating them.
    """

    #: set by the sink around :meth:`load`; None: everything in the batch's transaction
    shared: Connection | None = None

    def __init__(self) -> None:
        self._wfs: dict[str, WfCache] = {}
        self._hosts: dict[tuple[Any, ...], int] | None = None
        self._lfns: dict[str, int] = {}
        self._handlers: dict[str, Callable[[StampedeEvent], None]] = {
            "wf.plan": self._wf_plan,
            "xwf.start": self._wf_state,
            "xwf.end": self._wf_state,
            "job.info": self._job_info,
            "job.edge": self._job_edge,
            "task.info": self._task_info,
            "task.edge": self._task_edge,
            "wf.map.task_job": self._map_task_job,
            "xwf.meta": self._xwf_meta,
            "task.meta": self._task_meta,
            "rc.meta": self._rc_meta,
            "rc.pfn": self._rc_pfn,
            "wf.map.file": self._map_file,
            "xwf.map.subwf_job": self._map_subwf_job,
            "job_inst.submit.start": self._instance_start,
            "job_inst.pre.start": self._instance_start,
            "job_inst.main.end": self._instance_end,
            "job_inst.post.end": self._instance_end,
            "job_inst.host.info": self._host_info,
            "job_inst.tag": self._tag,
            "inv.end": self._inv_end,
            "int.metric": self._int_metric,
        }
        self._conn: Connection | None = None
        self._raw = RawSQL()
        self._slow = False
        self._begin_batch()

    # --- batch control ---------------------------------------------------

    def _begin_batch(self) -> None:
        self._rows: dict[str, list[Row]] = {t.name: [] for t in LEAF_TABLES}
        self._ji_updates: dict[int, Row] = {}
        self._host_links: list[Row] = []
        self._task_jobs: list[Row] = []
        self._meta_merges: dict[tuple[int, str], Any] = {}
        self._ended: list[str] = []

    def load(
        self, conn: Connection, events: Iterable[StampedeEvent], *, slow: bool = False
    ) -> None:
        """Apply ``events`` inside the caller's open transaction on ``conn``.

        Database errors propagate (the caller rolls back and calls :meth:`reset`);
        a malformed event is logged and skipped.
        """
        self._conn = conn
        self._slow = slow
        self._begin_batch()
        handlers = self._handlers
        self._raw.open(conn)
        try:
            for ev in events:
                name = ev.name
                handler = handlers.get(name)
                try:
                    if handler is not None:
                        handler(ev)
                    elif name.startswith("job_inst.") and name not in IGNORED:
                        self._jobstate_only(ev)
                except (KeyError, TypeError, ValueError) as exc:
                    log.error("skipping malformed event", kind=name, error=repr(exc))
            if not slow:
                self._write_pending()
        finally:
            self._raw.close()
            self._conn = None

    def committed(self) -> None:
        """Called after the batch committed: drop the caches of workflows that ended."""
        for uuid in self._ended:
            self._wfs.pop(uuid, None)
        self._ended = []

    def reset(self) -> None:
        """Forget every cached id (after a rollback they may point at nothing)."""
        self._wfs.clear()
        self._hosts = None
        self._lfns.clear()
        self._begin_batch()

    # --- low-level writes -------------------------------------------------

    @property
    def conn(self) -> Connection:
        assert self._conn is not None, "loader used outside load()"
        return self._conn

    def _missing(self, table: str, row: Row) -> str | None:
        for col in REQUIRED[table]:
            if row.get(col) is None:
                return col
        return None

    def _queue(self, table: Table, row: Row) -> None:
        col = self._missing(table.name, row)
        if col is not None:
            log.error("rejected row: NOT NULL column is null", table=table.name, column=col)
            return
        if self._slow:
            self._try(table.insert(), row, table.name)
        else:
            self._rows[table.name].append(row)

    def _try(self, stmt: Any, params: Row | list[Row], what: str) -> Any:
        """Slow mode: one statement in a SAVEPOINT; a rejected row is logged, not raised."""
        try:
            with self.conn.begin_nested():
                return self.conn.execute(stmt, params)
        except StatementError as exc:
            if is_transient(exc):
                raise
            log.error("rejected row", table=what, error=str(exc.orig or exc))
            return None

    def _insert_id(self, table: Table, row: Row) -> int | None:
        col = self._missing(table.name, row)
        if col is not None:
            log.error("rejected row: NOT NULL column is null", table=table.name, column=col)
            return None
        if self._slow:
            result = self._try(table.insert(), row, table.name)
            if result is None:
                return None
            return int(result.inserted_primary_key[0])
        return self._raw.insert_id(table, row)

    def _write_pending(self) -> None:
        raw = self._raw
        for table in LEAF_TABLES:
            rows = self._rows[table.name]
            if rows:
                raw.insert_many(table, rows)
        if self._meta_merges:
            merges = self._meta_merges.items()
            self._write_rc_meta([{"lfn_id": k[0], "key": k[1], "value": v} for k, v in merges])
        if self._task_jobs:
            raw.execute_many(raw.prepare("task_job", _TASK_JOB_UPDATE), self._task_jobs)
        groups: dict[tuple[str, ...], list[Row]] = {}
        for ji_id, values in self._ji_updates.items():
            groups.setdefault(tuple(values), []).append({"_ji": ji_id, **values})
        for cols, updates in groups.items():
            raw.execute_many(raw.prepare(("ji", cols), _ji_update(cols)), updates)
        if self._host_links:
            raw.execute_many(raw.prepare("host_link", _HOST_LINK), self._host_links)

    def _write_rc_meta(self, rows: list[Row]) -> None:
        """Merge semantics, portable: delete the keys, then insert the new values."""
        if self.shared is not None:
            self._upsert_rc_meta(rows)
            return
        m = s.rc_meta
        delete_stmt = m.delete().where(
            and_(m.c.lfn_id == bindparam("b_lfn"), m.c.key == bindparam("b_key"))
        )
        keys = [{"b_lfn": r["lfn_id"], "b_key": r["key"]} for r in rows]
        if self._slow:
            for key, row in zip(keys, rows, strict=True):
                with self.conn.begin_nested():
                    self.conn.execute(delete_stmt, key)
                self._try(m.insert(), row, "rc_meta")
        else:
            self.conn.execute(delete_stmt, keys)
            self.conn.execute(m.insert(), rows)

    def _upsert_rc_meta(self, rows: list[Row]) -> None:
        """Merge on the shared connection: one upsert, keys in a fixed order (no deadlocks)."""
        conn = self.shared
        assert conn is not None
        stmt = _rc_meta_upsert(conn.dialect.name)
        rows = sorted(rows, key=lambda r: (r["lfn_id"], r["key"]))
        if not self._slow:
            conn.execute(stmt, rows)
            return
        for row in rows:
            self._shared_try(partial(conn.execute, stmt, row), "rc_meta")

    def _shared_try(self, call: Callable[[], Any], what: str) -> Any:
        """Slow mode on the shared connection: a rejected row is logged, not raised."""
        try:
            return call()
        except StatementError as exc:
            if is_transient(exc):
                raise
            log.error("rejected row", table=what, error=str(exc.orig or exc))
            return None

    def _update_instance(self, ji_id: int, cols: Row) -> None:
        if self._slow:
            self._try(_ji_update(tuple(cols)), {"_ji": ji_id, **cols}, "job_instance")
        else:
            self._ji_updates.setdefault(ji_id, {}).update(cols)

    # --- lookups ----------------------------------------------------------

    def _wf(self, uuid: Any) -> WfCache | None:
        if uuid is None:
            return None
        cached = self._wfs.get(uuid)
        if cached is not None:
            return cached
        w = s.workflow
        row = self.conn.execute(
            select(w.c.wf_id, w.c.root_wf_id).where(w.c.wf_uuid == uuid)
        ).first()
        if row is None:
            return None
        cached = self._wfs[uuid] = WfCache(row[0], uuid, row[1], complete=False)
        return cached

    def _wf_of(self, ev: StampedeEvent) -> WfCache | None:
        wf = self._wf(ev.attrs.get("xwf.id"))
        if wf is None:
            log.error("event for an unknown workflow", kind=ev.name, xwf_id=ev.attrs.get("xwf.id"))
        return wf

    def _job_id(self, wf: WfCache, exec_job_id: str) -> int | None:
        job_id = wf.jobs.get(exec_job_id)
        if job_id is None and not wf.complete:
            j = s.job
            job_id = self.conn.execute(
                select(j.c.job_id).where(j.c.wf_id == wf.wf_id, j.c.exec_job_id == exec_job_id)
            ).scalar()
            if job_id is not None:
                wf.jobs[exec_job_id] = job_id
        return job_id

    def _instance_id(self, wf: WfCache, exec_job_id: str, seq: int) -> int | None:
        key = (exec_job_id, seq)
        ji_id = wf.instances.get(key)
        if ji_id is None and not wf.complete:
            job_id = self._job_id(wf, exec_job_id)
            if job_id is None:
                return None
            ji = s.job_instance
            ji_id = self.conn.execute(
                select(ji.c.job_instance_id).where(
                    ji.c.job_id == job_id, ji.c.job_submit_seq == seq
                )
            ).scalar()
            if ji_id is not None:
                wf.instances[key] = ji_id
        return ji_id

    def _instance_of(self, ev: StampedeEvent) -> tuple[WfCache, int] | None:
        """The workflow and job instance an event is about, or None (logged)."""
        wf = self._wf_of(ev)
        if wf is None:
            return None
        attrs = ev.attrs
        ji_id = self._instance_id(wf, attrs["job.id"], int(attrs["job_inst.id"]))
        if ji_id is None:
            log.error(
                "event for an unknown job instance",
                kind=ev.name,
                xwf_id=wf.uuid,
                job_id=attrs["job.id"],
                job_inst_id=attrs["job_inst.id"],
            )
            return None
        return wf, ji_id

    def _task_id(self, wf: WfCache, abs_task_id: str) -> int | None:
        task_id = wf.tasks.get(abs_task_id)
        if task_id is None and not wf.complete:
            t = s.task
            task_id = self.conn.execute(
                select(t.c.task_id).where(t.c.wf_id == wf.wf_id, t.c.abs_task_id == abs_task_id)
            ).scalar()
            if task_id is not None:
                wf.tasks[abs_task_id] = task_id
        return task_id

    def _lfn_id(self, lfn: str) -> int | None:
        """``rc_lfn`` is global: look the name up across workflows, insert if new."""
        lfn_id = self._lfns.get(lfn)
        if lfn_id is None:
            t = s.rc_lfn
            if self.shared is not None:
                lfn_id = self._shared_lfn_id(lfn)
            else:
                lfn_id = self.conn.execute(select(t.c.lfn_id).where(t.c.lfn == lfn)).scalar()
                if lfn_id is None:
                    lfn_id = self._insert_id(t, {"lfn": lfn})
            if lfn_id is not None:
                if len(self._lfns) >= LFN_CACHE_MAX:
                    self._lfns.clear()
                self._lfns[lfn] = lfn_id
        return lfn_id

    def _shared_lfn_id(self, lfn: str) -> int | None:
        """Get or insert on the shared connection; another daemon may insert it first."""
        conn = self.shared
        assert conn is not None
        t = s.rc_lfn
        find = select(t.c.lfn_id).where(t.c.lfn == lfn)

        def get_or_insert() -> int | None:
            lfn_id = conn.execute(find).scalar()
            if lfn_id is not None:
                return int(lfn_id)
            try:
                key = conn.execute(t.insert(), {"lfn": lfn}).inserted_primary_key
                return None if key is None else int(key[0])
            except IntegrityError:  # inserted meanwhile by another writer: it is committed
                return conn.execute(find).scalar()

        if self._slow:
            return self._shared_try(get_or_insert, "rc_lfn")
        return get_or_insert()

    def _host_id(self, row: Row) -> int | None:
        if self._hosts is None:
            h = s.host
            self._hosts = {
                (r.wf_id, r.site, r.hostname, r.ip): r.host_id
                for r in self.conn.execute(
                    select(h.c.host_id, h.c.wf_id, h.c.site, h.c.hostname, h.c.ip)
                )
            }
        key = (row["wf_id"], row["site"], row["hostname"], row["ip"])
        host_id = self._hosts.get(key)
        if host_id is None:
            host_id = self._insert_id(s.host, row)
            if host_id is not None:
                self._hosts[key] = host_id
        return host_id

    # --- workflow-level events --------------------------------------------

    def _wf_plan(self, ev: StampedeEvent) -> None:
        attrs = ev.attrs
        uuid = attrs["xwf.id"]
        if self._wf(uuid) is not None:
            log.error("duplicate workflow uuid, wf.plan ignored", xwf_id=uuid)
            return
        row = _row(attrs, WORKFLOW_COLS, {})
        parent_uuid = attrs.get("parent.xwf.id")
        parent = self._wf(parent_uuid)
        if parent_uuid is not None and parent is None:
            log.warning("parent workflow not in database", xwf_id=uuid, parent=parent_uuid)
        row["parent_wf_id"] = parent.wf_id if parent else None
        root_uuid = attrs.get("root.xwf.id")
        is_root = root_uuid is None or root_uuid == uuid
        root = None if is_root else self._wf(root_uuid)
        row["root_wf_id"] = root.wf_id if root else None
        wf_id = self._insert_id(s.workflow, row)
        if wf_id is None:
            return
        root_id = root.wf_id if root else None
        if is_root:
            root_id = wf_id
            stmt = update(s.workflow).where(s.workflow.c.wf_id == wf_id).values(root_wf_id=wf_id)
            if self._slow:
                self._try(stmt, {}, "workflow")
            else:
                self.conn.execute(stmt)
        self._wfs[uuid] = WfCache(wf_id, uuid, root_id, complete=True)

    def _wf_state(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        end = ev.name == "xwf.end"
        self._queue(
            s.workflowstate,
            {
                "wf_id": wf.wf_id,
                "state": "WORKFLOW_TERMINATED" if end else "WORKFLOW_STARTED",
                "timestamp": to_float(attrs.get("ts")),
                "restart_count": to_int(attrs.get("restart_count")),
                "status": attrs.get("status") if end else None,
                "reason": attrs.get("reason"),
            },
        )
        if end:
            self._ended.append(wf.uuid)

    def _xwf_meta(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            attrs = ev.attrs
            self._queue(
                s.workflow_meta,
                {"wf_id": wf.wf_id, "key": attrs.get("key"), "value": attrs.get("value")},
            )

    # --- static (planner) events ------------------------------------------

    def _job_info(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        exec_job_id = ev.attrs["job.id"]
        if not wf.complete and self._job_id(wf, exec_job_id) is not None:
            log.error("duplicate job, job.info ignored", xwf_id=wf.uuid, job_id=exec_job_id)
            return
        job_id = self._insert_id(s.job, _row(ev.attrs, JOB_COLS, {"wf_id": wf.wf_id}))
        if job_id is not None:
            wf.jobs[exec_job_id] = job_id

    def _job_edge(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            attrs = ev.attrs
            self._queue(
                s.job_edge,
                {
                    "wf_id": wf.wf_id,
                    "parent_exec_job_id": attrs.get("parent.job.id"),
                    "child_exec_job_id": attrs.get("child.job.id"),
                },
            )

    def _task_info(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        abs_task_id = ev.attrs["task.id"]
        if not wf.complete and self._task_id(wf, abs_task_id) is not None:
            log.error("duplicate task, task.info ignored", xwf_id=wf.uuid, task_id=abs_task_id)
            return
        task_id = self._insert_id(
            s.task, _row(ev.attrs, TASK_COLS, {"wf_id": wf.wf_id, "job_id": None})
        )
        if task_id is not None:
            wf.tasks[abs_task_id] = task_id

    def _task_edge(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            attrs = ev.attrs
            self._queue(
                s.task_edge,
                {
                    "wf_id": wf.wf_id,
                    "parent_abs_task_id": attrs.get("parent.task.id"),
                    "child_abs_task_id": attrs.get("child.task.id"),
                },
            )

    def _map_task_job(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        task_id = self._task_id(wf, attrs["task.id"])
        job_id = self._job_id(wf, attrs["job.id"])
        if task_id is None or job_id is None:
            log.error(
                "wf.map.task_job: task or job not found",
                xwf_id=wf.uuid,
                task_id=attrs["task.id"],
                job_id=attrs["job.id"],
            )
            return
        row = {"_task": task_id, "job_id": job_id}
        if self._slow:
            self._try(_TASK_JOB_UPDATE, row, "task")
        else:
            self._task_jobs.append(row)

    def _task_meta(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        task_id = self._task_id(wf, attrs["task.id"])
        if task_id is None:
            log.error("task.meta for an unknown task", xwf_id=wf.uuid, task_id=attrs["task.id"])
            return
        self._queue(
            s.task_meta, {"task_id": task_id, "key": attrs.get("key"), "value": attrs.get("value")}
        )

    def _rc_meta(self, ev: StampedeEvent) -> None:
        attrs = ev.attrs
        lfn_id = self._lfn_id(attrs["lfn.id"])
        if lfn_id is None:
            return
        row: Row = {"lfn_id": lfn_id, "key": attrs.get("key"), "value": attrs.get("value")}
        col = self._missing("rc_meta", row)
        if col is not None:
            log.error("rejected row: NOT NULL column is null", table="rc_meta", column=col)
        elif self._slow:
            self._write_rc_meta([row])
        else:
            self._meta_merges[(lfn_id, row["key"])] = row["value"]

    def _rc_pfn(self, ev: StampedeEvent) -> None:
        attrs = ev.attrs
        lfn_id = self._lfn_id(attrs["lfn.id"])
        if lfn_id is not None:
            self._queue(
                s.rc_pfn, {"lfn_id": lfn_id, "pfn": attrs.get("pfn"), "site": attrs.get("site")}
            )

    def _map_file(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        task_id = self._task_id(wf, attrs["task.id"])
        if task_id is None:
            log.error("wf.map.file for an unknown task", xwf_id=wf.uuid, task_id=attrs["task.id"])
            return
        lfn_id = self._lfn_id(attrs["lfn.id"])
        if lfn_id is not None:
            self._queue(
                s.workflow_files,
                {"wf_id": wf.wf_id, "task_id": task_id, "lfn_id": lfn_id, "file_type": None},
            )

    def _map_subwf_job(self, ev: StampedeEvent) -> None:
        found = self._instance_of(ev)
        if found is None:
            return
        sub = self._wf(ev.attrs["subwf.id"])
        if sub is None:
            log.error("xwf.map.subwf_job: sub-workflow not found", subwf_id=ev.attrs["subwf.id"])
            return
        self._update_instance(found[1], {"subwf_id": sub.wf_id})

    # --- job instance events ----------------------------------------------

    def _jobstate(self, ev: StampedeEvent, ji_id: int) -> None:
        attrs = ev.attrs
        self._queue(
            s.jobstate,
            {
                "job_instance_id": ji_id,
                "state": jobstate_name(ev.name, attrs.get("status")),
                "timestamp": to_float(attrs.get("ts")),
                "jobstate_submit_seq": attrs.get("js.id"),
                "reason": attrs.get("reason"),
            },
        )

    def _jobstate_only(self, ev: StampedeEvent) -> None:
        found = self._instance_of(ev)
        if found is not None:
            self._jobstate(ev, found[1])

    def _instance_start(self, ev: StampedeEvent) -> None:
        """submit.start / pre.start: create the job instance if it is new."""
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        exec_job_id = attrs["job.id"]
        seq = int(attrs["job_inst.id"])
        ji_id = self._instance_id(wf, exec_job_id, seq)
        if ji_id is None:
            job_id = self._job_id(wf, exec_job_id)
            if job_id is None:
                log.error(
                    "job instance of an unknown job",
                    kind=ev.name,
                    xwf_id=wf.uuid,
                    job_id=exec_job_id,
                )
                return
            row: Row = {
                "job_id": job_id,
                "job_submit_seq": seq,
                "sched_id": attrs.get("sched.id"),
                "multiplier_factor": 1,
            }
            if ev.name == "job_inst.submit.start":
                row["site"] = attrs.get("site")
            ji_id = self._insert_id(s.job_instance, row)
            if ji_id is None:
                return
            wf.instances[(exec_job_id, seq)] = ji_id
        if ev.name == "job_inst.pre.start":
            self._jobstate(ev, ji_id)

    def _instance_end(self, ev: StampedeEvent) -> None:
        """main.end / post.end: merge into the job instance, plus a jobstate row."""
        found = self._instance_of(ev)
        if found is None:
            return
        ji_id = found[1]
        attrs = ev.attrs
        cols_map = MAIN_END_COLS if ev.name == "job_inst.main.end" else POST_END_COLS
        cols = {col: conv(attrs[key]) for key, col, conv in cols_map if key in attrs}
        if cols.get("multiplier_factor", 1) is None:
            del cols["multiplier_factor"]
        if cols:
            self._update_instance(ji_id, cols)
        self._jobstate(ev, ji_id)

    def _host_info(self, ev: StampedeEvent) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        attrs = ev.attrs
        host_id = self._host_id(
            {
                "wf_id": wf.root_id if wf.root_id is not None else wf.wf_id,
                "site": attrs.get("site"),
                "hostname": attrs.get("hostname"),
                "ip": attrs.get("ip"),
                "uname": attrs.get("uname"),
                "total_memory": attrs.get("total_memory"),
            }
        )
        found = self._instance_of(ev)
        if host_id is None or found is None:
            return
        row = {"_ji": found[1], "host_id": host_id}
        if self._slow:
            self._try(_HOST_LINK, row, "job_instance")
        else:
            self._host_links.append(row)

    def _tag(self, ev: StampedeEvent) -> None:
        found = self._instance_of(ev)
        if found is None:
            return
        wf, ji_id = found
        if ji_id in wf.tagged:
            log.error("rejected row: job instance already has a tag", table="tag", ji=ji_id)
            return
        attrs = ev.attrs
        wf.tagged.add(ji_id)
        self._queue(
            s.tag,
            {
                "wf_id": wf.wf_id,
                "job_instance_id": ji_id,
                "name": attrs.get("name"),
                "count": attrs.get("count"),
            },
        )

    def _inv_end(self, ev: StampedeEvent) -> None:
        found = self._instance_of(ev)
        if found is not None:
            wf, ji_id = found
            row = {"wf_id": wf.wf_id, "job_instance_id": ji_id}
            self._queue(s.invocation, _row(ev.attrs, INVOCATION_COLS, row))

    def _int_metric(self, ev: StampedeEvent) -> None:
        found = self._instance_of(ev)
        if found is not None:
            wf, ji_id = found
            attrs = ev.attrs
            self._queue(
                s.integrity,
                {
                    "wf_id": wf.wf_id,
                    "job_instance_id": ji_id,
                    "type": attrs.get("type"),
                    "file_type": attrs.get("file_type"),
                    "count": attrs.get("count"),
                    "duration": to_float(attrs.get("duration")),
                },
            )


# --- prepared statements ------------------------------------------------------

_TASK_JOB_UPDATE = (
    update(s.task).where(s.task.c.task_id == bindparam("_task")).values(job_id=bindparam("job_id"))
)

#: First host per job instance wins, even across sessions.
_HOST_LINK = (
    update(s.job_instance)
    .where(s.job_instance.c.job_instance_id == bindparam("_ji"), s.job_instance.c.host_id.is_(None))
    .values(host_id=bindparam("host_id"))
)


def _rc_meta_upsert(dialect: str) -> Any:
    """``rc_meta`` merge as one statement: the new value replaces the old one."""
    m = s.rc_meta
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        pg = pg_insert(m)
        return pg.on_conflict_do_update(
            index_elements=[m.c.lfn_id, m.c.key], set_={"value": pg.excluded.value}
        )
    if dialect in ("mysql", "mariadb"):
        from sqlalchemy.dialects.mysql import insert as my_insert

        my = my_insert(m)
        return my.on_duplicate_key_update(value=my.inserted.value)
    from sqlalchemy.dialects.sqlite import insert as lite_insert

    lite = lite_insert(m)
    return lite.on_conflict_do_update(
        index_elements=[m.c.lfn_id, m.c.key], set_={"value": lite.excluded.value}
    )


_JI_UPDATES: dict[tuple[str, ...], Any] = {}


def _ji_update(cols: tuple[str, ...]) -> Any:
    stmt = _JI_UPDATES.get(cols)
    if stmt is None:
        ji = s.job_instance
        stmt = _JI_UPDATES[cols] = (
            update(ji)
            .where(ji.c.job_instance_id == bindparam("_ji"))
            .values({c: bindparam(c) for c in cols})
        )
    return stmt
