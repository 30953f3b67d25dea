"""The job state table: its transitions cover the corpus, its inverse is the SQL loader's map."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.jobmachine import JOB_STATES, REUSABLE_STATES, db_state_names
from tests.conftest import CORPUS

DATA = Path(__file__).parent / "data"


def _jobstate_logs() -> list[Path]:
    return sorted(CORPUS.glob("*/expected/**/jobstate.log*")) + sorted(
        DATA.glob("**/jobstate.log*")
    )


def _unlisted_transitions(text: str) -> list[tuple[str | None, str]]:
    """(previous, state) pairs of one jobstate.log that the table's ``follows`` does not list."""
    dagman_submit = JOB_STATES["DAGMAN_SUBMIT"]
    last: dict[tuple[str, str], str] = {}
    out: list[tuple[str | None, str]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 7 or parts[1] == "INTERNAL":
            continue
        state = parts[2]
        row = JOB_STATES.get(state)
        if row is None:
            continue  # line-only states are transparent
        key = (parts[1], parts[6])
        prev = last.get(key)
        last[key] = state
        # DAGMAN_SUBMIT writes no line: a state that follows it may follow what it follows.
        via_submit = "DAGMAN_SUBMIT" in row.follows and (
            prev is None or prev in dagman_submit.follows
        )
        if prev in row.follows or via_submit or (prev is None and not row.follows):
            continue
        out.append((prev, state))
    return out


def test_every_transition_of_the_corpus_is_in_the_table() -> None:
    logs = _jobstate_logs()
    if not logs:
        pytest.skip(f"no jobstate.log under {CORPUS} or {DATA}")
    bad = {(str(p), pair) for p in logs for pair in _unlisted_transitions(p.read_text())}
    assert not bad


def test_a_transition_outside_the_table_is_found() -> None:
    text = "1 a SUBMIT 5.0 local - 1\n2 a POST_SCRIPT_SUCCESS 0 local - 1\n"
    assert _unlisted_transitions(text) == [("SUBMIT", "POST_SCRIPT_SUCCESS")]


def test_every_action_is_code_and_every_follower_a_row() -> None:
    for row in JOB_STATES.values():
        assert row.action is None or callable(row.action)
        assert row.follows <= set(JOB_STATES)
    assert REUSABLE_STATES == {"PRE_SCRIPT_SUCCESS", "DAGMAN_SUBMIT"}


def test_db_state_names_are_the_loaders_former_map() -> None:
    # The map sinks/sql/loader.py held by hand before it was derived from the table.
    assert db_state_names() == {
        "job_inst.pre.start": ("PRE_SCRIPT_STARTED", "PRE_SCRIPT_STARTED"),
        "job_inst.pre.term": ("PRE_SCRIPT_TERMINATED", "PRE_SCRIPT_TERMINATED"),
        "job_inst.pre.end": ("PRE_SCRIPT_SUCCESS", "PRE_SCRIPT_FAILED"),
        "job_inst.submit.end": ("SUBMIT", "SUBMIT_FAILED"),
        "job_inst.main.start": ("EXECUTE", "EXECUTE"),
        "job_inst.main.term": ("JOB_TERMINATED", "JOB_EVICTED"),
        "job_inst.main.end": ("JOB_SUCCESS", "JOB_FAILURE"),
        "job_inst.post.start": ("POST_SCRIPT_STARTED", "POST_SCRIPT_STARTED"),
        "job_inst.post.term": ("POST_SCRIPT_TERMINATED", "POST_SCRIPT_TERMINATED"),
        "job_inst.post.end": ("POST_SCRIPT_SUCCESS", "POST_SCRIPT_FAILED"),
        "job_inst.held.start": ("JOB_HELD", "JOB_HELD"),
        "job_inst.held.end": ("JOB_RELEASED", "JOB_RELEASED"),
        "job_inst.image.info": ("IMAGE_SIZE", "IMAGE_SIZE"),
        "job_inst.abort.info": ("JOB_ABORTED", "JOB_ABORTED"),
        "job_inst.grid.submit.end": ("GRID_SUBMIT", "GRID_SUBMIT_FAILED"),
        "job_inst.globus.submit.end": ("GLOBUS_SUBMIT", "GLOBUS_SUBMIT_FAILED"),
    }


def test_each_state_emits_its_row_events_in_order() -> None:
    """The brief events of a row are what the machine sends for that state."""
    from tests.test_state_machine import START, feed, make

    for state in ("SUBMIT", "GRID_SUBMIT", "IMAGE_SIZE", "JOB_EVICTED", "JOB_TERMINATED"):
        wf = make()
        feed(wf, START)
        feed(wf, "01/01/23 00:00:01 Submitting HTCondor Node b job(s)...")
        if state != "SUBMIT":
            feed(wf, "01/01/23 00:00:02 Event: ULOG_SUBMIT for HTCondor Node b (5.0.0) {x}")
        before = len(wf.events)
        feed(wf, f"01/01/23 00:00:03 Event: ULOG_{state} for HTCondor Node b (5.0.0) {{x}}")
        sent = [(e.name, e.attrs.get("status")) for e in wf.events[before:]]
        assert sent == list(JOB_STATES[state].events), state
