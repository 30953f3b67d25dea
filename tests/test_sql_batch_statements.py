"""Issue 30: the statements a SQLite batch runs for its new file names and new job instances,
and the rows they leave (equal to those of one statement per row)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import bindparam

from monitord.core.events import StampedeEvent
from sinks.sql import SQLSink
from sinks.sql.rawsql import Prepared, RawSQL
from tests.test_sql_loader import OTHER, ROOT, ev, inst, job, load, plan, rows, submit


def _statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the loader's fast path runs (an ``executemany`` counted once)."""
    seen: list[str] = []
    scalar, run_many, insert_id = RawSQL.scalar, RawSQL._run_many, RawSQL.insert_id
    rows_of = getattr(RawSQL, "rows", None)

    def count_scalar(self: RawSQL, prep: Any, row: Any) -> Any:
        seen.append(prep.sql)
        return scalar(self, prep, row)

    def count_many(self: RawSQL, prep: Any, params: Any, **how: Any) -> None:
        seen.append(prep.sql)
        run_many(self, prep, params, **how)

    def count_insert_id(self: RawSQL, table: Any, row: Any) -> int:
        seen.append(f"INSERT INTO {table.name}")
        return insert_id(self, table, row)

    monkeypatch.setattr(RawSQL, "scalar", count_scalar)
    monkeypatch.setattr(RawSQL, "_run_many", count_many)
    monkeypatch.setattr(RawSQL, "insert_id", count_insert_id)
    if rows_of is not None:

        def count_rows(self: RawSQL, sql: str, params: Any) -> Any:
            seen.append(sql)
            return rows_of(self, sql, params)

        monkeypatch.setattr(RawSQL, "rows", count_rows)
    return seen


def _files(wf: str, names: list[str]) -> list[StampedeEvent]:
    """A task of ``wf`` and each name's file events: map, metadata, and a replica."""
    out = [ev("task.info", wf, task__id="ID1", type="1", type_desc="c", transformation="t")]
    for n in names:
        out += [
            ev("wf.map.file", wf, task__id="ID1", lfn__id=n),
            ev("rc.meta", wf, lfn__id=n, key="size", value=f"{len(n)}", ts=1),
            ev("rc.pfn", wf, lfn__id=n, pfn=f"file:///{n}", site="local"),
        ]
    return out


def test_a_batch_gets_its_new_file_names_in_one_select_and_one_insert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's file names not cached: one SELECT for all of them and one INSERT for the new
    ones, not a SELECT and an INSERT per name (15,229 names at 20,000 jobs).  The names
    another writer of the file registered are found, not inserted again, and the new ones
    are numbered in the order of their first event, as an insert each numbered them."""
    db = tmp_path / "shared.db"
    theirs = [f"old{i}.txt" for i in range(12)]
    ours = [f"new{i}.txt" for i in range(12)]
    mixed = [n for pair in zip(ours, theirs, strict=True) for n in pair]
    other = SQLSink(f"sqlite:///{db}")
    mine = SQLSink(f"sqlite:///{db}")
    for sink in (other, mine):
        sink.open()
    try:
        other.write_batch([plan(OTHER, OTHER), *_files(OTHER, theirs)])
        mine.write_batch([plan(ROOT, ROOT)])
        seen = _statements(monkeypatch)
        mine.write_batch(_files(ROOT, mixed))
        assert [s.counters["row_by_row_batches"] for s in (other, mine)] == [0, 0]
    finally:
        for sink in (other, mine):
            sink.close()
    lfn_statements = [s for s in seen if "rc_lfn" in s and "max(" not in s.lower()]
    assert len(lfn_statements) == 2, lfn_statements
    assert rows(db, "select lfn from rc_lfn order by lfn_id") == [(n,) for n in theirs + ours]
    for table, names in (("workflow_files", theirs + mixed), ("rc_pfn", theirs + ours)):
        named = rows(db, f"select l.lfn from {table} t join rc_lfn l using (lfn_id)")
        assert sorted(named) == sorted((n,) for n in names), table
    meta = rows(db, "select lfn, value from rc_meta join rc_lfn using (lfn_id)")
    assert sorted(meta) == sorted((n, str(len(n))) for n in theirs + ours)


def _lives(names: list[str]) -> list[StampedeEvent]:
    """Each job's instance: submitted, run, ended, on a host, then its post script."""
    out: list[StampedeEvent] = []
    for i, name in enumerate(names):
        keys = inst(name)
        out += submit(name, ts=100 + i)
        out += [
            ev(
                "job_inst.host.info",
                hostname=f"h{i % 2}",
                ip="10.0.0.1",
                site="local",
                uname="linux",
                ts=101 + i,
                **keys,
            ),
            ev(
                "job_inst.host.info",
                hostname="late",
                ip="10.0.0.9",
                site="local",
                uname="linux",
                ts=101 + i,
                **keys,
            ),
            ev(
                "job_inst.main.end",
                ts=102 + i,
                js__id=3,
                status=0,
                exitcode=str(i),
                stdout__file=f"{name}.out",
                stdout__text="ok",
                work_dir="/w",
                user="alice",
                local_dur=1.5,
                multiplier_factor=i % 3 or None,
                **keys,
            ),
            ev("job_inst.post.end", ts=103 + i, js__id=4, status=1, exitcode="1", **keys),
        ]
    return out


_INSTANCE_ROWS = (
    "select i.*, h.hostname from job_instance i left join host h using (host_id) order by 1"
)


def test_a_job_instance_new_in_its_batch_is_inserted_with_its_final_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job instance inserted and changed in one batch (~35 % of a replay's instance
    updates) is inserted with its final values: no UPDATE of it.  Its row equals the one an
    insert and then the merged updates leave (each event in a batch of its own), the first
    host kept."""
    names = [f"j{i}" for i in range(6)]
    static = [plan(), *(job(n) for n in names)]
    lives = _lives(names)
    apart = tmp_path / "apart.db"
    load(apart, static, *([e] for e in lives))
    together = tmp_path / "together.db"
    seen = _statements(monkeypatch)
    load(together, static, lives)
    updates = [s for s in seen if s.startswith("UPDATE job_instance")]
    assert updates == []
    expected = rows(apart, _INSTANCE_ROWS)
    assert rows(together, _INSTANCE_ROWS) == expected
    assert [r[-1] for r in expected] == [f"h{i % 2}" for i in range(6)]  # the first host
    changed = "select stdout_file, exitcode, multiplier_factor from job_instance order by 1"
    assert rows(apart, changed) == [(f"j{i}.out", 1, i % 3 or 1) for i in range(6)]


def test_an_instance_of_an_earlier_batch_is_still_updated(tmp_path: Path) -> None:
    """Only this batch's new instances take their changes at insert: an earlier batch's
    get the UPDATE (its values, and its first host: a later one does not replace it)."""
    names = ["a", "b"]
    first = [plan(), *(job(n) for n in names), *submit("a")]
    second = [*submit("b"), *_lives(["a"])[2:]]
    db = tmp_path / "w.db"
    load(db, first, second)
    assert rows(
        db,
        "select j.exec_job_id, i.exitcode, i.stdout_file, h.hostname from job_instance i"
        " join job j using (job_id) left join host h using (host_id) order by 1",
    ) == [("a", 1, "a.out", "h0"), ("b", None, None, None)]


def _host(name: str, hostname: str) -> StampedeEvent:
    return ev("job_inst.host.info", hostname=hostname, ip="10.0.0.1", site="local", **inst(name))


def _main_end(name: str) -> StampedeEvent:
    keys = inst(name)
    return ev("job_inst.main.end", ts=102, js__id=3, status=0, stdout__file=f"{name}.o", **keys)


def test_an_earlier_instance_takes_its_update_and_first_host_in_one_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier batch's instances, changed and given hosts in this one: one UPDATE of
    ``job_instance`` for the columns and the first host together (~13,000 row look-ups
    fewer at 20,000 jobs), not one for each.  The rows equal those of each event in a batch
    of its own; an instance that had a host keeps it (the first host wins)."""
    names = ["a", "b", "c"]
    first = [plan(), *(job(n) for n in names), *(e for n in names for e in submit(n))]
    had_host = [_host("c", "h0")]
    later = [_host("a", "h1"), _main_end("a"), _main_end("b"), _host("b", "h2")]
    later += [_host("c", "h9"), _main_end("c")]
    apart = tmp_path / "apart.db"
    load(apart, first, had_host, *([e] for e in later))
    together = tmp_path / "together.db"
    sink = SQLSink(f"sqlite:///{together}", restart=True)
    sink.open()
    try:
        sink.write_batch(first)
        sink.write_batch(had_host)
        seen = _statements(monkeypatch)
        sink.write_batch(later)
    finally:
        sink.close()
    updates = [s for s in seen if s.startswith("UPDATE job_instance")]
    assert len(updates) == 1, updates
    assert rows(together, _INSTANCE_ROWS) == rows(apart, _INSTANCE_ROWS)
    found = rows(together, _INSTANCE_ROWS.replace("i.*", "i.stdout_file"))
    assert found == [("a.o", "h1"), ("b.o", "h2"), ("c.o", "h0")]


def test_in_slow_mode_the_rows_are_the_same(tmp_path: Path) -> None:
    """A batch written row by row (after a rollback) leaves the rows the fast path leaves."""
    names = [f"j{i}" for i in range(4)]
    batch = [plan(), *(job(n) for n in names), *_lives(names), *_files(ROOT, ["x", "y"])]
    fast, slow = tmp_path / "fast.db", tmp_path / "slow.db"
    load(fast, batch)
    sink = SQLSink(f"sqlite:///{slow}", restart=True)
    sink.open()
    try:
        with sink._transaction(sink._require_engine()) as conn:
            sink._loader.load(conn, batch, slow=True)
    finally:
        sink.close()
    for sql in (_INSTANCE_ROWS, "select * from rc_lfn order by 1", "select * from rc_meta"):
        assert rows(fast, sql) == rows(slow, sql), sql
    with sqlite3.connect(fast) as conn:
        assert conn.execute("select count(*) from job_instance").fetchone() == (4,)


def _past_the_id_cache(
    db: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: list[StampedeEvent],
    cached: list[StampedeEvent],
    last: list[StampedeEvent],
) -> list[str]:
    """Writes ``first``, then ``cached`` five events a batch into id caches of four
    generations (so their first ids are dropped), then ``last``: the statements of ``last``."""
    from sinks.sql import rowstore

    monkeypatch.setattr(rowstore, "ID_CACHE_GENERATION", 4)
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    sink.open()
    try:
        sink.write_batch(first)
        for start in range(0, len(cached), 5):
            sink.write_batch(cached[start : start + 5])
        seen = _statements(monkeypatch)
        sink.write_batch(last)
    finally:
        sink.close()
    return seen


def test_tasks_past_the_id_cache_are_read_in_one_select_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the id caches' bound (100,000 jobs), a batch's file maps and task links name
    tasks cached long ago: their ids are read in one SELECT for the batch, not one each, and
    every row points at its own task."""
    n = 30
    tasks = [
        ev("task.info", task__id=f"ID{i}", type="1", type_desc="c", transformation=f"t{i}")
        for i in range(n)
    ]
    maps = [ev("wf.map.file", task__id=f"ID{i}", lfn__id=f"f{i}") for i in range(n)]
    maps += [ev("wf.map.task_job", task__id=f"ID{i}", job__id=f"j{i}") for i in range(n)]
    maps += [ev("task.meta", task__id=f"ID{i}", key="k", value=f"v{i}") for i in range(n)]
    db = tmp_path / "small.db"
    jobs = [job(f"j{i}") for i in range(n)]
    seen = _past_the_id_cache(db, monkeypatch, [plan(), *jobs], tasks, maps)
    task_selects = [s for s in seen if s.startswith("SELECT") and "FROM task" in s]
    assert len(task_selects) == 1, task_selects
    for prefix, sql in (
        (
            "f",
            "select t.transformation, l.lfn from workflow_files join task t using (task_id)"
            " join rc_lfn l using (lfn_id)",
        ),
        ("j", "select t.transformation, j.exec_job_id from task t join job j using (job_id)"),
        ("v", "select t.transformation, m.value from task_meta m join task t using (task_id)"),
    ):
        assert sorted(rows(db, sql)) == sorted((f"t{i}", f"{prefix}{i}") for i in range(n)), sql


def test_jobs_past_the_id_cache_are_read_in_one_select_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the id caches' bound (20,000 jobs), a batch's new job instances and task links
    name jobs cached long ago: their ids are read in one SELECT for the batch, not one per
    instance, and every instance and task points at its own job."""
    n = 30
    jobs = [job(f"j{i}") for i in range(n)]
    tasks = [
        ev("task.info", task__id=f"ID{i}", type="1", type_desc="c", transformation=f"t{i}")
        for i in range(n)
    ]
    later: list[StampedeEvent] = []
    for i in range(n):
        later += submit(f"j{i}", ts=100 + i)
        later.append(ev("wf.map.task_job", task__id=f"ID{i}", job__id=f"j{i}"))
    db = tmp_path / "small.db"
    seen = _past_the_id_cache(db, monkeypatch, [plan(), *tasks], jobs, later)
    job_selects = [s for s in seen if s.startswith("SELECT") and "FROM job " in s]
    assert len(job_selects) == 1, job_selects
    want = sorted((f"j{i}", 1) for i in range(n))
    sql = "select j.exec_job_id, i.job_submit_seq from job_instance i join job j using (job_id)"
    assert sorted(rows(db, sql)) == want
    sql = "select t.transformation, j.exec_job_id from task t join job j using (job_id)"
    assert sorted(rows(db, sql)) == sorted((f"t{i}", f"j{i}") for i in range(n))


def test_the_new_instances_rows_are_bound_as_they_are_queued() -> None:
    """The batch's new job instance rows (``_with_extra``) are in the order their INSERT
    binds: the driver gets them as they are (``params_of``), no dict built per row."""
    from sqlalchemy.dialects import sqlite

    from sinks.sql import schema as s
    from sinks.sql.rowstore import _JI_FULL_COLUMNS

    stmt = s.job_instance.insert().values({c: bindparam(c) for c in _JI_FULL_COLUMNS})
    compiled = stmt.compile(dialect=sqlite.dialect())
    assert tuple(compiled.positiontup or ()) == _JI_FULL_COLUMNS


def test_rows_bound_in_another_order_are_picked_by_position(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A statement binding a row's columns in another order (a job instance UPDATE's SET
    follows the table, the row its merged changes) gets each row's values in its own
    order, picked by position: not through a dict and :meth:`Prepared.params` per row."""
    prep = Prepared("UPDATE t SET b=?, a=? WHERE id = ?", ("b", "a", "_ji"), True, False)

    def no_dict(self: Prepared, row: Any) -> Any:
        raise AssertionError("a dict per row")

    monkeypatch.setattr(Prepared, "params", no_dict)
    rows = [(1, "x", 7), (2, "y", 8)]
    assert prep.params_of(("a", "b", "_ji"), rows) == [("x", 1, 7), ("y", 2, 8)]
    assert prep.params_of(("b", "a", "_ji"), rows) is rows
