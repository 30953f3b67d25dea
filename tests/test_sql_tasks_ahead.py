"""PostgreSQL: the ``task.info`` rows of a workflow planned in the same batch are inserted
in one statement from the first one's place (``BatchLoader._tasks_from``), not one
``INSERT .. RETURNING`` each, with the ids one insert each gave them (event order, across
workflows); a task whose outcome is not certain there (its workflow planned later in the
batch) ends the statement, and it and those after it go from its own place (ingest, issue
30)."""

from __future__ import annotations

import uuid

from monitord.core.events import StampedeEvent, make_event
from tests.pg_statements import query, recording_sink
from tests.test_sql_loader import job, plan

TASKS = 8


def _task(wf: str, name: str) -> StampedeEvent:
    attrs = {"xwf.id": wf, "task.id": name, "transformation": "t", "type_desc": "compute"}
    return make_event("task.info", attrs)


def _map(wf: str, task: str, job_name: str) -> StampedeEvent:
    return make_event("wf.map.task_job", {"xwf.id": wf, "task.id": task, "job.id": job_name})


def test_tasks_of_workflows_planned_in_the_batch_go_in_event_order(pg_url: str) -> None:
    statements: list[str] = []
    sink = recording_sink(pg_url, statements)
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    order = [(a, "A0"), (a, "A1")]
    # a mapping before its task's row: not found, as when each task was inserted at its place
    batch = [plan(a, a), plan(b, b), job("j", a), _task(a, "A0"), _map(a, "A1", "j")]
    batch.append(_task(a, "A1"))
    for i in range(TASKS):  # two workflows interleaved
        wf, name = (a, f"A{i + 2}") if i % 2 else (b, f"B{i}")
        batch.append(_task(wf, name))
        order.append((wf, name))
    batch.append(plan(c, c))  # planned after the first run of tasks began: it ends the run
    for i in range(TASKS):
        wf, name = (c, f"C{i}") if i % 2 else (a, f"A{i + 20}")
        batch.append(_task(wf, name))
        order.append((wf, name))
    batch.append(_map(a, "A0", "j"))
    try:
        sink.write_batch(batch)
        found = query(
            sink,
            "SELECT t.task_id, w.wf_uuid, t.abs_task_id, t.job_id FROM task t"
            " JOIN workflow w ON t.wf_id = w.wf_id WHERE w.wf_uuid = ANY(:wfs)",
            wfs=[a, b, c],
        )
    finally:
        sink.close()
    by_id = sorted(found)
    inserts = [s.split()[2].strip('"') for s in statements if s.startswith("INSERT INTO")]
    assert [(w, t) for _, w, t, _ in by_id] == order
    assert {t for _, _, t, j in by_id if j is not None} == {"A0"}
    assert inserts.count("task") < len(order) // 2, inserts
