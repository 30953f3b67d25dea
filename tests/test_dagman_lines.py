"""dagman.out line classification, fed strings only."""

from __future__ import annotations

import time

import pytest

from monitord.core import dagman as D
from monitord.core.timeparse import dagman_timestamp, local_epoch


@pytest.fixture(autouse=True)
def _utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_ulog_uses_brace_time_and_cluster_proc():
    rec = D.classify(
        "03/03/23 22:23:49 Event: ULOG_SUBMIT for HTCondor Node ls_ID0000001 (3.0.0) {03/03/23 22:23:44}"
    )
    assert rec is not None and rec.kind == D.ULOG
    assert (rec.state, rec.job, rec.sched_id) == ("SUBMIT", "ls_ID0000001", "3.0")
    assert rec.ts == local_epoch(2023, 3, 3, 22, 23, 44)


def test_old_condor_ulog_form_and_unknown_ulog_name():
    rec = D.classify("1/2/11 10:00:01 Event: ULOG_SHADOW_EXCEPTION for Condor Job x_1 (12.0)")
    assert rec is not None and (rec.state, rec.job, rec.sched_id) == (
        "SHADOW_EXCEPTION",
        "x_1",
        "12.0",
    )


def test_submitting_and_scripts():
    assert D.classify("03/03/23 22:23:44 Submitting HTCondor Node a_b job(s)...").job == "a_b"
    run = D.classify("03/03/23 22:23:54 Running POST script of Node create_dir_x...")
    assert (run.kind, run.state, run.job) == (D.SCRIPT_STARTED, "POST", "create_dir_x")
    pre = D.classify(
        "03/04/23 11:57:15 (D_ALWAYS) PRE Script of Job pegasus-plan_x failed with status 2"
    )
    assert (pre.kind, pre.state, pre.job, pre.status) == (
        D.SCRIPT_RESULT,
        "PRE",
        "pegasus-plan_x",
        2,
    )
    ok = D.classify("03/03/23 22:23:59 POST Script of node c completed successfully.")
    assert ok.status == 0
    sig = D.classify("03/03/23 22:23:59 POST Script of node c failed with signal 9")
    assert sig.kind == D.SCRIPT_RESULT and sig.status is None


def test_job_results_signal_is_a_status():
    fail = D.classify("03/03/23 23:11:04 Node ls_ID0000001 job proc (9.0.0) failed with signal 9.")
    assert (fail.kind, fail.state, fail.sched_id, fail.status) == (
        D.JOB_RESULT,
        "FAILURE",
        "9.0.0",
        9,
    )
    ok = D.classify("03/03/23 23:11:04 Node ls job proc (2.0.0) completed successfully.")
    assert (ok.state, ok.status) == ("SUCCESS", 0)
    # must end with '.'
    assert D.classify("03/03/23 23:11:04 Node ls job proc (9.0.0) failed with status 2") is None


def test_dagman_lifecycle_lines():
    start = D.classify("03/03/23 22:23:43 ** condor_scheduniv_exec.1.0 (CONDOR_DAGMAN) STARTING UP")
    assert (start.kind, start.sched_id) == (D.DAGMAN_START, "1.0")
    ver = D.classify("03/03/23 22:23:43 ** $CondorVersion: 10.2.5 2023-02-27 BuildID: 631644 $")
    assert (ver.kind, ver.status) == (D.CONDOR_VERSION, 100205)
    assert D.classify("03/03/23 22:23:43 Parsing process-0.dag ...").kind == D.PARSING
    assert D.classify("03/03/23 22:23:43 Parsing 1 dagfiles") is None
    end = D.classify(
        "03/03/23 22:25:00 **** condor_scheduniv_exec.1.0 (condor_DAGMAN) pid 1 EXITING WITH STATUS 1"
    )
    assert (end.kind, end.text) == (D.DAGMAN_EXIT, "1")
    hold = D.classify("03/03/23 22:25:00   Hold reason: Transfer output files failure")
    assert (hold.kind, hold.text) == (D.HOLD_REASON, " Transfer output files failure")


@pytest.mark.parametrize(
    "line",
    [
        "",
        "garbage without a time stamp",
        "Event: ULOG_SUBMIT for HTCondor Node x (1.0.0)",  # no time stamp at all
        "03/03/23 22:23:43 Of 5 nodes total:",
        "03/03/23 22:23:43 DAG status: 0 (DAG_STATUS_OK)",
        "03/03/23 22:23:43 Event: ULOG_SUBMIT garbled",
        "\x00\xff\ufffd 03/03/23 nonsense",
    ],
)
def test_noise_and_malformed_lines_are_ignored(line):
    assert D.classify(line) is None


def test_timestamp_forms():
    assert dagman_timestamp("2023-03-04T06:23:43Z something") == 1677911023.0
    assert dagman_timestamp("2023-03-03 22:23:43.5-08:00 x") == 1677911023.5
    assert dagman_timestamp("no time here") is None
    assert dagman_timestamp("03/03/23 22:23:43 x", adjust=10) == local_epoch(2023, 3, 3, 22, 23, 53)


# ------------------------------------------------- a DAGMan start seen from its banner's first line
_EXIT_LINE = (
    "03/03/23 22:23:59 **** condor_scheduniv_exec.1.0 (condor_DAGMAN) pid 1 EXITING WITH STATUS 1"
)
_RULE = "******************************************************"


@pytest.mark.parametrize(
    "lead",
    ["03/03/23 22:24:05 ", "03/03/23 22:24:05 (D_ALWAYS) ", "  3/3 22:24:05 ", "03/03 2:24:05 "],
)
def test_a_chunk_ending_on_the_banners_rule_is_a_restart(lead: str) -> None:
    """A rescue DAG's daemon may see only the rule of asterisks opening the new run's banner
    after the last run's exit line: whatever lead the line classifier accepts, that is a start."""
    from monitord.daemon.following import restart_marker

    assert restart_marker([_EXIT_LINE]) is False
    assert restart_marker([_EXIT_LINE, lead + _RULE + "\n"]) is True
    assert restart_marker([_EXIT_LINE, lead + "** not a rule"]) is False
    assert restart_marker(["03/03/23 22:24:05 Parsing x.dag ..."]) is None


# ------------------------------------------------- stamps looked up by their text (issue 30)
def test_timestamp_follows_a_change_of_zone(monkeypatch):
    """The stamp and hour caches are the zone's: after ``tzset`` the same line is read again
    in the new zone (a cache keyed by the text alone kept the old zone's epoch)."""
    line = "03/03/23 22:23:49 Event: ULOG_SUBMIT for HTCondor Node a (3.0.0) {03/03/23 22:23:44}"
    utc = dagman_timestamp(line)
    assert utc == dagman_timestamp(line) == 1677882224.0
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    assert dagman_timestamp(line) == utc + 8 * 3600
    assert local_epoch(2023, 3, 3, 22, 0, 0) == 1677909600.0


@pytest.mark.parametrize(
    ("line", "stamp"),
    [
        ("03/03/23 22:23:49 Parsing a.dag ...", (22, 23, 49)),
        (
            "03/03/23 22:23:49 Event: ULOG_EXECUTE for Node a (1.0.0) {03/03/23 22:20:01}",
            (22, 20, 1),
        ),
        # not where DAGMan writes it, or not two digits each: the last regex match still wins
        ("03/03/23 22:23:49 Hold reason: since 3/3/23 21:00:00 ok", (21, 0, 0)),
        ("03/03/23 22:23:49 Event: ULOG_EXECUTE for Node a (1.0.0) {3/3/23 22:20:01}", (22, 20, 1)),
        (
            "03/03/23 22:23:49 Event: ULOG_EXECUTE x {03/03/23 22:20:01} {03/03/23 22:20:02}",
            (22, 20, 2),
        ),
        ("  03/03/23 22:23:49 Parsing a.dag ...", (22, 23, 49)),
        ("3/3/23 2:23:49 Parsing a.dag ...", (2, 23, 49)),
        ("03/03/23 22:23:495 x", (22, 23, 49)),
    ],
)
def test_the_last_stamp_of_a_line_is_its_time(line, stamp):
    for _ in range(2):  # computed, then looked up
        assert dagman_timestamp(line) == local_epoch(2023, 3, 3, *stamp)
        assert dagman_timestamp(line, adjust=5) == local_epoch(2023, 3, 3, *stamp) + 5


def test_an_odd_stamp_reads_the_same_where_dagman_writes_it_or_not():
    assert dagman_timestamp("99/99/99 99:99:99 x") == dagman_timestamp("99/99/99 99:99:99 x/")


def test_log_list_entry_or_the_next_rules():
    """In the list of log files, an entry is a Condor log; any other line is not the entry
    rule's (PASS) and the rules after it decide, as outside the list."""
    entry = D.classify("02/04/23 18:21:06    /r/wf-0.log", expect_log_entry=True)
    assert entry is not None and (entry.kind, entry.text) == (D.CONDOR_LOG, "/r/wf-0.log")
    after = D.classify("02/04/23 18:21:06 Received SIGUSR1", expect_log_entry=True)
    assert after is not None and after.kind == D.SIGUSR1
    assert (
        D.classify("02/04/23 18:21:06 Number of idle job procs: 0", expect_log_entry=True) is None
    )
