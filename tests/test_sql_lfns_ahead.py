"""PostgreSQL: the file names (``rc_lfn``) a batch needs are got or inserted in one statement
(``RowStore._lfns_ahead`` handed ``BatchLoader._pg_lfns``), not a SELECT and an INSERT per
new name, and every row that names a file still points at its own ``rc_lfn`` row, new or already there (ingest, issue 30).
Whole ingested workflows are compared with their SQLite replays by tests/test_ingest.py."""

from __future__ import annotations

import uuid

import pytest

from monitord.core.events import StampedeEvent, make_event
from sinks.sql.sink import SQLSink
from tests.pg_statements import query, recording_sink

FILES = 24


def _workflow(wf: str, names: list[str]) -> tuple[list[StampedeEvent], list[StampedeEvent]]:
    """A plan, then one batch: a task per file, the file mapped to it, a pfn and a meta row
    each (task ``T<i>`` names file ``names[i]``; pfn and meta values say which name)."""
    x = {"xwf.id": wf, "ts": 1700000000}
    plan = [make_event("wf.plan", {**x, "root.xwf.id": wf, "submit.dir": "/s", "user": "u"})]
    rest: list[StampedeEvent] = []
    for i, name in enumerate(names):
        task = {"task.id": f"T{i}", "transformation": "t", "type_desc": "compute"}
        rest.append(make_event("task.info", {**x, **task}))
        rest.append(make_event("wf.map.file", {**x, "task.id": f"T{i}", "lfn.id": name}))
        rest.append(make_event("rc.pfn", {**x, "lfn.id": name, "pfn": f"file:///{name}"}))
        rest.append(make_event("rc.meta", {**x, "lfn.id": name, "key": "k", "value": name}))
    return plan, rest


def test_a_batch_gets_or_inserts_its_file_names_in_one_statement(pg_url: str) -> None:
    statements: list[str] = []
    sink = recording_sink(pg_url, statements)
    old = [f"shared_{i}.dat" for i in range(FILES // 2)]  # in the database before the batch
    names = old + [f"new_{i}.dat" for i in range(FILES - len(old))]
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    try:
        plan, rest = _workflow(first, old)
        sink.write_batch(plan)
        sink.write_batch(rest)
        sink.close()  # a new loader: nothing cached, the old names are only in the database
        sink = recording_sink(pg_url, statements)
        plan, rest = _workflow(second, list(reversed(names)))
        sink.write_batch(plan)
        statements.clear()
        sink.write_batch(rest)
        lfn_statements = [s for s in statements if "rc_lfn" in s]
        files = query(
            sink,
            "SELECT t.abs_task_id, l.lfn, p.pfn, m.value FROM workflow_files f"
            " JOIN task t ON t.task_id = f.task_id JOIN rc_lfn l ON l.lfn_id = f.lfn_id"
            " JOIN rc_pfn p ON p.lfn_id = l.lfn_id JOIN rc_meta m ON m.lfn_id = l.lfn_id"
            " JOIN workflow w ON w.wf_id = f.wf_id WHERE w.wf_uuid = :wf",
            wf=second,
        )
        lfns = query(sink, "SELECT count(*), count(DISTINCT lfn) FROM rc_lfn")
    finally:
        sink.close()
    assert len(lfn_statements) == 1, lfn_statements
    expect = {(f"T{i}", n, f"file:///{n}", n) for i, n in enumerate(reversed(names))}
    assert files == expect
    assert lfns == {(FILES, FILES)}


def test_a_name_the_statement_does_not_return_is_found_by_its_row(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer's insert of the same name between the statement's snapshot and its
    insert: the name is in the table but not returned; each row's get-or-insert finds it."""
    from sqlalchemy import text

    from sinks.sql import loader

    hidden = text(
        "WITH new AS (INSERT INTO rc_lfn (lfn) SELECT n FROM unnest(CAST(:names AS text[])) AS n"
        " ORDER BY n ON CONFLICT DO NOTHING RETURNING lfn, lfn_id)"
        " SELECT lfn, lfn_id FROM new WHERE false"
    )
    monkeypatch.setattr(loader, "_LFNS_GET_OR_INSERT", hidden)
    sink = SQLSink(pg_url)
    sink.open()
    wf = str(uuid.uuid4())
    names = [f"raced_{i}.dat" for i in range(FILES)]
    try:
        plan, rest = _workflow(wf, names)
        sink.write_batch(plan)
        sink.write_batch(rest)
        files = query(
            sink,
            "SELECT t.abs_task_id, l.lfn FROM workflow_files f"
            " JOIN task t ON t.task_id = f.task_id JOIN rc_lfn l ON l.lfn_id = f.lfn_id",
        )
        lfns = query(sink, "SELECT count(*) FROM rc_lfn")
    finally:
        sink.close()
    assert files == {(f"T{i}", n) for i, n in enumerate(names)}
    assert lfns == {(FILES,)}
