"""PostgreSQL: a batch's ``job.info`` and ``task.info`` rows of a workflow the loader created
are inserted in one statement per table (``BatchLoader._ids_ahead``), not one round trip
each, and every later row still points at the right one (ingest, issue 30).  The rows of
whole ingested workflows are compared with their SQLite replays by tests/test_ingest.py."""

from __future__ import annotations

import uuid

from monitord.core.events import StampedeEvent, make_event
from tests.pg_statements import query, recording_sink

JOBS = 30


def _events(wf: str) -> tuple[list[StampedeEvent], list[StampedeEvent]]:
    x = {"xwf.id": wf, "ts": 1700000000}
    plan = [make_event("wf.plan", {**x, "root.xwf.id": wf, "submit.dir": "/s", "user": "u"})]
    rest: list[StampedeEvent] = []
    for i in range(JOBS):
        job = {
            "job.id": f"job_{i}",
            "submit_file": f"job_{i}.sub",
            "type_desc": "compute",
            "clustered": "0",
            "max_retries": "3",
            "executable": "/bin/true",
            "task_count": "1",
        }
        rest.append(make_event("job.info", {**x, **job}))
        task = {"task.id": f"ID{i}", "transformation": "t", "type_desc": "compute"}
        rest.append(make_event("task.info", {**x, **task}))
    # mapped crosswise (task i -> job JOBS-1-i): a task row given another's id shows
    for i in range(JOBS):
        mapping = {"task.id": f"ID{i}", "job.id": f"job_{JOBS - 1 - i}"}
        rest.append(make_event("wf.map.task_job", {**x, **mapping}))
    return plan, rest


def test_a_batch_inserts_its_jobs_and_tasks_in_one_statement_each(pg_url: str) -> None:
    statements: list[str] = []
    sink = recording_sink(pg_url, statements)
    wf = str(uuid.uuid4())
    plan, rest = _events(wf)
    try:
        sink.write_batch(plan)
        statements.clear()
        sink.write_batch(rest)
        pairs = query(
            sink,
            "SELECT t.abs_task_id, j.exec_job_id FROM task t JOIN job j"
            " ON t.job_id = j.job_id JOIN workflow w ON t.wf_id = w.wf_id"
            " WHERE w.wf_uuid = :wf AND j.wf_id = w.wf_id",
            wf=wf,
        )
    finally:
        sink.close()
    inserts = [s.split()[2].strip('"') for s in statements if s.startswith("INSERT INTO")]
    assert (inserts.count("job"), inserts.count("task")) == (1, 1), inserts
    assert pairs == {(f"ID{i}", f"job_{JOBS - 1 - i}") for i in range(JOBS)}
