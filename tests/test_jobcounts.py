"""Job counts as pegasus-status shows them, checked against the tables DAGMan itself printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from monitord.service.jobcounts import (
    DagmanProgress,
    counts_from_states,
    dag_parents,
    job_counts,
    percent_done,
    progress_for,
)
from monitord.service.status import JOB_COLUMNS
from tests.status_fixtures import corpus_dagman_outs, fed_workflow, need_corpus, open_workflow

# The test's own reading of a DAGMan table: "Of N nodes total:", header, "===" line, numbers.
_TS = r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d "
_DAGMAN_TO_STATUS = {
    "Done": "SUCCESS",
    "Pre": "PRE",
    "Queued": "QUEUED",
    "Post": "POST",
    "Ready": "READY",
    "Un-Ready": "UNREADY",
    "Failed": "FAILURE",
    "Futile": "UNREADY",
}


def tables_by_line(lines: list[str]) -> dict[int, tuple[int, dict[str, int]]]:
    """Index of each table's numbers line -> (N of "Of N nodes total", counts)."""
    found = {}
    for i, line in enumerate(lines):
        m = re.match(_TS + r"Of (\d+) nodes total:$", line.rstrip("\n"))
        if m is None:
            continue
        header = re.sub(_TS, "", lines[i + 1]).split()
        numbers = [int(v) for v in re.sub(_TS, "", lines[i + 3]).split()]
        assert len(header) == len(numbers)
        counts = dict.fromkeys(JOB_COLUMNS, 0)
        for name, value in zip(header, numbers, strict=True):
            counts[_DAGMAN_TO_STATUS[name]] += value
        found[i + 3] = (int(m.group(1)), counts)
    return found


def corpus_ids() -> list[str]:
    return [p.parent.parent.name for p in corpus_dagman_outs()] or ["no-corpus"]


@pytest.fixture(params=corpus_ids())
def dagman_out(request) -> Path:
    need_corpus()
    return next(p for p in corpus_dagman_outs() if p.parent.parent.name == request.param)


def test_tracker_follows_every_table(dagman_out):
    lines = dagman_out.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    tables = tables_by_line(lines)
    assert len(tables) >= 5
    progress = DagmanProgress()
    current = None
    for i, line in enumerate(lines):
        progress.feed(line)
        if i in tables:
            total, current = tables[i]
            assert progress.nodes_total == total
            assert sum(current.values()) == total
        assert progress.counts == current, f"after line {i + 1}"
    assert progress.tables_seen == len(tables)


def test_states_match_every_dagman_table(dagman_out, corpus_tz):
    """Without the tables, the state machine alone places the nodes as DAGMan did."""
    lines = dagman_out.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    tables = tables_by_line(lines)
    wf = open_workflow(dagman_out)
    progress = DagmanProgress()  # fed, but only for its retry notes: no table lines reach it
    for i, line in enumerate(lines):
        wf.feed(line.rstrip("\n"))
        if "nodes total:" not in line:
            progress.feed(line)
        assert progress.counts is None
        if i in tables:
            assert counts_from_states(wf, progress) == tables[i][1], f"table at line {i + 1}"


def test_job_counts_prefers_the_latest_table(dagman_out, corpus_tz):
    lines = dagman_out.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    last_total, last = tables_by_line(lines)[max(tables_by_line(lines))]
    fed = fed_workflow(dagman_out)
    counts = job_counts(fed.wf)
    assert counts == last
    assert counts["SUCCESS"] == last["SUCCESS"] and counts["FAILURE"] == last["FAILURE"]
    assert job_counts(fed.wf) is not job_counts(fed.wf)  # callers get their own copy
    assert percent_done(counts) == pytest.approx(100.0 * last["SUCCESS"] / last_total)


def test_job_counts_mid_run_is_the_table_printed_so_far(dagman_out, corpus_tz):
    lines = dagman_out.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    tables = tables_by_line(lines)
    middle = sorted(tables)[len(tables) // 2]
    fed = fed_workflow(dagman_out, lines=middle + 1)
    assert job_counts(fed.wf) == tables[middle][1]
    assert progress_for(fed.wf) is fed.progress


def test_table_without_futile_column_and_junk_between():
    p = DagmanProgress()
    for line in [
        "01/01/23 00:00:00 Of 4 nodes total:",
        "01/01/23 00:00:00  Done     Pre   Queued    Post   Ready   Un-Ready   Failed",
        "01/01/23 00:00:00   ===     ===      ===     ===     ===        ===      ===",
        "01/01/23 00:00:00     1       0        1       0       1          1        0",
        "01/01/23 00:00:05 Of 4 nodes total:",
        "01/01/23 00:00:05 something else entirely",
        "01/01/23 00:00:05   ===     ===      ===     ===     ===        ===      ===",
        "01/01/23 00:00:05     9       9        9       9       9          9        9",
    ]:
        p.feed(line)
    assert p.counts == {
        "UNREADY": 1,
        "READY": 1,
        "PRE": 0,
        "QUEUED": 1,
        "POST": 0,
        "SUCCESS": 1,
        "FAILURE": 0,
    }
    assert p.tables_seen == 1


def test_retry_note_is_cleared_by_the_next_attempt():
    p = DagmanProgress()
    p.feed("01/01/23 00:00:00 Retrying node ls_ID0000001 (retry #1 of 3)...")
    p.feed("01/01/23 00:00:00 Retrying node other (retry #1 of 3)...")
    assert p.retrying == {"ls_ID0000001", "other"}
    p.feed("01/01/23 00:00:05 Submitting HTCondor Node ls_ID0000001 job(s)...")
    p.feed("01/01/23 00:00:05 Running PRE script of Node other...")
    assert p.retrying == set()


def test_dag_parents():
    text = "JOB a a.sub\nPARENT a b CHILD c d\nparent c child e\nPARENT x\n"
    assert dag_parents(text) == {"c": {"a", "b"}, "d": {"a", "b"}, "e": {"c"}}


def test_percent_done_of_nothing_is_zero():
    assert percent_done(dict.fromkeys(JOB_COLUMNS, 0)) == 0.0
