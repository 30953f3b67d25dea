"""Event → row rules of the SQL sink (spec 7.2/7.3/7.4) on small hand-written streams."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent, make_event
from sinks.runtime.base import SinkError
from sinks.sql import SQLSink
from sinks.sql.columns import escape_argv
from sinks.sql.loader import jobstate_name

ROOT = "11111111-1111-1111-1111-111111111111"
SUB = "22222222-2222-2222-2222-222222222222"
OTHER = "33333333-3333-3333-3333-333333333333"


def ev(kind: str, wf: str = ROOT, /, **attrs: Any) -> StampedeEvent:
    """``job_inst__id=1`` → attribute ``job_inst.id``; ``xwf.id`` first, as on the wire."""
    a: dict[str, Any] = {"xwf.id": attrs.pop("wf", wf)}
    a.update({k.replace("__", "."): v for k, v in attrs.items()})
    return make_event(kind, a)


def plan(
    wf: str = ROOT, root: str = ROOT, parent: str | None = None, **extra: Any
) -> StampedeEvent:
    attrs: dict[str, Any] = {
        "dax__label": "diamond",
        "dag__file__name": "diamond-0.dag",
        "ts": 1677911013,
        "submit__hostname": "host.example.org",
        "submit__dir": "/submit/run0001",
        "argv": "--dir submit",
        "user": "alice",
        "planner__version": "5.1.3",
        "root__xwf__id": root,
    }
    if parent:
        attrs["parent__xwf__id"] = parent
    attrs.update(extra)
    return ev("wf.plan", wf, **attrs)


def job(name: str, wf: str = ROOT, **extra: Any) -> StampedeEvent:
    attrs: dict[str, Any] = {
        "job__id": name,
        "submit_file": f"00/00/{name}.sub",
        "type": "1",
        "type_desc": "compute",
        "clustered": "0",
        "max_retries": "1",
        "executable": "/bin/true",
        "task_count": "1",
    }
    attrs.update(extra)
    return ev("job.info", wf, **attrs)


def inst(name: str, seq: int = 1, wf: str = ROOT) -> dict[str, Any]:
    return {"wf": wf, "job__id": name, "job_inst__id": seq}


def submit(name: str, seq: int = 1, wf: str = ROOT, ts: int = 100) -> list[StampedeEvent]:
    keys = inst(name, seq, wf)
    return [
        ev(
            "job_inst.submit.start",
            ts=ts,
            js__id=1,
            reason=None,
            sched__id="7.0",
            site="local",
            **keys,
        ),
        ev("job_inst.submit.end", ts=ts, js__id=1, reason=None, sched__id="7.0", status=0, **keys),
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "w.stampede.db"


def load(db: Path, *batches: list[StampedeEvent], restart: bool = True, **kw: Any) -> None:
    sink = SQLSink(f"sqlite:///{db}", restart=restart, **kw)
    sink.open()
    try:
        for batch in batches:
            sink.write_batch(batch)
    finally:
        sink.close()


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_jobstate_names_follow_event_and_status() -> None:
    assert jobstate_name("job_inst.pre.end", -1) == "PRE_SCRIPT_FAILED"
    assert jobstate_name("job_inst.pre.end", 0) == "PRE_SCRIPT_SUCCESS"
    assert jobstate_name("job_inst.post.end", -1) == "POST_SCRIPT_FAILED"
    assert jobstate_name("job_inst.main.end", 0) == "JOB_SUCCESS"
    assert jobstate_name("job_inst.main.end", -1) == "JOB_FAILURE"
    assert jobstate_name("job_inst.main.term", -1) == "JOB_EVICTED"
    assert jobstate_name("job_inst.submit.end", -1) == "SUBMIT_FAILED"
    assert jobstate_name("job_inst.held.start", None) == "JOB_HELD"
    assert jobstate_name("job_inst.grid.submit.end", -1) == "GRID_SUBMIT_FAILED"
    assert jobstate_name("job_inst.remote_error", None) == "REMOTE_ERROR"


def test_argv_escaping() -> None:
    assert escape_argv("a\\b 'c'") == "a\\\\b \\'c\\'"
    assert escape_argv(None) is None


def test_basic_lifecycle_rows(db: Path) -> None:
    keys = inst("a")
    load(
        db,
        [
            plan(argv="-x 'q' c:\\d"),
            job("a", argv="it's", extra_attribute="ignored"),
            ev(
                "task.info",
                task__id="ID1",
                type="1",
                type_desc="compute",
                transformation="t",
                argv="o'k",
            ),
            ev("wf.map.task_job", job__id="a", task__id="ID1"),
            ev("xwf.start", ts=90.5, reason=None, restart_count="0"),
            *submit("a"),
            ev("job_inst.main.start", ts=101, js__id=2, sched__id="7.0", **keys),
            ev("job_inst.held.start", ts=102, js__id=3, reason=" because", sched__id="7.0", **keys),
            ev("job_inst.remote_error", ts=103, js__id=4, reason=None, **keys),
            ev("inv.start", inv__id=1, ts=101, **keys),
            ev(
                "inv.end",
                inv__id=1,
                transformation="t",
                start_time=101,
                dur=2.5,
                exitcode=0,
                executable="/bin/t",
                argv="'x'",
                ts=104,
                **keys,
            ),
            ev(
                "job_inst.main.end",
                ts=105,
                js__id=5,
                site="local",
                user="alice",
                local__dur=4,
                multiplier_factor="2",
                exitcode="256",
                sched__id="7.0",
                status=-1,
                work_dir="/w",
                stdout__file="a.out",
                stderr__file="a.err",
                **keys,
            ),
            ev("job_inst.composite", ts=105, js__id=5, status=-1, **keys),
            ev(
                "job_inst.post.end",
                ts=106,
                js__id=6,
                reason=None,
                sched__id="7.0",
                status=0,
                exitcode="0",
                **keys,
            ),
            ev("task.monitoring", monitoring_event="x", **keys),
            ev("xwf.end", ts=110.0, reason=None, restart_count=0, status=1),
        ],
    )
    assert rows(db, "select planner_arguments, root_wf_id = wf_id, parent_wf_id from workflow") == [
        ("-x \\'q\\' c:\\\\d", 1, None)
    ]
    assert rows(db, "select argv, clustered from job") == [("it\\'s", 0)]
    assert rows(db, "select argv, job_id is not null from task") == [("o\\'k", 1)]
    assert rows(db, "select state, jobstate_submit_seq, reason from jobstate order by 2") == [
        ("SUBMIT", 1, None),
        ("EXECUTE", 2, None),
        ("JOB_HELD", 3, " because"),
        ("REMOTE_ERROR", 4, None),
        ("JOB_FAILURE", 5, None),
        ("POST_SCRIPT_SUCCESS", 6, None),
    ]
    # main.end columns merged, then post.end overrides the exit code (spec 5.6)
    assert rows(
        db,
        "select sched_id, site, user, local_duration, multiplier_factor, exitcode, work_dir,"
        " stdout_file, stdin_file from job_instance",
    ) == [("7.0", "local", "alice", 4, 2, 0, "/w", "a.out", None)]
    assert rows(db, "select task_submit_seq, remote_duration, exitcode, argv from invocation") == [
        (1, 2.5, 0, "\\'x\\'")
    ]
    assert rows(
        db, "select state, timestamp, restart_count, status from workflowstate order by 2"
    ) == [
        ("WORKFLOW_STARTED", 90.5, 0, None),
        ("WORKFLOW_TERMINATED", 110, 0, 1),
    ]
    assert rows(db, "select version_number, version from dbversion") == [(14, "14")]


def test_pre_start_creates_instance_and_submit_start_reuses_it(db: Path) -> None:
    keys = inst("a")
    load(
        db,
        [
            plan(),
            job("a"),
            ev("job_inst.pre.start", ts=50, js__id=1, reason=None, **keys),
            ev("job_inst.pre.end", ts=51, js__id=2, reason=None, status=-1, exitcode="256", **keys),
            *submit("a", ts=52),
        ],
    )
    assert rows(
        db, "select job_submit_seq, sched_id, site, multiplier_factor from job_instance"
    ) == [(1, None, None, 1)]
    assert rows(db, "select state from jobstate order by timestamp") == [
        ("PRE_SCRIPT_STARTED",),
        ("PRE_SCRIPT_FAILED",),
        ("SUBMIT",),
    ]


def test_jobstate_for_unknown_instance_is_logged_and_skipped(db: Path) -> None:
    with capture_logs() as logs:
        load(
            db,
            [
                plan(),
                job("a"),
                *submit("a"),
                ev("job_inst.main.start", ts=101, js__id=2, **inst("a", seq=9)),
                ev("job_inst.main.start", ts=101, js__id=2, **inst("nosuchjob")),
                ev("job_inst.main.start", ts=101, js__id=2, **inst("a")),
            ],
        )
    assert rows(db, "select state from jobstate order by jobstate_submit_seq") == [
        ("SUBMIT",),
        ("EXECUTE",),
    ]
    assert sum(e["event"] == "event for an unknown job instance" for e in logs) == 2


def test_second_tag_for_an_instance_is_rejected(db: Path) -> None:
    keys = inst("a")
    with capture_logs() as logs:
        load(
            db,
            [
                plan(),
                job("a"),
                *submit("a"),
                ev("job_inst.tag", name="int.error", count=2, ts=5, **keys),
                ev("job_inst.tag", name="int.error", count=3, ts=6, **keys),
            ],
            [ev("job_inst.tag", name="int.error", count=4, ts=7, **keys)],
        )
    assert rows(db, "select name, count from tag") == [("int.error", 2)]
    assert any("rejected" in e["event"] for e in logs)


def test_first_host_info_wins_and_hosts_key_on_root_workflow(db: Path) -> None:
    keys = inst("a")
    sub_keys = inst("s", wf=SUB)

    def host(name: str, k: dict[str, Any]) -> StampedeEvent:
        return ev(
            "job_inst.host.info",
            hostname=name,
            ip="10.0.0.1",
            site="local",
            uname="linux",
            ts=1,
            **k,
        )

    load(
        db,
        [
            plan(),
            job("a"),
            *submit("a"),
            host("first.example.org", keys),
            host("second.example.org", keys),
        ],
        [
            plan(SUB, root=ROOT, parent=ROOT),
            job("s", wf=SUB),
            *submit("s", wf=SUB),
            host("first.example.org", sub_keys),
        ],
    )
    hosts = rows(db, "select h.hostname, w.wf_uuid from host h join workflow w using (wf_id)")
    assert sorted(hosts) == [("first.example.org", ROOT), ("second.example.org", ROOT)]
    linked = rows(
        db,
        "select j.exec_job_id, h.hostname from job_instance i join job j using (job_id)"
        " join host h using (host_id) order by 1",
    )
    assert linked == [("a", "first.example.org"), ("s", "first.example.org")]


def test_sub_workflow_links_and_duplicate_plan(db: Path) -> None:
    with capture_logs() as logs:
        load(
            db,
            [
                plan(),
                job("plan_sub"),
                *submit("plan_sub"),
                plan(SUB, root=ROOT, parent=ROOT, dag__file__name="inner.dag"),
                plan(SUB, root=ROOT, parent=ROOT, dag__file__name="dupe.dag"),
                make_event(
                    "xwf.map.subwf_job",
                    {"xwf.id": ROOT, "subwf.id": SUB, "job.id": "plan_sub", "job_inst.id": 1},
                ),
                ev("xwf.meta", SUB, key="wf.api", value="python"),
            ],
        )
    assert rows(
        db,
        "select w.wf_uuid, w.dag_file_name, p.wf_uuid, r.wf_uuid from workflow w"
        " left join workflow p on p.wf_id = w.parent_wf_id"
        " left join workflow r on r.wf_id = w.root_wf_id order by w.wf_id",
    ) == [(ROOT, "diamond-0.dag", None, ROOT), (SUB, "inner.dag", ROOT, ROOT)]
    assert rows(
        db, "select w.wf_uuid from job_instance i join workflow w on w.wf_id = i.subwf_id"
    ) == [(SUB,)]
    assert rows(db, "select key, value from workflow_meta") == [("wf.api", "python")]
    assert any("duplicate workflow" in e["event"] for e in logs)


def test_a_stream_loaded_twice_in_one_batch_logs_each_entity_seen_again(db: Path) -> None:
    """A stock producer's stream published twice may reach the loader as one batch: the
    second ``job.info``/``task.info`` are found in the cache of the workflow this loader has
    just created (its end has not dropped it yet) and ignored with their log line, not
    queued again for the database to refuse (CI of 2026-11-29, tests/test_ingest_reference.py)."""
    task = ev(
        "task.info", task__id="ID01", transformation="t", argv="", type=1, type_desc="compute"
    )
    stream = [plan(), job("a"), task, ev("xwf.end", ts=5.0, reason=None, restart_count=0, status=0)]
    with capture_logs() as logs:
        load(db, stream + stream)
    said = [e["event"] for e in logs]
    assert "duplicate workflow uuid, wf.plan ignored" in said
    assert "duplicate job, job.info ignored" in said
    assert "duplicate task, task.info ignored" in said
    refused = [e for e in logs if e["event"].startswith("batch rejected")]
    assert [e["table"] for e in refused] == ["workflowstate"], refused  # (xwf.end again)
    assert rows(db, "select exec_job_id from job") == [("a",)]
    assert rows(db, "select abs_task_id from task") == [("ID01",)]


def test_replica_catalog_rows(db: Path) -> None:
    load(
        db,
        [
            plan(),
            plan(OTHER, root=OTHER),
            ev("task.info", task__id="ID1", type="1", type_desc="compute", transformation="t"),
            ev("task.meta", task__id="ID1", key="k", value="v"),
            ev("wf.map.file", task__id="ID1", lfn__id="f.txt"),
            ev("rc.meta", lfn__id="f.txt", key="size", value="1", ts=1),
            ev("rc.meta", lfn__id="f.txt", key="size", value="2", ts=2),
        ],
        [
            ev("rc.meta", OTHER, lfn__id="f.txt", key="size", value="3", ts=3),
            ev("rc.pfn", OTHER, lfn__id="f.txt", pfn="file:///f.txt", site="local"),
        ],
    )
    assert rows(db, "select lfn from rc_lfn") == [("f.txt",)]  # global, one row
    assert rows(db, "select key, value from rc_meta") == [("size", "3")]  # merged
    assert rows(db, "select pfn, site from rc_pfn") == [("file:///f.txt", "local")]
    assert rows(db, "select file_type is null from workflow_files") == [(1,)]
    assert rows(db, "select key, value from task_meta") == [("k", "v")]


def test_rejected_rows_do_not_lose_the_rest_of_the_batch(db: Path) -> None:
    keys = inst("a")
    edge = ev("job.edge", parent__job__id="a", child__job__id="b")
    meta = ev("xwf.meta", key="k", value="v")
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    sink.open()
    with capture_logs() as logs:
        sink.write_batch([plan(), job("a"), job("b"), edge, *submit("a")])
        sink.write_batch(
            [
                edge,  # duplicate primary key: the whole batch is redone row by row
                meta,
                meta,  # and another one, in another table
                ev(
                    "inv.end",
                    inv__id=1,
                    transformation="t",
                    start_time=1,
                    dur=1,
                    executable="/bin/t",
                    ts=2,
                    exitcode=None,
                    **keys,
                ),  # NOT NULL exitcode is null
                ev("job_inst.main.start", ts=101, js__id=2, **keys),
                job("c"),
            ]
        )
    sink.close()
    assert rows(db, "select count(*) from job_edge") == [(1,)]
    assert rows(db, "select key from workflow_meta") == [("k",)]
    assert rows(db, "select count(*) from invocation") == [(0,)]
    assert rows(db, "select state from jobstate order by jobstate_submit_seq") == [
        ("SUBMIT",),
        ("EXECUTE",),
    ]
    assert rows(db, "select exec_job_id from job order by 1") == [("a",), ("b",), ("c",)]
    # one line for the batch, whatever the number of rows it lost: table, count, an example
    fallback = [e for e in logs if "row by row" in e["event"]]
    assert len(fallback) == 1, fallback
    (line,) = fallback
    assert line["log_level"] == "error" and line["rows"] == 2 and line["events"] == 6
    assert line["tables"] == {"job_edge": 1, "workflow_meta": 1}
    assert line["table"] == "job_edge"
    assert "parent_exec_job_id='a'" in line["key"] and "child_exec_job_id='b'" in line["key"]
    assert "UNIQUE constraint failed" in line["error"]
    assert not [e for e in logs if e["event"] == "rejected row"]
    assert sink.counters == {"row_by_row_batches": 1, "rows_rejected": 2}


def test_files_other_workflows_registered_are_no_rejected_rows(db: Path) -> None:
    """rc_pfn rows already in the database (another workflow's, or this one's retried) are
    skipped in the batch itself: no fallback, no counter, the rows once."""
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    sink.open()
    pfn = ev("rc.pfn", lfn__id="f.txt", pfn="file:///f.txt", site="local")
    with capture_logs() as logs:
        sink.write_batch([plan(), pfn, pfn])
        sink.write_batch(
            [
                plan(OTHER, root=OTHER),
                ev("rc.pfn", OTHER, lfn__id="f.txt", pfn="file:///f.txt", site="local"),
            ]
        )
        sink.write_batch([ev("rc.pfn", lfn__id="f.txt", pfn="file:///f.txt", site=None)])
    sink.close()
    assert rows(db, "select l.lfn, p.pfn, p.site from rc_pfn p join rc_lfn l using (lfn_id)") == [
        ("f.txt", "file:///f.txt", "local"),
        ("f.txt", "file:///f.txt", None),
    ]
    assert not [e for e in logs if e["log_level"] in ("warning", "error")], logs
    assert sink.counters == {"row_by_row_batches": 0, "rows_rejected": 0}


def test_later_batches_and_new_sessions_find_existing_rows(db: Path) -> None:
    keys = inst("a")
    load(
        db,
        [plan(), job("a"), *submit("a")],
        [ev("xwf.end", ts=5.0, reason=None, restart_count=0, status=0)],
    )
    # caches for the ended workflow are gone; a new daemon resumes on the same DB
    load(
        db,
        [
            ev("job_inst.main.start", ts=101, js__id=2, **keys),
            *submit("a", seq=2, ts=200),
            ev("xwf.start", ts=150.0, reason=None, restart_count=1),
        ],
        restart=False,
    )
    assert rows(
        db,
        "select job_submit_seq, count(*) from job_instance i join jobstate using"
        " (job_instance_id) group by 1",
    ) == [(1, 2), (2, 1)]
    assert rows(db, "select count(*) from job") == [(1,)]


def test_locked_database_is_a_retryable_error(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sink = SQLSink(f"sqlite:///{db}", restart=True, engine_kw={"connect_args": {"timeout": 0.05}})
    sink.open()
    sink.write_batch([plan()])
    batch = [job("a"), *submit("a")]
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    with pytest.raises(SinkError) as info:
        sink.write_batch(batch)
    assert info.value.retryable
    blocker.execute("ROLLBACK")
    blocker.close()
    sink.write_batch(batch)  # the caller retries the same batch
    sink.close()
    assert rows(db, "select count(*) from job_instance") == [(1,)]
    assert rows(db, "select count(*) from jobstate") == [(1,)]


def _many_jobs(n: int, dagman_seq: bool = False) -> list[list[StampedeEvent]]:
    """``n`` jobs with a task each, every instance's life in a later batch, then a retry of
    the first jobs: ids the loader must find again long after it cached them.  Instance
    sequence numbers 1 then 2 per job, or ``dagman_seq``: DAGMan's, one counter for the
    workflow (behaviour spec 4.1)."""
    static = [plan(), ev("xwf.start", ts=90.0, reason=None, restart_count=0)]
    for i in range(n):
        name = f"j{i}"
        static.append(job(name))
        static.append(
            ev("task.info", task__id=f"ID{i}", type="1", type_desc="c", transformation="t")
        )
    static += [ev("wf.map.task_job", job__id=f"j{i}", task__id=f"ID{i}") for i in range(n)]
    runs: list[StampedeEvent] = []
    submits = 0
    for seq, names in ((1, range(n)), (2, range(3))):
        for i in names:
            submits += 1
            seq = submits if dagman_seq else seq
            keys = inst(f"j{i}", seq)
            runs += submit(f"j{i}", seq, ts=100 + i)
            runs += [
                ev("job_inst.main.start", ts=101 + i, js__id=2, **keys),
                ev(
                    "inv.end",
                    inv__id=1,
                    transformation="t",
                    start_time=101 + i,
                    dur=1.0,
                    exitcode=0,
                    executable="/bin/t",
                    ts=102 + i,
                    **keys,
                ),
                ev("job_inst.main.end", ts=103 + i, js__id=3, status=0, exitcode="0", **keys),
            ]
    # a duplicated line of an early instance, and a task's metadata, after every other id
    late = [
        ev("job_inst.post.start", ts=300, js__id=4, reason=None, sched__id="7.0", **inst("j0")),
        ev("task.meta", task__id="ID0", key="k", value="v"),
    ]
    return [static, runs[: len(runs) // 2], runs[len(runs) // 2 :], late]


def test_id_caches_are_bounded_and_dropped_ids_are_found_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the loader's job, instance and task ids stay bounded in the job count (two
    generations of ``ID_CACHE_GENERATION``); an id dropped is read back from the database,
    so the rows are those of an unbounded cache."""
    import subprocess
    import sys

    from sinks.sql import rowstore
    from tests.conftest import STAMPEDE_DIFF

    batches = _many_jobs(40)
    load(tmp_path / "full.db", *batches)
    monkeypatch.setattr(rowstore, "ID_CACHE_GENERATION", 4)
    sink = SQLSink(f"sqlite:///{tmp_path / 'small.db'}", restart=True)
    sink.open()
    sizes = []
    try:
        for batch in batches:
            sink.write_batch(batch)
            wf = sink._loader._wfs[ROOT]
            sizes.append((len(wf.jobs), len(wf.instances), len(wf.tasks)))
    finally:
        sink.close()
    assert max(max(s) for s in sizes) <= 8, sizes
    assert rows(tmp_path / "small.db", "select count(*) from job_instance") == [(43,)]
    assert rows(tmp_path / "small.db", "select count(*) from task where job_id is null") == [(0,)]
    diff = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(tmp_path / "full.db"), str(tmp_path / "small.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert diff.returncode == 0, diff.stdout[-4000:]


def test_past_the_id_caches_a_batch_writes_each_numbered_table_once_and_selects_no_new_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30 at 100,000 jobs: once the id caches dropped ids, a lookup must not first write
    the numbered rows queued so far (the caches keep every id of the open batch, so a miss
    is never one of them): one ``executemany`` per numbered table and batch.  And a new job
    instance of a workflow this loader created needs no SELECT: its sequence number is above
    every one the loader gave (``WfCache.top_seq``), so each instance SELECT finds a row."""
    from sinks.sql import rowstore
    from sinks.sql.rawsql import RawSQL

    monkeypatch.setattr(rowstore, "ID_CACHE_GENERATION", 4)
    writes: list[tuple[int, str]] = []
    found: list[tuple[str, Any]] = []
    written: list[int] = []  # batches written so far
    insert_values, scalar = RawSQL.insert_values, RawSQL.scalar

    def counted_insert(self: RawSQL, table: Any, cols: Any, rows: list[Any]) -> None:
        writes.append((len(written), table.name))
        insert_values(self, table, cols, rows)

    def counted_scalar(self: RawSQL, prep: Any, row: Any) -> Any:
        got = scalar(self, prep, row)
        if "FROM job_instance" in prep.sql and "max" not in prep.sql:
            found.append((repr(row), got))
        return got

    monkeypatch.setattr(RawSQL, "insert_values", counted_insert)
    monkeypatch.setattr(RawSQL, "scalar", counted_scalar)
    sink = SQLSink(f"sqlite:///{tmp_path / 'small.db'}", restart=True)
    sink.open()
    try:
        for batch in _many_jobs(40, dagman_seq=True):
            sink.write_batch(batch)
            written.append(len(batch))
    finally:
        sink.close()
    numbered = [w for w in writes if w[1] in ("job", "task", "job_instance")]
    assert len(numbered) == len(set(numbered)), numbered
    assert found and all(got is not None for _, got in found), found
    assert rows(tmp_path / "small.db", "select count(*) from job_instance") == [(43,)]


def test_writers_sharing_a_sqlite_file_each_number_their_rows_in_turn(db: Path) -> None:
    """Issue 30: on SQLite the loader numbers job, task and job instance rows itself (the
    largest id plus one, under the batch's write lock).  Two daemons writing their workflows
    into one file take turns at the lock: each batch must read the largest ids again, so that
    neither reuses an id the other took meanwhile (a clash would roll the batch back and
    write it row by row)."""
    sinks = {wf: SQLSink(f"sqlite:///{db}") for wf in (ROOT, OTHER)}
    for sink in sinks.values():
        sink.open()
    try:
        for wf, sink in sinks.items():
            sink.write_batch([plan(wf, wf), job(f"{wf[:1]}0", wf), *submit(f"{wf[:1]}0", wf=wf)])
        for n in range(1, 4):  # in turn: each batch after the other writer's
            for wf, sink in sinks.items():
                name = f"{wf[:1]}{n}"
                task = ev(
                    "task.info", wf, task__id=f"t{n}", transformation="x", type_desc="compute"
                )
                link = ev("wf.map.task_job", wf, task__id=f"t{n}", job__id=name)
                sink.write_batch([job(name, wf), task, link, *submit(name, wf=wf)])
        assert [s.counters["row_by_row_batches"] for s in sinks.values()] == [0, 0]
    finally:
        for sink in sinks.values():
            sink.close()
    owners = rows(
        db,
        "select w.wf_uuid, j.exec_job_id, t.abs_task_id from job_instance i"
        " join job j using (job_id) join workflow w using (wf_id)"
        " left join task t on t.job_id = j.job_id order by 1, 2",
    )
    expected = [
        (wf, f"{wf[:1]}{n}", f"t{n}" if n else None) for wf in (ROOT, OTHER) for n in range(4)
    ]
    assert owners == sorted(expected)
    assert rows(db, "select count(*), count(distinct job_id) from job_instance") == [(8, 8)]


def test_the_lfn_cache_is_bounded_and_dropped_names_are_found_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the global file-name ids stay bounded in the job count (two generations of
    ``LFN_CACHE_GENERATION``); a name dropped is read back, never inserted twice."""
    from sinks.sql import rowstore

    names = [f"f{i}.txt" for i in range(30)]
    first = [plan(), ev("task.info", task__id="ID1", type="1", type_desc="c", transformation="t")]
    first += [ev("wf.map.file", task__id="ID1", lfn__id=n) for n in names]
    again = [ev("rc.meta", lfn__id=n, key="size", value="1", ts=1) for n in reversed(names)]
    monkeypatch.setattr(rowstore, "LFN_CACHE_GENERATION", 4, raising=False)
    db = tmp_path / "small.db"
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    sink.open()
    sizes = []
    try:
        for batch in (first, again):
            sink.write_batch(batch)
            sizes.append(len(sink._loader._lfns))
    finally:
        sink.close()
    assert max(sizes) <= 8, sizes
    assert rows(db, "select count(*), count(distinct lfn) from rc_lfn") == [(30, 30)]
    assert rows(db, "select count(*) from rc_meta") == [(30,)]
