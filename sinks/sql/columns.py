"""Event attributes -> row values: the coercions (behaviour spec 7.2) and, per table, which
event field fills which column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, UniqueConstraint

from monitord.core.events import UNSET
from monitord.core.generated import make_function

from . import schema as s

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


# --- column maps: (event field, column, coercion) -------------------------------

Conv = Callable[[Any], Any]
ColumnMap = tuple[tuple[str, str, Conv], ...]

WORKFLOW_COLS: ColumnMap = (
    ("xwf_id", "wf_uuid", _ident),
    ("dag_file_name", "dag_file_name", _ident),
    ("ts", "timestamp", to_float),
    ("submit_hostname", "submit_hostname", _ident),
    ("submit_dir", "submit_dir", _ident),
    ("argv", "planner_arguments", escape_argv),
    ("user", "user", _ident),
    ("grid_dn", "grid_dn", _ident),
    ("planner_version", "planner_version", _ident),
    ("dax_label", "dax_label", _ident),
    ("dax_version", "dax_version", _ident),
    ("dax_file", "dax_file", _ident),
)
JOB_COLS: ColumnMap = (
    ("job_id", "exec_job_id", _ident),
    ("submit_file", "submit_file", _ident),
    ("type_desc", "type_desc", _ident),
    ("clustered", "clustered", to_bool),
    ("max_retries", "max_retries", _ident),
    ("executable", "executable", _ident),
    ("argv", "argv", escape_argv),
    ("task_count", "task_count", _ident),
)
TASK_COLS: ColumnMap = (
    ("task_id", "abs_task_id", _ident),
    ("transformation", "transformation", _ident),
    ("argv", "argv", escape_argv),
    ("type_desc", "type_desc", _ident),
)
INVOCATION_COLS: ColumnMap = (
    ("inv_id", "task_submit_seq", _ident),
    ("start_time", "start_time", to_float),
    ("dur", "remote_duration", to_float),
    ("remote_cpu_time", "remote_cpu_time", to_float),
    ("exitcode", "exitcode", _ident),
    ("transformation", "transformation", _ident),
    ("executable", "executable", _ident),
    ("argv", "argv", escape_argv),
    ("task_id", "abs_task_id", _ident),
    ("maxrss", "maxrss", _ident),
    ("avg_cpu", "avg_cpu", to_float),
)
#: ``main.end`` merges these into the job instance, when present in the event.
MAIN_END_COLS: ColumnMap = (
    ("site", "site", _ident),
    ("user", "user", _ident),
    ("work_dir", "work_dir", _ident),
    ("local_dur", "local_duration", to_float),
    ("cluster_start", "cluster_start", to_float),
    ("cluster_dur", "cluster_duration", to_float),
    ("stdin_file", "stdin_file", _ident),
    ("stdout_file", "stdout_file", _ident),
    ("stdout_text", "stdout_text", _ident),
    ("stderr_file", "stderr_file", _ident),
    ("stderr_text", "stderr_text", _ident),
    ("multiplier_factor", "multiplier_factor", _ident),
    ("exitcode", "exitcode", _ident),
    ("sched_id", "sched_id", _ident),
)
POST_END_COLS: ColumnMap = (
    ("exitcode", "exitcode", _ident),
    ("sched_id", "sched_id", _ident),
)


def _row(ev: Any, cols: ColumnMap, out: Row) -> Row:
    """``out`` with each column of ``cols`` from the event's field (an unset one is NULL)."""
    out.update(zip(_names(cols), values_of(cols)(ev), strict=True))
    return out


_NAMES: dict[int, tuple[str, ...]] = {}
_BUILDERS: dict[int, Callable[[Any], tuple[Any, ...]]] = {}


def _names(cols: ColumnMap) -> tuple[str, ...]:
    names = _NAMES.get(id(cols))
    if names is None:
        names = _NAMES[id(cols)] = tuple(col for _, col, _ in cols)
    return names


def values_of(cols: ColumnMap) -> Callable[[Any], tuple[Any, ...]]:
    """The column values of ``cols`` from an event, as one function made once per map (one
    call per row in place of a loop, a lookup and a call per column): an unset or absent
    field is None, then coerced as :func:`_row` always did (``to_bool(None)`` is False)."""
    build = _BUILDERS.get(id(cols))
    if build is None:
        scope: dict[str, Any] = {"UNSET": UNSET, "_get": getattr}
        lines = []
        for i, (field, _, conv) in enumerate(cols):
            lines.append(f"v = _get(ev, {field!r}, None)")
            if conv is _ident:
                lines.append(f"a{i} = None if v is UNSET else v")
            elif conv is to_float:  # most are floats already: no call
                scope[f"c{i}"] = conv
                lines.append(
                    f"a{i} = v if v.__class__ is float else c{i}(None if v is UNSET else v)"
                )
            else:
                scope[f"c{i}"] = conv
                lines.append(f"a{i} = c{i}(None if v is UNSET else v)")
        lines.append(f"return ({''.join(f'a{i}, ' for i in range(len(cols)))})")
        build = _BUILDERS[id(cols)] = make_function("build", ["ev"], lines, scope)
    return build


_CHANGES: dict[int, Callable[[Any], Row]] = {}


def changes_of(cols: ColumnMap) -> Callable[[Any], Row]:
    """The columns of ``cols`` an event sets, coerced (an unset or absent field is left
    out), as one function made once per map, like :func:`values_of`."""
    build = _CHANGES.get(id(cols))
    if build is None:
        scope: dict[str, Any] = {"UNSET": UNSET, "_get": getattr}
        lines = ["out = {}"]
        for i, (field, col, conv) in enumerate(cols):
            lines += [f"v = _get(ev, {field!r}, UNSET)", "if v is not UNSET:"]
            if conv is _ident:
                lines.append(f"    out[{col!r}] = v")
            else:
                scope[f"c{i}"] = conv
                lines.append(f"    out[{col!r}] = c{i}(v)")
        lines.append("return out")
        build = _CHANGES[id(cols)] = make_function("build", ["ev"], lines, scope)
    return build


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
    s.workflow_files,
)
#: Per leaf table, the columns the loader fills, in the order its value tuples hold them.
LEAF_COLUMNS: dict[str, tuple[str, ...]] = {
    "workflowstate": ("wf_id", "state", "timestamp", "restart_count", "status", "reason"),
    "workflow_meta": ("wf_id", "key", "value"),
    "job_edge": ("wf_id", "parent_exec_job_id", "child_exec_job_id"),
    "task_edge": ("wf_id", "parent_abs_task_id", "child_abs_task_id"),
    "task_meta": ("task_id", "key", "value"),
    "jobstate": ("job_instance_id", "state", "timestamp", "jobstate_submit_seq", "reason"),
    "invocation": ("wf_id", "job_instance_id", *(col for _, col, _ in INVOCATION_COLS)),
    "integrity": ("wf_id", "job_instance_id", "type", "file_type", "count", "duration"),
    "tag": ("wf_id", "job_instance_id", "name", "count"),
    "workflow_files": ("wf_id", "task_id", "lfn_id", "file_type"),
}
#: Tables whose ids the loader assigns itself on SQLite (``RowStore._new_id``: the largest id
#: plus one, under the batch's write lock), parents first: their rows are queued like a leaf
#: table's and written with one ``executemany`` each.
NUMBERED_TABLES: tuple[Table, ...] = (s.job, s.task, s.job_instance)
#: Per numbered table, the columns of a row's values as the loader builds them (the id not
#: among them: it is put first when the row is queued).
NUMBERED_COLUMNS: dict[str, tuple[str, ...]] = {
    "job": ("wf_id", *(col for _, col, _ in JOB_COLS)),
    "task": ("wf_id", "job_id", *(col for _, col, _ in TASK_COLS)),
    "job_instance": ("job_id", "job_submit_seq", "sched_id", "site", "multiplier_factor"),
}
#: Leaf tables keyed by file, not by workflow: every workflow of a database writes the same
#: rows, so a row already there is the row wanted (an insert that skips it, see RowStore).
SHARED_LEAF_TABLES: tuple[Table, ...] = (s.rc_pfn,)
#: rc_lfn is global and unbounded: at most twice this many of its ids kept (rowstore.IdCache;
#: a miss is one indexed SELECT, as for a name never seen).  A file name is looked up again
#: within ~6,000 others (p90, a 20,000-job replay); 200,000 of them grew with the job count
#: (76,000 names at 100,000 jobs, ~150 B each).  The batch's names the cache lacks are read
#: ahead, 500 per SELECT (``RowStore._lfns_ahead``): at 20,000 jobs 4,096 made that 181
#: SELECTs (32 with 16,384), no single-name one, and keeps the caches flat from ~8,000 jobs on
#: (bench/README.md, "mem30f").
LFN_CACHE_GENERATION = 4_096
#: A workflow's job, job instance and task ids: at most twice this many of each kept
#: (rowstore.IdCache); past that the batch's missing jobs and tasks are read ahead, 500 per
#: SELECT (20,000 jobs: 186 + 55 with 4,096, 165 + 0 with 16,384; no single-id SELECT).
ID_CACHE_GENERATION = 4_096

REQUIRED: dict[str, tuple[str, ...]] = {t.name: _required(t) for t in s.metadata.sorted_tables}
#: Per leaf and numbered table, the places of its NOT NULL columns in its value tuples.
REQUIRED_AT: dict[str, tuple[int, ...]] = {
    name: tuple(i for i, col in enumerate(cols) if col in REQUIRED[name])
    for name, cols in (LEAF_COLUMNS | NUMBERED_COLUMNS).items()
}


def _natural_key(table: Table) -> tuple[str, ...]:
    for constraint in table.constraints:
        if isinstance(constraint, UniqueConstraint):
            return tuple(c.name for c in constraint.columns)
    return tuple(c.name for c in table.primary_key.columns)


#: Per table, the columns that name a row in a log line (its unique key, else its primary key).
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    t.name: _natural_key(t) for t in s.metadata.sorted_tables
}


def example_key(table: str, row: Row) -> str:
    """A short, log-safe name of ``row`` of ``table`` (an update: the ids it is keyed by)."""
    cols = NATURAL_KEYS.get(table, ())
    key = {c: row[c] for c in cols if c in row}
    if not key:
        key = {k: v for k, v in row.items() if k.startswith("_")} or row
    return ", ".join(f"{k}={str(v)[:120]!r}" for k, v in list(key.items())[:6])
