"""The loader's side of the database: id caches by natural key, rows queued per table and
written with ``executemany`` at the end of a batch, ``job_instance`` updates merged per
instance, and the statements for them (:class:`~sinks.sql.loader.BatchLoader` adds what
each event means)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache, partial
from itertools import islice
from operator import itemgetter
from typing import Any, NamedTuple

import structlog
from sqlalchemy import Connection, Table, bindparam, func, select, update
from sqlalchemy.exc import StatementError

from . import schema as s
from .columns import (
    ID_CACHE_GENERATION,
    LEAF_COLUMNS,
    LEAF_TABLES,
    LFN_CACHE_GENERATION,
    NUMBERED_COLUMNS,
    NUMBERED_TABLES,
    REQUIRED,
    REQUIRED_AT,
    SHARED_LEAF_TABLES,
    Row,
    example_key,
)
from .errors import Rejected, is_transient
from .rawsql import RawSQL

log = structlog.get_logger(__name__)

#: A dialect's look-up of file names (sorted, none cached): their ``(lfn, lfn_id)`` rows.
LfnFetch = Callable[[list[str]], Iterable[tuple[str, int]]]


class IdCache:
    """Ids by natural key, at most ``2 * size`` of them plus one batch's: memory flat in the
    job count.

    Two generations: after a batch committed (:meth:`trim`) a full young one becomes the
    old one (its latest ``size`` keys), and the old one before it is dropped (``dropped``
    from then on); a hit in the old one moves the key to the young one.  A job instance's events come close together, so
    the ids still wanted stay.  Nothing is dropped within a batch, so every row the batch
    queued is found here: a miss never looks for a queued row in the database.  Once ids
    were dropped, a miss no longer proves a row absent: the caller asks the database (an
    indexed SELECT)."""

    __slots__ = ("_young", "_old", "size", "dropped")

    def __init__(self, size: int) -> None:
        self._young: dict[Any, int] = {}
        self._old: dict[Any, int] = {}
        self.size = size
        self.dropped = False

    def get(self, key: Any) -> int | None:
        found = self._young.get(key)
        if found is None and self._old:
            found = self._old.pop(key, None)
            if found is not None:
                self._young[key] = found
        return found

    def __contains__(self, key: Any) -> bool:
        return key in self._young or key in self._old

    def __setitem__(self, key: Any, value: int) -> None:
        self._young[key] = value

    def trim(self) -> None:
        """Between batches: a full young generation becomes the old one."""
        young = self._young
        if len(young) >= self.size:
            if self._old or len(young) > self.size:
                self.dropped = True
            if len(young) > self.size:  # one batch added more: keep its latest
                young = dict(islice(young.items(), len(young) - self.size, None))
            self._old = young
            self._young = {}

    def __len__(self) -> int:
        return len(self._young) + len(self._old)


class WfCache:
    """Ids known for one workflow.  ``complete`` means this loader created the
    workflow row, so a cache miss proves the row is absent from the database (as long
    as the cache dropped none: :class:`IdCache`), and so does a job instance sequence
    number above ``top_seq``, the largest this loader gave one of the workflow's instances
    (DAGMan's submit sequence grows: a new instance needs no SELECT once ids were dropped).
    """

    __slots__ = (
        "wf_id",
        "uuid",
        "root_id",
        "complete",
        "jobs",
        "instances",
        "tasks",
        "tagged",
        "top_seq",
    )

    def __init__(self, wf_id: int, uuid: str, root_id: int | None, complete: bool) -> None:
        self.wf_id = wf_id
        self.uuid = uuid
        self.root_id = root_id
        self.complete = complete
        self.jobs = IdCache(ID_CACHE_GENERATION)
        self.instances = IdCache(ID_CACHE_GENERATION)
        self.tasks = IdCache(ID_CACHE_GENERATION)
        self.tagged: set[int] = set()
        self.top_seq = 0

    def trim(self) -> None:
        """Between batches (:meth:`IdCache.trim`)."""
        self.jobs.trim()
        self.instances.trim()
        self.tasks.trim()


class RowStore:
    """Id caches and queued rows of one loader, between and within batches."""

    #: set by the sink around :meth:`load`; None: everything in the batch's transaction
    shared: Connection | None = None

    def __init__(self) -> None:
        self._wfs: dict[str, WfCache] = {}
        self._hosts: dict[tuple[Any, ...], int] | None = None
        self._lfns = IdCache(LFN_CACHE_GENERATION)
        self._conn: Connection | None = None
        self._raw = RawSQL()
        self._shared_raw = RawSQL()  # (the shared connection's statements, :attr:`shared`)
        self._slow = False
        #: this batch numbers job, task and job instance rows itself (``_new_id``)
        self._numbering = False
        self._begin_batch()

    # --- batch control ---------------------------------------------------

    def _begin_batch(self) -> None:
        #: leaf tables: value tuples in the order of ``LEAF_COLUMNS``
        self._rows: dict[str, list[tuple[Any, ...]]] = {t.name: [] for t in LEAF_TABLES}
        #: numbered tables: (id, *values in the order of ``NUMBERED_COLUMNS``), not yet written
        self._numbered: dict[str, list[tuple[Any, ...]]] = {t.name: [] for t in NUMBERED_TABLES}
        self._numbered_pending = False
        self._next_ids: dict[str, int] = {}  # numbered table -> the id its next row gets
        self._first_ids: dict[str, int] = {}  # numbered table -> the batch's first new id
        #: numbering: columns set on a job instance this batch inserts, written with its row
        self._ji_extra: dict[int, Row] = {}
        self._shared_rows: dict[str, list[Row]] = {t.name: [] for t in SHARED_LEAF_TABLES}
        self._ji_updates: dict[int, Row] = {}
        self._host_links: list[tuple[int, int]] = []  # (host_id, job_instance_id)
        self._task_jobs: list[tuple[int, int]] = []  # (job_id, task_id)
        self._meta_merges: dict[tuple[int, str], Any] = {}
        self._ended: list[str] = []
        self._ahead: dict[int, int] = {}  # id(event) -> the id its row was inserted with
        #: numbering: file names the batch uses that ``rc_lfn`` lacked at its start
        self._lfns_absent: set[str] = set()
        self._new_lfns: list[tuple[int, str]] = []  # numbering: (lfn_id, lfn) to insert
        self.rejected = Rejected()  # slow mode: the rows the database refused

    def committed(self) -> None:
        """Called after the batch committed: drop the caches of workflows that ended, and
        the oldest ids of the others (nothing is dropped within a batch: :class:`IdCache`)."""
        for uuid in self._ended:
            self._wfs.pop(uuid, None)
        self._ended = []
        for wf in self._wfs.values():
            wf.trim()
        self._lfns.trim()

    def reset(self) -> None:
        """Forget every cached id (after a rollback they may point at nothing)."""
        self._wfs.clear()
        self._hosts = None
        self._lfns = IdCache(LFN_CACHE_GENERATION)
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
        name = table.name
        cols = LEAF_COLUMNS.get(name)
        if cols is not None:
            self._queue_values(name, tuple([row[c] for c in cols]))
            return
        col = self._missing(name, row)
        if col is not None:
            log.error("rejected row: NOT NULL column is null", table=name, column=col)
        elif not self._slow:
            self._shared_rows[name].append(row)
        else:
            self._write_shared_rows(table, [row])

    def _queue_values(self, name: str, values: tuple[Any, ...]) -> None:
        """A leaf table's row as its values in the order of ``LEAF_COLUMNS[name]``."""
        for i in REQUIRED_AT[name]:
            if values[i] is None:
                col = LEAF_COLUMNS[name][i]
                log.error("rejected row: NOT NULL column is null", table=name, column=col)
                return
        if not self._slow:
            self._rows[name].append(values)
        else:
            table = s.metadata.tables[name]
            self._try(table.insert(), dict(zip(LEAF_COLUMNS[name], values, strict=True)), name)

    def _try(self, stmt: Any, params: Row, what: str) -> Any:
        """Slow mode: one statement in a SAVEPOINT; a rejected row is counted, not raised."""
        try:
            with self.conn.begin_nested():
                return self.conn.execute(stmt, params)
        except StatementError as exc:
            if is_transient(exc):
                raise
            self.rejected.add(what, example_key(what, params), str(exc.orig or exc))
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

    def _new_id(self, table: Table, values: tuple[Any, ...]) -> int | None:
        """A job, task or job instance row (values in the order of ``NUMBERED_COLUMNS``) and
        its new id, or None (a NULL in a NOT NULL column: logged).

        SQLite outside slow mode: the id is the table's largest plus one, as SQLite's own
        would be (these tables are not ``AUTOINCREMENT``), and the row is queued for one
        ``executemany`` per table (:meth:`_write_numbered`) in place of an insert per row.
        That is safe because the batch holds the file's write lock from its ``BEGIN
        IMMEDIATE`` (``database.write_transaction``): no other writer can take an id until
        it commits, and the largest id is read again in every batch.  A server is shared by
        writers whose inserts interleave with ours, so it keeps the database's ids."""
        name = table.name
        for i in REQUIRED_AT[name]:
            if values[i] is None:
                col = NUMBERED_COLUMNS[name][i]
                log.error("rejected row: NOT NULL column is null", table=name, column=col)
                return None
        if not self._numbering:
            return self._insert_id(table, dict(zip(NUMBERED_COLUMNS[name], values, strict=True)))
        new_id = self._next_ids.get(name)
        if new_id is None:
            new_id = self._first_ids[name] = self._max_id(table) + 1
        self._next_ids[name] = new_id + 1
        self._numbered[name].append((new_id, *values))
        self._numbered_pending = True
        return new_id

    def _max_id(self, table: Table) -> int:
        pk = table.autoincrement_column
        assert pk is not None
        raw = self._raw
        found = raw.scalar(raw.prepare(("max_id", table.name), select(func.max(pk))), {})
        return 0 if found is None else int(found)

    def _write_numbered(self) -> None:
        """The numbered rows queued so far, parents first (the foreign keys are checked)."""
        for table in NUMBERED_TABLES:
            rows = self._numbered[table.name]
            if rows:
                cols = _NUMBERED_ROWS[table.name]
                if table is s.job_instance and self._ji_extra:
                    rows = self._with_extra(rows)
                    cols = _JI_FULL_COLUMNS
                self._raw.insert_values(table, cols, rows)
                self._numbered[table.name] = []
        self._numbered_pending = False

    def _with_extra(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The batch's new job instance rows, in the order of ``_JI_FULL_COLUMNS``, those
        the batch changed (``_ji_extra``) with their final values: each column's last value,
        as the merged update after the insert would leave it (one ``executemany``, no
        UPDATE for them)."""
        extra = self._ji_extra
        cols = _NUMBERED_ROWS["job_instance"]
        nulls, order = _JI_NULLS, _JI_ORDER
        out = []
        for row in rows:
            changes = extra.get(row[0])
            if changes is None:
                out.append(order(row + nulls))
            else:
                values = dict(zip(cols, row, strict=True))
                values.update(changes)
                out.append(tuple([values.get(c) for c in _JI_FULL_COLUMNS]))
        self._ji_extra = {}
        return out

    def _write_pending(self) -> None:
        raw = self._raw
        if self._new_lfns:
            raw.insert_values(s.rc_lfn, ("lfn_id", "lfn"), self._new_lfns)
        if self._numbered_pending:
            self._write_numbered()
        for table in LEAF_TABLES:
            leaf = self._rows[table.name]
            if leaf:
                raw.insert_values(table, LEAF_COLUMNS[table.name], leaf)
        for table in SHARED_LEAF_TABLES:
            rows = self._shared_rows[table.name]
            if rows:
                self._write_shared_rows(table, rows)
        if self._meta_merges:
            merges = self._meta_merges.items()
            if self.shared is not None:
                self._upsert_rc_meta([{"lfn_id": k[0], "key": k[1], "value": v} for k, v in merges])
            else:  # one upsert per row, its values as they are
                upsert = raw.prepare("rc_meta_upsert", _rc_meta_upsert(self.conn.dialect.name))
                raw.run_values(upsert, _RC_META_COLS, [(*k, v) for k, v in merges])
        if self._task_jobs:
            prep = raw.prepare("task_job", _TASK_JOB_UPDATE)
            raw.run_values(prep, ("job_id", "_task"), self._task_jobs)
        self._write_instance_updates()

    def _write_instance_updates(self) -> None:
        """The batch's changes to job instances it did not insert: updates merged per
        instance, one executemany per set of columns, then the host links.  An instance's
        first host link joins its update when it has one (``_HOST``: ``host_id =
        COALESCE(host_id, ?)``, the link's "first host wins"): one statement, one row look-up
        for both (nothing else sets ``host_id``, so the order of the two does not matter)."""
        raw = self._raw
        updates, links = self._ji_updates, self._host_links
        if updates and links:
            links = []
            for host_id, ji_id in self._host_links:
                values = updates.get(ji_id)
                if values is not None and _HOST not in values:
                    values[_HOST] = host_id
                else:
                    links.append((host_id, ji_id))
        groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        for ji_id, values in updates.items():
            cols = tuple(values)
            group = groups.get(cols)
            if group is None:
                group = groups[cols] = []
            group.append((*values.values(), ji_id))
        for cols, group in groups.items():
            raw.run_values(raw.prepare(("ji", cols), _ji_update(cols)), (*cols, "_ji"), group)
        if links:
            prep = raw.prepare("host_link", _HOST_LINK)
            raw.run_values(prep, ("host_id", "_ji"), links)

    def _write_rc_meta(self, rows: list[Row]) -> None:
        """Slow mode: the merge (the new value replaces the old one), one upsert per row."""
        if self.shared is not None:
            self._upsert_rc_meta(rows)
            return
        stmt = _rc_meta_upsert(self.conn.dialect.name)
        for row in rows:
            self._try(stmt, row, "rc_meta")

    def _upsert_rc_meta(self, rows: list[Row]) -> None:
        """Merge on the shared connection: one upsert, keys in a fixed order (no deadlocks)."""
        conn = self.shared
        assert conn is not None
        stmt = _rc_meta_upsert(conn.dialect.name)
        rows = sorted(rows, key=lambda r: (r["lfn_id"], r["key"]))
        if not self._slow:
            # the driver's batch, not SQLAlchemy's executemany: its per-row parameter
            # processing was ~40 % of an ingest writer's CPU (bench/README.md, ingest30g)
            raw = self._shared_raw
            raw.open(conn)
            try:
                raw.execute_many(raw.prepare("rc_meta_upsert", stmt), rows)
            finally:
                raw.close()
            return
        for row in rows:
            self._shared_try(partial(conn.execute, stmt, row), "rc_meta", row)

    def _write_shared_rows(self, table: Table, rows: list[Row]) -> None:
        """Rows other workflows may have written already (``SHARED_LEAF_TABLES``): one insert
        that skips those whose unique key exists, so the batch never fails on them.

        On a server they go through the shared connection (as ``rc_lfn``), keys in a fixed
        order: a daemon never waits on another's open batch for a file both register.
        """
        conn = self.shared
        if conn is None:
            stmt = _insert_new(table, self.conn.dialect.name, tuple(rows[0]))
            if self._slow:
                for row in rows:
                    self._try(stmt, row, table.name)
            else:
                raw = self._raw
                raw.execute_many(raw.prepare(("new", table.name, tuple(rows[0])), stmt), rows)
            return
        stmt = _insert_new(table, conn.dialect.name, tuple(rows[0]))
        rows = sorted(rows, key=_key_order)
        if not self._slow:
            conn.execute(stmt, rows)
            return
        for row in rows:
            self._shared_try(partial(conn.execute, stmt, row), table.name, row)

    def _shared_try(self, call: Callable[[], Any], what: str, row: Row) -> Any:
        """Slow mode on the shared connection: a rejected row is counted, not raised."""
        try:
            return call()
        except StatementError as exc:
            if is_transient(exc):
                raise
            self.rejected.add(what, example_key(what, row), str(exc.orig or exc))
            return None

    def _update_instance(self, ji_id: int, cols: Row) -> None:
        if self._slow:
            self._try(_ji_update(tuple(cols)), {"_ji": ji_id, **cols}, "job_instance")
        elif ji_id >= self._first_ids.get("job_instance", _NONE_NEW):  # queued: no UPDATE
            self._ji_extra.setdefault(ji_id, {}).update(cols)
        else:
            self._ji_updates.setdefault(ji_id, {}).update(cols)

    def _link_host(self, ji_id: int, host_id: int) -> None:
        """The job instance's host, unless it has one (the first host wins)."""
        if ji_id >= self._first_ids.get("job_instance", _NONE_NEW):  # queued: no UPDATE
            self._ji_extra.setdefault(ji_id, {}).setdefault("host_id", host_id)
        else:
            self._host_links.append((host_id, ji_id))

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

    def _wf_of(self, ev: Any) -> WfCache | None:
        wf = self._wf(ev.xwf_id)
        if wf is None:
            log.error("event for an unknown workflow", kind=ev.name, xwf_id=ev.xwf_id)
        return wf

    def _job_id(self, wf: WfCache, exec_job_id: str) -> int | None:
        jobs = wf.jobs
        job_id = jobs.get(exec_job_id)
        if job_id is None and (not wf.complete or jobs.dropped):
            job_id = self._select("job_id", _JOB_FIND, wf_id=wf.wf_id, exec_job_id=exec_job_id)
            if job_id is not None:
                jobs[exec_job_id] = job_id
        return job_id

    def _select(self, key: str, stmt: Any, **params: Any) -> Any:
        """The first column of the first row (an id), or None: compiled once, on the raw
        cursor outside slow mode (a cache miss in a big workflow is one per job)."""
        if self._slow:
            return self.conn.execute(stmt, params).scalar()
        raw = self._raw  # (never a queued row: the caches keep this batch's, IdCache)
        return raw.scalar(raw.prepare(key, stmt), params)

    def _instance_id(self, wf: WfCache, exec_job_id: str, seq: int) -> int | None:
        key = (exec_job_id, seq)
        instances = wf.instances
        ji_id = instances.get(key)
        if ji_id is None and (not wf.complete or (instances.dropped and seq <= wf.top_seq)):
            job_id = self._job_id(wf, exec_job_id)
            if job_id is None:
                return None
            ji_id = self._select("ji_id", _INSTANCE_FIND, job_id=job_id, seq=seq)
            if ji_id is not None:
                instances[key] = ji_id
        return ji_id

    def _instance_of(self, ev: Any) -> tuple[WfCache, int] | None:
        """The workflow and job instance an event is about, or None (logged)."""
        wf = self._wfs.get(ev.xwf_id)
        if wf is not None:  # the common case: both cached
            seq = ev.job_inst_id
            ji_id = wf.instances.get((ev.job_id, seq if type(seq) is int else int(seq)))
            if ji_id is not None:
                return wf, ji_id
        wf = self._wf_of(ev)
        if wf is None:
            return None
        ji_id = self._instance_id(wf, ev.job_id, int(ev.job_inst_id))
        if ji_id is None:
            log.error(
                "event for an unknown job instance",
                kind=ev.name,
                xwf_id=wf.uuid,
                job_id=ev.job_id,
                job_inst_id=ev.job_inst_id,
            )
            return None
        return wf, ji_id

    def _task_id(self, wf: WfCache, abs_task_id: str) -> int | None:
        tasks = wf.tasks
        task_id = tasks.get(abs_task_id)
        if task_id is None and (not wf.complete or tasks.dropped):
            task_id = self._select("task_id", _TASK_FIND, wf_id=wf.wf_id, abs_task_id=abs_task_id)
            if task_id is not None:
                tasks[abs_task_id] = task_id
        return task_id

    def _lfn_id(self, lfn: str) -> int | None:
        """``rc_lfn`` is global: look the name up across workflows, insert if new."""
        lfn_id = self._lfns.get(lfn)
        if lfn_id is None:
            t = s.rc_lfn
            if self.shared is not None:
                lfn_id = self._shared_lfn_id(lfn)
            elif self._slow:
                lfn_id = self.conn.execute(select(t.c.lfn_id).where(t.c.lfn == lfn)).scalar()
                if lfn_id is None:
                    lfn_id = self._insert_id(t, {"lfn": lfn})
            elif self._numbering:
                if lfn not in self._lfns_absent:
                    raw = self._raw
                    lfn_id = raw.scalar(raw.prepare("lfn_id", _LFN_FIND), {"lfn": lfn})
                if lfn_id is None:
                    lfn_id = self._new_lfn_id(lfn)
            else:
                raw = self._raw
                lfn_id = raw.scalar(raw.prepare("lfn_id", _LFN_FIND), {"lfn": lfn})
                if lfn_id is None:
                    lfn_id = self._insert_id(t, {"lfn": lfn})
            if lfn_id is not None:
                self._lfns[lfn] = lfn_id
        return lfn_id

    def _lfns_ahead(self, names: set[Any], fetch: LfnFetch) -> None:
        """The batch's file names the cache lacks, looked up before its events by ``fetch``,
        the dialect's statement (SQLite: :meth:`_sqlite_lfns`; PostgreSQL: a get-or-insert,
        ``BatchLoader._pg_lfns``), in a few statements, not one or two per name.  Those it
        returns are cached.  SQLite: the others are new and numbered as they come
        (:meth:`_new_lfn_id`), in the order of their first event, as an insert each would
        number them; safe with another writer of the file, as the batch holds its write lock
        from ``BEGIN IMMEDIATE``, so no name can appear until it commits.  A server: a name
        another writer inserts meanwhile is not returned, and its row's :meth:`_lfn_id`
        gets or inserts it as before."""
        lfns = self._lfns
        wanted = sorted(n for n in names if type(n) is str and n and n not in lfns)
        if not wanted:
            return
        absent = set(wanted)
        for lfn, lfn_id in fetch(wanted):
            lfns[lfn] = int(lfn_id)
            absent.discard(lfn)
        self._lfns_absent = absent

    def _sqlite_lfns(self, wanted: list[str]) -> Iterator[tuple[str, int]]:
        """SQLite: which of ``wanted`` ``rc_lfn`` holds, one SELECT per 500 names."""
        for marks, chunk in _in_lists(wanted):
            yield from self._raw.rows(
                f"SELECT lfn, lfn_id FROM rc_lfn WHERE lfn IN ({marks})", chunk
            )

    def _wf_ids_ahead(self, wf: WfCache, kind: IdsAhead, ids: set[Any]) -> None:
        """The batch's tasks or jobs (``kind``) of ``wf`` its cache lacks (dropped, or a
        workflow of an earlier run), read in one SELECT per 500 and cached; those not found
        are left to :meth:`_task_id` and :meth:`_job_id` (a row the batch itself adds, or a
        missing one).  Past the id caches' bound a job's id was one SELECT per new job
        instance (~6,000 at 20,000 jobs)."""
        cache: IdCache = getattr(wf, kind.cache)
        if wf.complete and not cache.dropped:
            return
        wanted = [k for k in ids if type(k) is str and k not in cache]
        for marks, chunk in _in_lists(wanted):
            for key, row_id in self._raw.rows(kind.sql.format(marks), [wf.wf_id, *chunk]):
                cache[key] = row_id

    def _new_lfn_id(self, lfn: str | None) -> int | None:
        """Numbering: a new ``rc_lfn`` row's id (the largest plus one, :meth:`_new_id`),
        queued for one ``executemany`` before the rows that point at it."""
        if lfn is None:
            log.error("rejected row: NOT NULL column is null", table="rc_lfn", column="lfn")
            return None
        new_id = self._next_ids.get("rc_lfn")
        if new_id is None:
            new_id = self._max_id(s.rc_lfn) + 1
        self._next_ids["rc_lfn"] = new_id + 1
        self._new_lfns.append((new_id, lfn))
        self._lfns_absent.discard(lfn)
        return new_id

    def _shared_lfn_id(self, lfn: str) -> int | None:
        """Get or insert on the shared connection; another daemon may insert it first."""
        conn = self.shared
        assert conn is not None
        t = s.rc_lfn
        find = select(t.c.lfn_id).where(t.c.lfn == lfn)

        def get_or_insert() -> int | None:
            lfn_id = conn.execute(find).scalar()
            if lfn_id is None:
                # another writer may insert it meanwhile: then ours inserts nothing
                result = conn.execute(_new_lfn(conn.dialect.name), {"lfn": lfn})
                lfn_id = result.scalar() if result.returns_rows else None
                if lfn_id is None:
                    lfn_id = conn.execute(find).scalar()
            return None if lfn_id is None else int(lfn_id)

        if self._slow:
            return self._shared_try(get_or_insert, "rc_lfn", {"lfn": lfn})
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


# --- prepared statements ------------------------------------------------------

#: Per numbered table, the columns of a queued row: the id, then ``NUMBERED_COLUMNS``.
_NUMBERED_ROWS: dict[str, tuple[str, ...]] = {
    t.name: (t.primary_key.columns[0].name, *NUMBERED_COLUMNS[t.name]) for t in NUMBERED_TABLES
}

#: Every ``job_instance`` column, in the table's order, the order its INSERT binds them: the
#: batch's new rows when it changed some of them (``RowStore._with_extra``) go to the driver
#: as they are, not remapped row by row (``Prepared.params_of``).
_JI_FULL_COLUMNS: tuple[str, ...] = tuple(c.name for c in s.job_instance.columns)
#: A queued row (``_NUMBERED_ROWS``) followed by NULLs for the other columns ...
_JI_QUEUED = (
    *_NUMBERED_ROWS["job_instance"],
    *(c for c in _JI_FULL_COLUMNS if c not in _NUMBERED_ROWS["job_instance"]),
)
_JI_NULLS: tuple[None, ...] = (None,) * (len(_JI_QUEUED) - len(_NUMBERED_ROWS["job_instance"]))
#: ... put in the order of ``_JI_FULL_COLUMNS``: one C call a row.
_JI_ORDER = itemgetter(*(_JI_QUEUED.index(c) for c in _JI_FULL_COLUMNS))
#: No job instance of the batch is new (no id reaches this).
_NONE_NEW = float("inf")

_TASK_JOB_UPDATE = (
    update(s.task).where(s.task.c.task_id == bindparam("_task")).values(job_id=bindparam("job_id"))
)


class IdsAhead(NamedTuple):
    """What :meth:`RowStore._wf_ids_ahead` reads of a table: the workflow's cache (an
    attribute of :class:`WfCache`) and the SELECT of (natural key, id) by key."""

    cache: str
    sql: str


_TASKS_AHEAD = IdsAhead(
    "tasks", "SELECT abs_task_id, task_id FROM task WHERE wf_id = ? AND abs_task_id IN ({})"
)
_JOBS_AHEAD = IdsAhead(
    "jobs", "SELECT exec_job_id, job_id FROM job WHERE wf_id = ? AND exec_job_id IN ({})"
)

#: values per IN-list of one SELECT (:func:`_in_lists`; SQLite binds at most 999 in builds
#: before 3.32)
_IN_CHUNK = 500


def _in_lists(values: list[str]) -> Iterator[tuple[str, list[str]]]:
    """``values`` in chunks of at most :data:`_IN_CHUNK`, each with its placeholders
    (``"?,?,?"``): one SELECT per chunk, under SQLite's bound on bound parameters."""
    for start in range(0, len(values), _IN_CHUNK):
        chunk = values[start : start + _IN_CHUNK]
        yield ",".join("?" * len(chunk)), chunk


_LFN_FIND = select(s.rc_lfn.c.lfn_id).where(s.rc_lfn.c.lfn == bindparam("lfn"))
_JOB_FIND = select(s.job.c.job_id).where(
    s.job.c.wf_id == bindparam("wf_id"), s.job.c.exec_job_id == bindparam("exec_job_id")
)
_INSTANCE_FIND = select(s.job_instance.c.job_instance_id).where(
    s.job_instance.c.job_id == bindparam("job_id"),
    s.job_instance.c.job_submit_seq == bindparam("seq"),
)
_TASK_FIND = select(s.task.c.task_id).where(
    s.task.c.wf_id == bindparam("wf_id"), s.task.c.abs_task_id == bindparam("abs_task_id")
)

#: First host per job instance wins, even across sessions.
_HOST_LINK = (
    update(s.job_instance)
    .where(s.job_instance.c.job_instance_id == bindparam("_ji"), s.job_instance.c.host_id.is_(None))
    .values(host_id=bindparam("host_id"))
)


_INSERTS_NEW: dict[tuple[str, str, tuple[str, ...]], Any] = {}


def _insert_new(table: Table, dialect: str, cols: tuple[str, ...]) -> Any:
    """INSERT of ``cols`` that skips a row whose unique key exists, and only that.

    PostgreSQL and SQLite: ``ON CONFLICT DO NOTHING`` (unique and primary keys only; SQLite's
    ``INSERT OR IGNORE`` would skip NOT NULL and CHECK failures too).  MariaDB: ``ON DUPLICATE
    KEY UPDATE pk = pk``, a no-op update of the existing row; ``INSERT IGNORE`` would also turn
    errors (too long a value, a NULL in a NOT NULL column, a missing parent row) into warnings
    and store truncated or default values without a word.
    """
    key = (table.name, dialect, cols)
    stmt = _INSERTS_NEW.get(key)
    if stmt is None:
        values: dict[str, Any] = {c: bindparam(c) for c in cols}
        if dialect in ("mysql", "mariadb"):
            from sqlalchemy.dialects.mysql import insert as my_insert

            pk = table.primary_key.columns[0]
            stmt = my_insert(table).values(values).on_duplicate_key_update({pk.name: pk})
        elif dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            stmt = pg_insert(table).values(values).on_conflict_do_nothing()
        else:
            from sqlalchemy.dialects.sqlite import insert as lite_insert

            stmt = lite_insert(table).values(values).on_conflict_do_nothing()
        _INSERTS_NEW[key] = stmt
    return stmt


def _new_lfn(dialect: str) -> Any:
    """``rc_lfn`` insert-if-new; on PostgreSQL it returns the new id (no row: it existed)."""
    key = ("rc_lfn:returning", dialect, ())
    stmt = _INSERTS_NEW.get(key)
    if stmt is None:
        stmt = _insert_new(s.rc_lfn, dialect, ("lfn",))
        if dialect == "postgresql":
            stmt = stmt.returning(s.rc_lfn.c.lfn_id)
        _INSERTS_NEW[key] = stmt
    return stmt


def _key_order(row: Row) -> tuple[tuple[bool, Any], ...]:
    """A total order of rows of one kind (NULLs last), so concurrent writers lock alike."""
    return tuple((v is None, "" if v is None else v) for v in row.values())


_RC_META_COLS = ("lfn_id", "key", "value")


@cache
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


#: A job instance update's bind for its first host link (``_write_instance_updates``).
_HOST = "_host"


def _ji_update(cols: tuple[str, ...]) -> Any:
    """UPDATE of ``cols`` of one job instance; ``_HOST`` sets ``host_id`` unless it has one."""
    stmt = _JI_UPDATES.get(cols)
    if stmt is None:
        ji = s.job_instance
        values: dict[str, Any] = {c: bindparam(c) for c in cols if c != _HOST}
        if _HOST in cols:
            values["host_id"] = func.coalesce(ji.c.host_id, bindparam(_HOST))
        stmt = _JI_UPDATES[cols] = (
            update(ji).where(ji.c.job_instance_id == bindparam("_ji")).values(values)
        )
    return stmt
