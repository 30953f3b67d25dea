"""The job state table: its transitions cover the corpus, its inverse is the SQL loader's map."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.jobmachine import JOB_STATES, REUSABLE_STATES, db_state_names, in_order
from tests.conftest import CORPUS
from tests.event_check import wire

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
        sent = [(e.name, wire(e).get("status")) for e in wf.events[before:]]
        assert sent == list(JOB_STATES[state].events), state


def test_a_state_out_of_order_is_counted_and_still_handled() -> None:
    """The reference handles a state out of order like any other; the machine logs and counts it."""
    from tests.test_state_machine import RUN_A, START, feed, make, names

    wf = make()
    feed(wf, START + RUN_A)
    assert wf.out_of_order == 0
    # DAGMan's POST script result again, after the instance has ended (a repeated line).
    before = len(wf.events)
    feed(wf, "01/01/23 00:00:08 POST Script of node a failed with status 1")
    assert wf.out_of_order == 1
    assert "job_inst.post.end" in names(wf)[before:]
    # A JOB_TERMINATED right after a submit skips EXECUTE: that is in DAGMan's order.
    feed(wf, "01/01/23 00:00:09 Submitting HTCondor Node b job(s)...")
    feed(wf, "01/01/23 00:00:10 Event: ULOG_SUBMIT for HTCondor Node b (6.0.0) {x}")
    feed(wf, "01/01/23 00:00:11 Event: ULOG_JOB_TERMINATED for HTCondor Node b (6.0.0) {x}")
    assert wf.out_of_order == 1
    # ...a release without a hold is not; a state without a row in between is transparent.
    feed(wf, "01/01/23 00:00:12 Event: ULOG_SHADOW_EXCEPTION for HTCondor Node b (6.0.0) {x}")
    feed(wf, "01/01/23 00:00:13 Event: ULOG_JOB_RELEASED for HTCondor Node b (6.0.0) {x}")
    assert wf.out_of_order == 2


def test_a_state_of_no_instance_is_ignored() -> None:
    """Where the reference enforces order: a state that needs the node's instance is dropped."""
    from tests.test_state_machine import START, feed, make, states

    wf = make()
    feed(wf, START)
    feed(wf, "01/01/23 00:00:03 Event: ULOG_EXECUTE for HTCondor Node b (5.0.0) {x}")
    assert [s for s in states(wf) if not s.startswith("INTERNAL")] == []
    assert wf.out_of_order == 0


def test_in_order_agrees_with_the_corpus_transitions() -> None:
    """``in_order`` accepts each (previous, state) pair the corpus has, and only listed ones."""
    pairs: set[tuple[str | None, str]] = set()
    for path in _jobstate_logs():
        last: dict[tuple[str, str], str] = {}
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) < 7 or parts[1] == "INTERNAL" or parts[2] not in JOB_STATES:
                continue
            key = (parts[1], parts[6])
            prev = last.get(key)
            last[key] = parts[2]
            # jobstate.log has no DAGMAN_SUBMIT; the machine sees it before each submit.
            if "DAGMAN_SUBMIT" in JOB_STATES[parts[2]].follows and (
                prev is None or prev in JOB_STATES["DAGMAN_SUBMIT"].follows
            ):
                prev = "DAGMAN_SUBMIT"
            pairs.add((prev, parts[2]))
    if not pairs:
        pytest.skip("no jobstate.log in the corpus")
    assert [p for p in pairs if not in_order(p[1], p[0])] == []
    assert not in_order("POST_SCRIPT_SUCCESS", "SUBMIT")
    assert not in_order("SUBMIT", None)  # a submit whose DAGMan submit line was lost


@pytest.mark.parametrize(("sched_id", "site"), [(None, None), ("5.0", "condorpool")])
def test_each_rows_brief_builders_send_what_brief_sends(
    sched_id: str | None, site: str | None
) -> None:
    """The machine builds a row's brief events with builders made once per row
    (``brief_builders``); each must send what ``JobActions._brief`` sends for the same kind
    and status (the values and their wire order), with and without a sched id and site."""
    from monitord.core.jobactions import brief_builders
    from monitord.core.jobinstance import JobInstance
    from tests.test_state_machine import make

    wf = make()
    inst = JobInstance(name="b", seq=3, submit_dir="/x", sched_id=sched_id, site=site, js_seq=4)
    checked = 0
    for state, row in JOB_STATES.items():
        for (name, status), build in zip(row.events, brief_builders(row.events), strict=True):
            wf.events.clear()
            wf._brief(inst, name, 12.7, status, site=name == "job_inst.submit.start")
            (expected,) = wf.events
            got = build(wf, inst, 12.7)
            assert type(got) is type(expected), (state, name)
            assert got.wire_items() == expected.wire_items(), (state, name)
            assert got.fixed is expected.fixed, (state, name)
            checked += 1
    assert checked >= 20
