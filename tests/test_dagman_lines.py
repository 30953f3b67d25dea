"""dagman.out line classification, fed strings only."""

from __future__ import annotations

import random
import time

import pytest

from monitord.core import dagman as D
from monitord.core.timeparse import dagman_timestamp, local_epoch

pytestmark = pytest.mark.usefixtures("utc")  # local times read and written in UTC


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


def test_in_the_log_list_an_entry_is_a_condor_log_and_any_other_line_tries_the_next_rules():
    entry = "03/03/23 22:23:44   /scratch/run/00/ls_ID0000001.log"
    other = "03/03/23 22:23:45 Running in RECOVERY mode..."
    rec = D.classify(entry, expect_log_entry=True)
    assert rec is not None and (rec.kind, rec.text) == (
        D.CONDOR_LOG,
        "/scratch/run/00/ls_ID0000001.log",
    )
    rec = D.classify(other, expect_log_entry=True)  # the entry rule passes: the tail's rule
    assert rec is not None and rec.kind == D.RECOVERY_START
    assert (
        D.classify("03/03/23 22:23:45 Number of idle job procs: 0", expect_log_entry=True) is None
    )
    assert D.classify(entry) is None  # outside the list an entry is no DAGMan line we act on


def _by_the_table(line: str, rules: tuple[D.Rule, ...]) -> D.DagmanLine | None:
    """The rule table applied as it reads: the first rule whose substrings the line holds
    decides, a PASS goes on to the next."""
    for needle, also, kind, parse in rules:
        if needle in line and (also is None or also in line):
            fields = parse(line)
            if fields is D.PASS:
                continue
            if fields is None:
                return None
            ts = dagman_timestamp(line)
            return None if ts is None else D.DagmanLine(kind, ts, *fields)
    return None


_PIECES = (
    "03/03/23 22:23:44 ",
    "1/2 3:04:05 ",
    "Event: ULOG_EXECUTE for HTCondor Node a_1 (12.0.0) {03/03/23 22:23:40}",
    "Submitting HTCondor Node b_2 job(s)...",
    "Submitting node b_2 from file x.sub",
    "ERROR: submit attempt failed",
    "Running PRE script of Node c_3...",
    "POST Script of node c_3 completed successfully.",
    "PRE Script of Node c_3 failed with status 2",
    "Node d_4 job proc (7.0.0) failed with status 1.",
    "Node d_4 job proc (7.0.0) completed successfully.",
    "EXITING WITH STATUS 0",
    "** condor_scheduniv_exec.9.0 (CONDOR_DAGMAN) STARTING UP",
    "** PID = 42",
    "Parsing 1 dagfiles ...",
    "$CondorVersion: 10.2.1 2023 $",
    "Condor log will be written to /x.log, a",
    "All DAG node user log files:",
    "   /scratch/x.log",
    "Running in RECOVERY mode...",
    "...done with RECOVERY mode",
    "Received SIGUSR1",
    "Hold reason: no",
    " Node ",
    "script of ",
    "Running ",
    "junk",
)


@pytest.mark.parametrize("in_log_list", [False, True])
def test_classify_is_the_rule_table_in_its_order(in_log_list: bool) -> None:
    """The generated classifier agrees with the table read plainly on lines of one to three
    rules' pieces (fails when a rule's second needle, its order or a PASS is lost)."""
    rules = D._RULES_IN_LOG_LIST if in_log_list else D._RULES
    rnd = random.Random(30)
    for _ in range(20_000):
        line = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 3)))
        got = D.classify(line, expect_log_entry=in_log_list)
        assert got == _by_the_table(line, rules), line
