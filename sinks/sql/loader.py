"""Stampede events → database rows (behaviour spec 7.2/7.3), one transaction per batch.

Rows whose ids later rows need (workflow, job, job_instance, host, rc_lfn, task)
get their id as soon as their event is seen, cached by natural key: inserted at once, or
on SQLite (job, task, job_instance) numbered by the loader and queued (``RowStore._new_id``).
Everything else is queued per table and written with ``executemany`` when the
batch ends; ``job_instance`` updates are merged per instance first, so the last
value of each column wins exactly as the reference's successive merges do.

The replica tables are keyed by file, not by workflow: rows other workflows wrote are
expected, so they are written idempotently in the batch (get-or-insert of ``rc_lfn``,
upsert of ``rc_meta``, insert-if-new of ``rc_pfn``) and never make it fail.

``slow`` mode is the reference's integrity-error fallback, for what is truly unexpected:
after a rolled-back batch every statement runs on its own inside a SAVEPOINT, and a row
the database rejects is skipped and counted in ``rejected`` (the sink logs one line per
batch).  The caches are dropped on every rollback and refilled from the database on
demand, so they never hold ids of rolled-back rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import structlog
from sqlalchemy import Connection, text, update

from monitord.core.catalogue import CATALOGUE, NO_ROWS, EventSpec
from monitord.core.events import (
    EVENT_CLASSES,
    UNSET,
    GenericEvent,
    JobInfo,
    JobInstMainEnd,
    JobInstPreStart,
    JobInstSubmitStart,
    StampedeEvent,
    TaskInfo,
    XwfEnd,
)
from monitord.core.jobmachine import db_state_names
from sinks.runtime.views import kinds, with_views

from . import schema as s
from .columns import (
    INVOCATION_COLS,
    JOB_COLS,
    MAIN_END_COLS,
    NUMBERED_COLUMNS,
    POST_END_COLS,
    REQUIRED_AT,
    TASK_COLS,
    WORKFLOW_COLS,
    Row,
    _row,
    changes_of,
    to_float,
    to_int,
    values_of,
)
from .rowstore import (
    _HOST_LINK,
    _JOBS_AHEAD,
    _TASK_JOB_UPDATE,
    _TASKS_AHEAD,
    LfnFetch,
    RowStore,
    WfCache,
)

log = structlog.get_logger(__name__)


#: events whose id-returning rows :meth:`BatchLoader._ids_ahead` inserts up front: table,
#: columns, natural key and the workflow cache that maps it to the id
#: (and their views: :mod:`sinks.runtime.views`, as every table here keyed by event class)
_AHEAD: dict[type, tuple[Any, Any, str, str]] = with_views(
    {
        JobInfo: (s.job, JOB_COLS, "exec_job_id", "jobs"),
        TaskInfo: (s.task, TASK_COLS, "abs_task_id", "tasks"),
    }
)
#: loader functions (``EventSpec.loader``) whose rows name a file (``lfn_id``), a task
#: (``task_id``) and a job (``job_id``) to look up: what :meth:`BatchLoader._lookups_ahead`
#: reads for a batch at once
_LOOKUPS: dict[str, tuple[bool, bool, bool]] = {
    "rc_meta": (True, False, False),
    "rc_pfn": (True, False, False),
    "map_file": (True, True, False),
    "map_task_job": (False, True, True),
    "task_meta": (False, True, False),
    "instance_start": (False, False, True),
}
_AHEAD_EXTRA: dict[str, Row] = {"job": {}, "task": {"job_id": None}}
_INVOCATION_VALUES = values_of(INVOCATION_COLS)
_JOB_VALUES = values_of(JOB_COLS)
_TASK_VALUES = values_of(TASK_COLS)
_MAIN_END_CHANGES = changes_of(MAIN_END_COLS)
_POST_END_CHANGES = changes_of(POST_END_COLS)

# --- jobstate names (7.3) ----------------------------------------------------

#: event name → (state for status 0 or none, state for a failure status): the inverse of
#: the job state table's ``db`` column.
JOBSTATE_NAMES: dict[str, tuple[str, str]] = db_state_names()


def jobstate_name(event_name: str, status: Any) -> str:
    """The DB state for a ``job_inst.*`` event; unknown kinds give upper-case ``<x>``."""
    names = JOBSTATE_NAMES.get(event_name)
    if names is None:
        return event_name[len("job_inst.") :].upper()
    failed = status is not None and status != 0 and status != "0"
    return names[1] if failed else names[0]


def _jobstate_shape(cls: type[StampedeEvent]) -> tuple[tuple[str, str], bool, bool]:
    """A ``job_inst.*`` class's states (ok, failed) and whether it has status and reason."""
    name = cls.name
    names = JOBSTATE_NAMES.get(name)
    if names is None:
        upper = name[len("job_inst.") :].upper()
        names = (upper, upper)
    return names, "status" in cls.fields, "reason" in cls.fields


def _v(value: Any) -> Any:
    """A field's value for a column: an unset attribute is NULL."""
    return None if value is UNSET else value


Handler = Callable[["BatchLoader", Any], None]


def dispatch_errors(catalogue: Iterable[EventSpec] = CATALOGUE) -> list[str]:
    """Catalogue entries whose ``loader`` names no function of the loader's table."""
    return [
        f"{spec.name}: no loader function _{spec.loader}"
        for spec in catalogue
        if spec.loader and spec.loader not in LOADERS
    ]


class BatchLoader(RowStore):
    """Applies batches of events to an open connection; keeps id caches between batches.

    ``shared`` (database servers): an autocommit connection for the tables every workflow
    shares, ``rc_lfn``, ``rc_meta`` and ``rc_pfn``.  The reference commits the first two at
    once too; here it also means that daemons writing other workflows into the same database
    never wait on (or deadlock with) each other's open batch for a file name they have in
    common, and a retried batch finds them already there (get-or-insert, upsert,
    insert-if-new) instead of duplicating them.
    """

    #: PostgreSQL: the batch's ``task.info`` events whose workflow was not cached when it
    #: began -> their place in it, and the batch (:meth:`_tasks_from`)
    _later_tasks: dict[int, int]
    _events: Sequence[StampedeEvent] = ()

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
        self._later_tasks = {}
        self._numbering = not slow and self.shared is None and conn.dialect.name == "sqlite"
        handlers = _HANDLERS
        self._raw.open(conn)
        try:
            if not slow:
                events = events if isinstance(events, Sequence) else list(events)
                self._lookups_ahead(events)
                events = self._ids_ahead(events)
            for ev in events:
                handler = handlers.get(type(ev))
                try:
                    if handler is not None:
                        handler(self, ev)
                    elif type(ev) is GenericEvent and ev.name.startswith("job_inst."):
                        self._jobstate_only(ev)
                except (KeyError, TypeError, ValueError) as exc:
                    log.error("skipping malformed event", kind=ev.name, error=repr(exc))
            if not slow:
                self._write_pending()
        finally:
            self._raw.close()
            self._conn = None
            self._later_tasks, self._events = {}, ()

    def _lookups_ahead(self, events: Sequence[StampedeEvent]) -> None:
        """The batch's file names (SQLite and PostgreSQL), and on SQLite its tasks and jobs
        the cache may not hold, looked up in a few statements before its events
        (:meth:`RowStore._lfns_ahead`, :meth:`RowStore._wf_ids_ahead`), not one per name,
        task or job."""
        if self._numbering:
            fetch: LfnFetch = self._sqlite_lfns
        elif self.conn.dialect.driver == "psycopg2":
            fetch = self._pg_lfns
        else:
            return
        names: set[Any] = set()
        tasks: dict[Any, set[Any]] = {}
        jobs: dict[Any, set[Any]] = {}
        refs = _REFS
        for ev in events:
            ref = refs.get(type(ev))
            if ref is not None:
                lfn, task, job = ref
                if lfn:
                    names.add(ev.lfn_id)  # type: ignore[attr-defined]
                if task:
                    found = tasks.get(ev.xwf_id)
                    if found is None:
                        found = tasks[ev.xwf_id] = set()
                    found.add(ev.task_id)  # type: ignore[attr-defined]
                if job:
                    found = jobs.get(ev.xwf_id)
                    if found is None:
                        found = jobs[ev.xwf_id] = set()
                    found.add(ev.job_id)  # type: ignore[attr-defined]
        if names:
            self._lfns_ahead(names, fetch)
        if not self._numbering:
            return
        for kind, wanted in ((_TASKS_AHEAD, tasks), (_JOBS_AHEAD, jobs)):
            for uuid, ids in wanted.items():
                wf = self._wfs.get(uuid)
                if wf is not None:
                    self._wf_ids_ahead(wf, kind, ids)

    def _pg_lfns(self, wanted: list[str]) -> Iterable[tuple[str, int]]:
        """PostgreSQL: ``wanted`` got or inserted in one statement (was a SELECT and an
        INSERT per new name: ~96 round trips per 1,000 events of a planned part,
        bench/README.md ingest30c), on the shared autocommit connection when there is one
        (as ``_lfn_id``)."""
        conn = self.shared if self.shared is not None else self.conn
        return conn.execute(_LFNS_GET_OR_INSERT, {"names": wanted})  # type: ignore[return-value]

    def _ids_ahead(self, events: Iterable[StampedeEvent]) -> Sequence[StampedeEvent]:
        """PostgreSQL: the ``job.info`` and ``task.info`` rows of the batch's workflows that
        this loader created (``complete``: no duplicate to look for) inserted up front, one
        statement per table; each handler then takes its row's id (``_ahead``) at the
        event's place in the batch.  A workflow's planned part was ~330 single-row round
        trips per 1,000 events (bench/README.md, ingest).  Anything unusual (a key seen twice
        or already cached, a malformed or incomplete row) is left to the handler."""
        events = events if isinstance(events, Sequence) else list(events)
        if self.conn.dialect.driver != "psycopg2":
            return events
        groups: dict[tuple[type[StampedeEvent], int], list[tuple[int, Any, Row]]] = {}
        later = self._later_tasks
        for at, ev in enumerate(events):
            spec = _AHEAD.get(type(ev))
            if spec is None:
                continue
            wf = self._wfs.get(ev.xwf_id)
            if wf is None and type(ev) in _TASK_INFOS:
                later[id(ev)] = at  # (its workflow may be planned earlier in the batch)
                continue
            if wf is None or not wf.complete:
                continue
            table, cols, key, _ = spec
            try:
                row = _row(ev, cols, {"wf_id": wf.wf_id} | _AHEAD_EXTRA[table.name])
            except (KeyError, TypeError, ValueError):
                continue
            if self._missing(table.name, row) is None:
                groups.setdefault((type(ev), wf.wf_id), []).append((id(ev), wf, row))
        for (kind, _), rows in groups.items():
            table, _, key, cache = _AHEAD[kind]
            keys = [r[key] for _, _, r in rows]
            known = getattr(rows[0][1], cache)
            if (
                len(rows) < 2
                or len(set(keys)) < len(keys)
                or known.dropped  # a key may be in the database, not in the cache
                or any(k in known for k in keys)
            ):
                continue
            ids = self._raw.insert_ids(table, [r for _, _, r in rows], key)
            for (event_id, _, _), k in zip(rows, keys, strict=True):
                self._ahead[event_id] = ids[k]
        self._instances_ahead(events)
        if later:
            self._events = events
        return events

    def _tasks_from(self, at: int) -> None:
        """PostgreSQL: the ``task.info`` rows from the batch's ``at``-th event on (one whose
        workflow was not cached when the batch began: planned in it) inserted in one
        statement, when its handler comes to it, the workflow's row now there (was an ``INSERT
        .. RETURNING`` each: 861 for ingest30h's stream).  Only those before the first one
        whose outcome is not certain here (its workflow not created by this loader or not yet
        planned, its cache trimmed, a key seen before, a malformed or incomplete row): they
        get their ids in event order, as one insert each gave them, and that one and those
        after it are left to their handlers, in order.  A row inserted ahead is not in the
        workflow's cache until its handler puts it there, and a created workflow's untrimmed
        cache is all a lookup reads: an event in between sees what it saw before."""
        rows: list[Row] = []
        firsts: list[tuple[int, tuple[int, Any]]] = []
        seen: set[tuple[int, Any]] = set()
        ahead = self._ahead
        for ev in itertools.islice(self._events, at, None):
            if type(ev) not in _TASK_INFOS or id(ev) in ahead:
                continue  # (another kind, or a row inserted when the batch began)
            wf = self._wfs.get(ev.xwf_id)
            if wf is None or not wf.complete or wf.tasks.dropped:
                break
            try:
                row = _row(ev, TASK_COLS, {"wf_id": wf.wf_id, "job_id": None})
            except (KeyError, TypeError, ValueError):
                break
            key = (wf.wf_id, row["abs_task_id"])
            if wf.tasks.get(key[1]) is not None or self._missing("task", row) is not None:
                break
            if key in seen:
                break
            seen.add(key)
            rows.append(row)
            firsts.append((id(ev), key))
        if len(rows) < 2:
            return
        ids = self._raw.insert_ids(s.task, rows, ("wf_id", "abs_task_id"))
        for event_id, key in firsts:
            ahead[event_id] = ids[key]

    def _instances_ahead(self, events: Sequence[StampedeEvent]) -> None:
        """PostgreSQL: the batch's new job instances inserted up front in one statement (was
        an ``INSERT .. RETURNING`` each: ~40 round trips a batch of 1,000 ingested events),
        each id mapped back by the row's unique key (job, submit sequence) and taken by
        :meth:`_instance_start` at the event's place.  Only those before the first start
        event whose outcome is not certain here (its workflow not created by this loader, an
        id it may hold in the database only, its job not cached, a malformed or incomplete
        row): they get their ids in event order, as one insert each gave them, and those
        after it are inserted by their handlers, after them, as before."""
        rows: list[Row] = []
        firsts: list[tuple[int, tuple[int, int]]] = []
        seen: set[tuple[Any, Any, int]] = set()
        cols, required = NUMBERED_COLUMNS["job_instance"], REQUIRED_AT["job_instance"]
        for ev in events:
            if type(ev) not in _INSTANCE_STARTS:
                continue
            wf = self._wfs.get(ev.xwf_id)
            if wf is None or not wf.complete:
                break
            try:
                exec_job_id, seq = ev.job_id, int(ev.job_inst_id)  # type: ignore[attr-defined]
                if (wf.uuid, exec_job_id, seq) in seen or (exec_job_id, seq) in wf.instances:
                    continue  # (created by an earlier event, or cached)
                job_id = wf.jobs.get(exec_job_id)
                if job_id is None or (wf.instances.dropped and seq <= wf.top_seq):
                    break
                values = _instance_values(ev, job_id, seq)
            except (KeyError, TypeError, ValueError):
                break
            if any(values[i] is None for i in required):
                break
            seen.add((wf.uuid, exec_job_id, seq))
            rows.append(dict(zip(cols, values, strict=True)))
            firsts.append((id(ev), (job_id, seq)))
        if not rows:
            return
        ids = self._raw.insert_ids(s.job_instance, rows, ("job_id", "job_submit_seq"))
        for event_id, key in firsts:
            self._ahead[event_id] = ids[key]

    # --- workflow-level events --------------------------------------------

    def _wf_plan(self, ev: Any) -> None:
        uuid = ev.xwf_id
        if self._wf(uuid) is not None:
            log.error("duplicate workflow uuid, wf.plan ignored", xwf_id=uuid)
            return
        row = _row(ev, WORKFLOW_COLS, {})
        parent_uuid = _v(ev.parent_xwf_id)
        parent = self._wf(parent_uuid)
        if parent_uuid is not None and parent is None:
            log.warning("parent workflow not in database", xwf_id=uuid, parent=parent_uuid)
        row["parent_wf_id"] = parent.wf_id if parent else None
        root_uuid = _v(ev.root_xwf_id)
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

    def _wf_state(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        end = type(ev) in _XWF_END
        self._queue(
            s.workflowstate,
            {
                "wf_id": wf.wf_id,
                "state": "WORKFLOW_TERMINATED" if end else "WORKFLOW_STARTED",
                "timestamp": to_float(_v(ev.ts)),
                "restart_count": to_int(_v(ev.restart_count)),
                "status": _v(ev.status) if end else None,
                "reason": _v(ev.reason),
            },
        )
        if end:
            self._ended.append(wf.uuid)

    def _xwf_meta(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            self._queue(
                s.workflow_meta,
                {"wf_id": wf.wf_id, "key": _v(ev.key), "value": _v(ev.value)},
            )

    # --- static (planner) events ------------------------------------------

    def _job_info(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        exec_job_id = ev.job_id
        if self._seen(wf, wf.jobs, exec_job_id, self._job_id):
            log.error("duplicate job, job.info ignored", xwf_id=wf.uuid, job_id=exec_job_id)
            return
        job_id = self._ahead.pop(id(ev), None)
        if job_id is None:
            job_id = self._new_id(s.job, (wf.wf_id, *_JOB_VALUES(ev)))
        if job_id is not None:
            wf.jobs[exec_job_id] = job_id

    @staticmethod
    def _seen(wf: WfCache, known: Any, key: str, find: Callable[[WfCache, str], Any]) -> bool:
        """Whether a ``job.info``/``task.info`` names an entity the workflow already has: in
        the cache always (the same stream loaded twice may bring it again within one batch,
        before its workflow's end drops the cache), in the database only for a workflow this
        loader did not create (one it created holds no row it did not put in the cache, and
        a SELECT per new job would be the hot path's cost)."""
        if known.get(key) is not None:
            return True
        return not wf.complete and find(wf, key) is not None

    def _job_edge(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            self._queue_values("job_edge", (wf.wf_id, _v(ev.parent_job_id), _v(ev.child_job_id)))

    def _task_info(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        abs_task_id = ev.task_id
        if self._seen(wf, wf.tasks, abs_task_id, self._task_id):
            log.error("duplicate task, task.info ignored", xwf_id=wf.uuid, task_id=abs_task_id)
            return
        task_id = self._ahead.pop(id(ev), None)
        if task_id is None:
            at = self._later_tasks.pop(id(ev), None)
            if at is not None:
                self._tasks_from(at)
                task_id = self._ahead.pop(id(ev), None)
        if task_id is None:
            task_id = self._new_id(s.task, (wf.wf_id, None, *_TASK_VALUES(ev)))
        if task_id is not None:
            wf.tasks[abs_task_id] = task_id

    def _task_edge(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is not None:
            self._queue_values("task_edge", (wf.wf_id, _v(ev.parent_task_id), _v(ev.child_task_id)))

    def _map_task_job(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        task_id = self._task_id(wf, ev.task_id)
        job_id = self._job_id(wf, ev.job_id)
        if task_id is None or job_id is None:
            log.error(
                "wf.map.task_job: task or job not found",
                xwf_id=wf.uuid,
                task_id=ev.task_id,
                job_id=ev.job_id,
            )
            return
        if self._slow:
            self._try(_TASK_JOB_UPDATE, {"_task": task_id, "job_id": job_id}, "task")
        else:
            self._task_jobs.append((job_id, task_id))

    def _task_meta(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        task_id = self._task_id(wf, ev.task_id)
        if task_id is None:
            log.error("task.meta for an unknown task", xwf_id=wf.uuid, task_id=ev.task_id)
            return
        self._queue_values("task_meta", (task_id, _v(ev.key), _v(ev.value)))

    def _rc_meta(self, ev: Any) -> None:
        lfn_id = self._lfns.get(ev.lfn_id) or self._lfn_id(ev.lfn_id)
        if lfn_id is None:
            return
        key, value = ev.key, ev.value
        if key is UNSET:
            key = None
        if value is UNSET:
            value = None
        if key is None or value is None:  # the NOT NULL columns (lfn_id is not None)
            col = "key" if key is None else "value"
            log.error("rejected row: NOT NULL column is null", table="rc_meta", column=col)
        elif self._slow:
            self._write_rc_meta([{"lfn_id": lfn_id, "key": key, "value": value}])
        else:
            self._meta_merges[(lfn_id, key)] = value

    def _rc_pfn(self, ev: Any) -> None:
        lfn_id = self._lfn_id(ev.lfn_id)
        if lfn_id is not None:
            self._queue(s.rc_pfn, {"lfn_id": lfn_id, "pfn": _v(ev.pfn), "site": _v(ev.site)})

    def _map_file(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        task_id = self._task_id(wf, ev.task_id)
        if task_id is None:
            log.error("wf.map.file for an unknown task", xwf_id=wf.uuid, task_id=ev.task_id)
            return
        lfn_id = self._lfns.get(ev.lfn_id) or self._lfn_id(ev.lfn_id)
        if lfn_id is not None:
            self._queue_values("workflow_files", (wf.wf_id, task_id, lfn_id, None))

    def _map_subwf_job(self, ev: Any) -> None:
        found = self._instance_of(ev)
        if found is None:
            return
        sub = self._wf(ev.subwf_id)
        if sub is None:
            log.error("xwf.map.subwf_job: sub-workflow not found", subwf_id=ev.subwf_id)
            return
        self._update_instance(found[1], {"subwf_id": sub.wf_id})

    # --- job instance events ----------------------------------------------

    def _jobstate(self, ev: Any, ji_id: int) -> None:
        # Every job state kind: ``status`` and ``reason`` only where the kind has them.
        shape = _JOBSTATE_SHAPES.get(type(ev))
        if shape is None:  # an unknown ``job_inst.*`` kind (generic): read it by name
            status = _v(getattr(ev, "status", None))
            state = jobstate_name(ev.name, status)
            reason = _v(getattr(ev, "reason", None))
        else:
            names, has_status, has_reason = shape
            state = names[0]
            if has_status:
                status = ev.status
                if status is not UNSET and status is not None and status != 0 and status != "0":
                    state = names[1]
            reason = ev.reason if has_reason else None
            if reason is UNSET:
                reason = None
        ts = ev.ts
        if type(ts) is not float:
            ts = float(ts) if type(ts) is int else to_float(None if ts is UNSET else ts)
        js_id = ev.js_id
        self._queue_values(
            "jobstate", (ji_id, state, ts, None if js_id is UNSET else js_id, reason)
        )

    def _jobstate_only(self, ev: Any) -> None:
        found = self._instance_of(ev)
        if found is not None:
            self._jobstate(ev, found[1])

    def _instance_start(self, ev: Any) -> None:
        """submit.start / pre.start: create the job instance if it is new."""
        wf = self._wf_of(ev)
        if wf is None:
            return
        exec_job_id = ev.job_id
        seq = int(ev.job_inst_id)
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
            ji_id = self._ahead.pop(id(ev), None)
            if ji_id is None:
                ji_id = self._new_id(s.job_instance, _instance_values(ev, job_id, seq))
            if ji_id is None:
                return
            wf.instances[(exec_job_id, seq)] = ji_id
            if seq > wf.top_seq:
                wf.top_seq = seq
        if type(ev) in _PRE_START:
            self._jobstate(ev, ji_id)

    def _instance_end(self, ev: Any) -> None:
        """main.end / post.end: merge into the job instance, plus a jobstate row."""
        found = self._instance_of(ev)
        if found is None:
            return
        ji_id = found[1]
        cols = (_MAIN_END_CHANGES if type(ev) in _MAIN_END else _POST_END_CHANGES)(ev)
        if cols.get("multiplier_factor", 1) is None:
            del cols["multiplier_factor"]
        if cols:
            self._update_instance(ji_id, cols)
        self._jobstate(ev, ji_id)

    def _host_info(self, ev: Any) -> None:
        wf = self._wf_of(ev)
        if wf is None:
            return
        host_id = self._host_id(
            {
                "wf_id": wf.root_id if wf.root_id is not None else wf.wf_id,
                "site": _v(ev.site),
                "hostname": _v(ev.hostname),
                "ip": _v(ev.ip),
                "uname": _v(ev.uname),
                "total_memory": _v(ev.total_memory),
            }
        )
        found = self._instance_of(ev)
        if host_id is None or found is None:
            return
        if self._slow:
            self._try(_HOST_LINK, {"_ji": found[1], "host_id": host_id}, "job_instance")
        else:
            self._link_host(found[1], host_id)

    def _tag(self, ev: Any) -> None:
        found = self._instance_of(ev)
        if found is None:
            return
        wf, ji_id = found
        if ji_id in wf.tagged:
            log.error("rejected row: job instance already has a tag", table="tag", ji=ji_id)
            return
        wf.tagged.add(ji_id)
        self._queue(
            s.tag,
            {
                "wf_id": wf.wf_id,
                "job_instance_id": ji_id,
                "name": _v(ev.name_),
                "count": _v(ev.count),
            },
        )

    def _inv_end(self, ev: Any) -> None:
        found = self._instance_of(ev)
        if found is not None:
            wf, ji_id = found
            self._queue_values("invocation", (wf.wf_id, ji_id, *_INVOCATION_VALUES(ev)))

    def _int_metric(self, ev: Any) -> None:
        found = self._instance_of(ev)
        if found is not None:
            wf, ji_id = found
            self._queue_values(
                "integrity",
                (
                    wf.wf_id,
                    ji_id,
                    _v(ev.type),
                    _v(ev.file_type),
                    _v(ev.count),
                    to_float(_v(ev.duration)),
                ),
            )


#: The catalogue's loader names (``EventSpec.loader``) -> the functions that write the rows.
LOADERS: dict[str, Handler] = {
    fn.__name__[1:]: fn
    for fn in (
        BatchLoader._wf_plan,
        BatchLoader._wf_state,
        BatchLoader._xwf_meta,
        BatchLoader._job_info,
        BatchLoader._job_edge,
        BatchLoader._task_info,
        BatchLoader._task_edge,
        BatchLoader._map_task_job,
        BatchLoader._task_meta,
        BatchLoader._rc_meta,
        BatchLoader._rc_pfn,
        BatchLoader._map_file,
        BatchLoader._map_subwf_job,
        BatchLoader._jobstate_only,
        BatchLoader._instance_start,
        BatchLoader._instance_end,
        BatchLoader._host_info,
        BatchLoader._tag,
        BatchLoader._inv_end,
        BatchLoader._int_metric,
    )
}

#: Job state kinds (typed) -> what :meth:`BatchLoader._jobstate` needs of the class.
_JOBSTATE_SHAPES: dict[type, tuple[tuple[str, str], bool, bool]] = with_views(
    {
        cls: _jobstate_shape(cls)
        for name, cls in EVENT_CLASSES.items()
        if name.startswith("job_inst.")
    }
)

#: Event class -> (names a file, a task, a job), from the catalogue's loader names (:data:`_LOOKUPS`).
_REFS: dict[type, tuple[bool, bool, bool]] = with_views(
    {
        EVENT_CLASSES[spec.name]: _LOOKUPS[spec.loader]
        for spec in CATALOGUE
        if spec.loader in _LOOKUPS
    }
)

#: PostgreSQL: a batch's new file names inserted (sorted: concurrent writers lock alike) and,
#: with the ones already there, returned with their ids; one round trip.  The CTE's rows are
#: not in the outer SELECT's snapshot, so each name comes from one side only.
_LFNS_GET_OR_INSERT = text(
    "WITH new AS (INSERT INTO rc_lfn (lfn) SELECT n FROM unnest(CAST(:names AS text[])) AS n"
    " ORDER BY n ON CONFLICT DO NOTHING RETURNING lfn, lfn_id)"
    " SELECT lfn, lfn_id FROM new"
    " UNION ALL SELECT lfn, lfn_id FROM rc_lfn WHERE lfn = ANY(CAST(:names AS text[]))"
)

#: Event class -> its loader function, from the catalogue (a kind naming no function of
#: :data:`LOADERS` fails here, at import).  Kinds without rows (``NO_ROWS``) are not in it.
DISPATCH: dict[type[StampedeEvent], Handler] = {
    EVENT_CLASSES[spec.name]: LOADERS[spec.loader] for spec in CATALOGUE if spec.loader != NO_ROWS
}

#: What :meth:`BatchLoader.load` dispatches on: :data:`DISPATCH`, its views too.
_HANDLERS: dict[type, Handler] = with_views(DISPATCH)


def _instance_values(ev: Any, job_id: int, seq: int) -> tuple[Any, ...]:
    """A new job instance's row in NUMBERED_COLUMNS' order, made up front or by its handler."""
    site = _v(ev.site) if type(ev) in _SUBMIT_START else None
    return (job_id, seq, _v(ev.sched_id), site, 1)


#: ``task.info`` as an event and as a view (:meth:`BatchLoader._tasks_from`).
_TASK_INFOS = kinds(TaskInfo)

#: The kinds whose handler creates a job instance if it is new (:meth:`BatchLoader._instances_ahead`).
_INSTANCE_STARTS = frozenset(k for k, h in _HANDLERS.items() if h is BatchLoader._instance_start)

#: The kinds some handlers tell apart, as events or views.
_XWF_END, _SUBMIT_START, _PRE_START, _MAIN_END = (
    kinds(cls) for cls in (XwfEnd, JobInstSubmitStart, JobInstPreStart, JobInstMainEnd)
)
