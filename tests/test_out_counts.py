"""A node's output counter is read off its latest instance (issue 30, memory30i): the workflow
keeps apart only the counts that instance cannot give, and every count is what a counter of
each numbering gives (the old table of its own, one entry a job)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from monitord.core.jobinstance import JobInstance, finished, record_out_num, revive
from monitord.core.workflow import Workflow
from tests.test_state_machine import (
    RUN,
    RUN_A,
    START,
    _many_jobs,
    feed,
    ks,
    make,
)

pytestmark = pytest.mark.usefixtures("utc")  # local times read and written in UTC

PRE_FAILS = """\
01/01/23 00:01:00 Running PRE script of Node p...
01/01/23 00:01:02 PRE Script of Job p failed with status 2
01/01/23 00:01:03 Running PRE script of Node p...
"""
PRE_THEN_SUBMIT = """\
01/01/23 00:01:04 PRE Script of node p completed successfully.
01/01/23 00:01:05 Submitting HTCondor Node p job(s)...
01/01/23 00:01:06 Event: ULOG_SUBMIT for HTCondor Node p (9.0.0) {01/01/23 00:01:05}
"""
A_AGAIN = RUN_A.replace("5.0.0", "6.0.0")


def counted(wf: Workflow) -> dict[str, int]:
    """A counter of each numbering, as the workflow kept one before: name -> last number."""
    shadow: dict[str, int] = {}
    bump = wf._bump_out_counter

    def counting(inst: JobInstance) -> None:
        bump(inst)
        shadow[inst.name] = shadow.get(inst.name, -1) + 1
        assert inst.out_num == shadow[inst.name]

    wf._bump_out_counter = counting  # type: ignore[method-assign]
    return shadow


def test_a_plain_run_keeps_no_output_counter_apart() -> None:
    n = 50
    dag, files, lines = _many_jobs(n)
    wf = make(files, dag)
    shadow = counted(wf)
    feed(wf, START + lines)
    assert wf.out_counters == {}  # main kept every job's count in it
    assert list(wf.out_counts()) == list(shadow.items()) == [(f"job_{i}", 0) for i in range(n)]


def test_a_retry_in_flight_keeps_its_count_apart_until_numbered() -> None:
    wf = make()
    shadow = counted(wf)
    feed(wf, START + PRE_FAILS)  # the first attempt numbered 0; the retry not yet numbered
    assert isinstance(wf.latest["p"], JobInstance) and wf.latest["p"].out_num is None
    assert wf.out_counters == {"p": 0} and wf.out_count("p") == 0
    feed(wf, PRE_THEN_SUBMIT)
    assert wf.out_counters == {} and wf.out_count("p") == 1
    assert dict(wf.out_counts()) == shadow == {"p": 1}


def test_a_retry_of_a_finished_instance_numbers_on_from_its_record() -> None:
    wf = make({f"{RUN}/00/00/a.out.000": ks(512), f"{RUN}/00/00/a.out.001": ks(0)})
    shadow = counted(wf)
    feed(wf, START + RUN_A)
    assert type(wf.latest["a"]) is bytes and wf.out_count("a") == 0
    feed(wf, A_AGAIN)
    assert wf.out_counters == {} and dict(wf.out_counts()) == shadow == {"a": 1}


def test_a_rescue_restart_and_monitord_info_keep_their_counts() -> None:
    """A node a rescue restart drops, and one only monitord.info names, number on."""
    wf = make({f"{RUN}/00/00/a.out.000": ks(512), f"{RUN}/00/00/a.out.001": ks(0)})
    wf.out_counters.update({"b": 3})  # a clean stop's monitord.info (Monitor._open_workflow)
    shadow = counted(wf)
    shadow["b"] = 3
    feed(wf, START + RUN_A)
    wf.latest["a"] = finished(_success(wf.latest["a"]))  # as if it had succeeded
    wf._drop_finished_jobs()
    assert "a" not in wf.latest and wf.out_counters == {"b": 3, "a": 0}
    assert dict(wf.out_counts()) == shadow
    counting = wf.__dict__.pop("_bump_out_counter")  # (a test's wrapper: not pickled)
    restored = pickle.loads(pickle.dumps(wf))  # a snapshot keeps what is apart
    wf._bump_out_counter = counting  # type: ignore[method-assign]
    assert dict(restored.out_counts()) == shadow
    feed(wf, A_AGAIN + RUN_A.replace("Node a", "Node b").replace("5.0.0", "7.0.0"))
    assert wf.out_counters == {}
    assert dict(wf.out_counts()) == shadow == {"a": 1, "b": 4}


def _success(record: Any) -> JobInstance:
    inst = revive(record, "a", "/run/00/00")
    inst.state = "POST_SCRIPT_SUCCESS"
    return inst  # type: ignore[no-any-return]


@pytest.mark.parametrize("out_num", [None, 0, 1, 61, 62, 1000])
def test_a_record_gives_its_output_number_without_unpacking(out_num: int | None) -> None:
    wf = make({f"{RUN}/00/00/a.out.000": ks(512)})
    feed(wf, START + RUN_A)
    inst = wf._latest_instance("a")
    assert inst is not None
    inst.out_num = out_num
    record = finished(inst)
    assert type(record) is bytes
    assert record_out_num(record) == out_num
    assert revive(record, "a").out_num == out_num
    older = record[:3] + bytes((record[3] & 3,)) + record[4:]  # before memory30i
    assert record_out_num(older) == out_num
    assert revive(older, "a") == revive(record, "a")
