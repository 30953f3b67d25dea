"""PostgreSQL: a batch's new job instances are inserted in one statement
(``BatchLoader._instances_ahead``), not one ``INSERT .. RETURNING`` each, with the ids one
insert each gave them (event order, across workflows) and every row pointing at its own
instance; an instance whose outcome the loader cannot know ahead (its job not yet loaded)
leaves it and those after it to their handlers, in order (ingest, issue 30)."""

from __future__ import annotations

import uuid

from monitord.core.events import StampedeEvent, make_event
from tests.pg_statements import query, recording_sink
from tests.test_sql_loader import job, plan

JOBS = 12


def _start(wf: str, name: str, seq: int, kind: str = "submit") -> StampedeEvent:
    keys = {"job.id": name, "job_inst.id": seq}
    if kind == "pre":
        return make_event("job_inst.pre.start", {"xwf.id": wf, "ts": 5, "js.id": 1, **keys})
    attrs = {"xwf.id": wf, "ts": 10, "js.id": 1, "sched.id": f"{seq}.0", "site": "local"}
    return make_event("job_inst.submit.start", {**attrs, **keys})


def _instances(sink: object, wfs: list[str]) -> list[tuple[str, str, int]]:
    """(workflow, job, submit sequence) of every job instance, by id."""
    found = query(
        sink,  # type: ignore[arg-type]
        "SELECT ji.job_instance_id, w.wf_uuid, j.exec_job_id, ji.job_submit_seq"
        " FROM job_instance ji JOIN job j ON ji.job_id = j.job_id"
        " JOIN workflow w ON j.wf_id = w.wf_id WHERE w.wf_uuid = ANY(:wfs)",
        wfs=wfs,
    )
    return [(w, j, q) for _, w, j, q in sorted(found)]


def test_a_batch_inserts_its_new_instances_in_one_statement_in_event_order(
    pg_url: str,
) -> None:
    statements: list[str] = []
    sink = recording_sink(pg_url, statements)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    order: list[tuple[str, str, int]] = []
    batch: list[StampedeEvent] = []
    for i in range(JOBS):  # two workflows interleaved; a pre.start before its submit.start
        wf = (a, b)[i % 2]
        if i % 3 == 0:
            batch.append(_start(wf, f"job_{i}", 1, "pre"))
        batch.append(_start(wf, f"job_{i}", 1))
        batch.append(_start(wf, f"job_{i}", 2))
        order += [(wf, f"job_{i}", 1), (wf, f"job_{i}", 2)]
    try:
        sink.write_batch([plan(a, a), plan(b, b)])
        sink.write_batch([job(f"job_{i}", (a, b)[i % 2]) for i in range(JOBS)])
        statements.clear()
        sink.write_batch(batch)
        got = _instances(sink, [a, b])
        states = query(
            sink,
            "SELECT j.exec_job_id, ji.job_submit_seq, s.state FROM jobstate s"
            " JOIN job_instance ji ON s.job_instance_id = ji.job_instance_id"
            " JOIN job j ON ji.job_id = j.job_id JOIN workflow w ON j.wf_id = w.wf_id"
            " WHERE w.wf_uuid = ANY(:wfs)",
            wfs=[a, b],
        )
    finally:
        sink.close()
    inserts = [s.split()[2].strip('"') for s in statements if s.startswith("INSERT INTO")]
    assert inserts.count("job_instance") == 1, inserts
    assert got == order
    assert {(j, q) for j, q, st in states if st == "PRE_SCRIPT_STARTED"} == {
        (f"job_{i}", 1) for i in range(0, JOBS, 3)
    }


def test_an_instance_of_a_job_not_yet_loaded_keeps_the_event_order(pg_url: str) -> None:
    """The job of the fourth instance comes in the same batch (not cached ahead): the three
    before it go in one statement, it and those after it one by one, ids in event order."""
    statements: list[str] = []
    sink = recording_sink(pg_url, statements)
    wf = str(uuid.uuid4())
    batch = [_start(wf, f"job_{i}", 1) for i in range(3)]
    batch += [job("late", wf), _start(wf, "late", 1)]
    batch += [_start(wf, f"job_{i}", 1) for i in range(3, 6)]
    batch.append(_start(wf, "nojob", 1))  # (no such job: logged, no row)
    try:
        sink.write_batch([plan(wf, wf), *[job(f"job_{i}", wf) for i in range(6)]])
        statements.clear()
        sink.write_batch(batch)
        got = _instances(sink, [wf])
    finally:
        sink.close()
    names = [*[f"job_{i}" for i in range(3)], "late", *[f"job_{i}" for i in range(3, 6)]]
    assert got == [(wf, n, 1) for n in names]
    inserts = [s.split()[2].strip('"') for s in statements if s.startswith("INSERT INTO")]
    assert inserts.count("job_instance") == 1 + 4, inserts
