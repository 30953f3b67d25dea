"""Matching (doc §11.2) and the PEGASUS_* environment (§11.3): pure functions, then through the
state machine with the notifier's hooks (no loop, no scripts: firings are only collected)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.readers.braindump import parse_braindump_yml
from monitord.core.readers.dagfile import parse_dag
from monitord.core.workflow import Workflow, WorkflowContext, WorkflowOptions
from notifications.grammar import Action, parse_notify
from notifications.matching import (
    JobFacts,
    WorkflowFacts,
    invocation_firings,
    job_end_firings,
    job_end_status,
    job_start_firings,
    wfid,
    workflow_firings,
)
from notifications.notifier import Notifier

ALL = ["never", "start", "on_error", "on_success", "at_end", "all"]
WF = WorkflowFacts("wf-1", "demo-0", "/orig/run0001", "/run/demo-0.dag.dagman.out")
JOB = JobFacts("a", 2, "00/00/a.out", "00/00/a.err")
TS = 1672531205.0  # 2023-01-01T00:00:05Z


pytestmark = pytest.mark.usefixtures("utc")  # local times read and written in UTC


def _actions(prefix: str = "") -> list[Action]:
    return [Action(c, f"{prefix}{c}") for c in ALL]


def _table(text: str):
    table, diags = parse_notify(text, wf_uuid="wf-1")
    assert diags == []
    return table


# ---------------------------------------------------------------------- workflow
def test_workflow_start_fires_start_and_all_as_start() -> None:
    fired = workflow_firings(_actions(), WF, "start", TS, None)
    assert [(f.action, f.event) for f in fired] == [("start", "start"), ("all", "start")]
    assert list(fired[0].env.items()) == [
        ("PEGASUS_EVENT", "start"),
        ("PEGASUS_EVENT_TIMESTAMP", "1672531205.0"),
        ("PEGASUS_EVENT_TIMESTAMP_ISO", "2023-01-01T00:00:05+0000"),
        ("PEGASUS_SUBMIT_DIR", "/orig/run0001"),
        ("PEGASUS_STDOUT", "/run/demo-0.dag.dagman.out"),
        ("PEGASUS_JOBID", "wf-1"),
        ("PEGASUS_WFID", "demo-0"),
    ]
    assert fired[0].subject == "wf-1"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (0, [("on_success", "on_success"), ("at_end", "at_end"), ("all", "at_end")]),
        (1, [("on_error", "on_error"), ("at_end", "at_end"), ("all", "at_end")]),
        (2, [("on_error", "on_error"), ("at_end", "at_end"), ("all", "at_end")]),
    ],
)
def test_workflow_end_by_dagman_exit_code(code: int, expected: list[tuple[str, str]]) -> None:
    fired = workflow_firings(_actions(), WF, "end", TS, code)
    assert [(f.action, f.event) for f in fired] == expected
    for f in fired:
        assert f.env["PEGASUS_STATUS"] == str(code)
        assert list(f.env)[-1] == "PEGASUS_STATUS"


def test_wfid_marks_missing_parts_unknown() -> None:
    assert wfid("process", "0") == "process-0"
    assert wfid(None, 3) == "unknown-3"
    assert wfid("x", None) == "x-unknown"


# ---------------------------------------------------------------------- jobs
def test_job_start_fires_start_and_all_with_unsuffixed_files_and_no_status() -> None:
    table = _table("\n".join(f"JOB a {c} {c}" for c in ALL) + "\nJOB other start x\n")
    fired = job_start_firings(table, WF, JOB, TS)
    assert [(f.action, f.event) for f in fired] == [("start", "start"), ("all", "start")]
    assert list(fired[0].env.items()) == [
        ("PEGASUS_EVENT", "start"),
        ("PEGASUS_EVENT_TIMESTAMP", "1672531205.0"),
        ("PEGASUS_EVENT_TIMESTAMP_ISO", "2023-01-01T00:00:05+0000"),
        ("PEGASUS_SUBMIT_DIR", "/orig/run0001"),
        ("PEGASUS_JOBID", "a"),
        ("PEGASUS_WFID", "demo-0"),
        ("PEGASUS_STDOUT", "/orig/run0001/00/00/a.out"),
        ("PEGASUS_STDERR", "/orig/run0001/00/00/a.err"),
    ]


def test_job_success_fires_everything_but_start_and_on_error() -> None:
    table, _ = parse_notify("\n".join(f"JOB a {c} {c}" for c in [*ALL, "bogus"]), wf_uuid="wf-1")
    fired = job_end_firings(table, WF, JOB, TS, success=True, status=0)
    # Exclusion rules: never (and an unknown condition) fire at job end too (quirk).
    assert [(f.action, f.event) for f in fired] == [
        ("never", "never"),
        ("on_success", "on_success"),
        ("at_end", "at_end"),
        ("all", "at_end"),
        ("bogus", "bogus"),
    ]
    assert list(fired[0].env.items())[-3:] == [
        ("PEGASUS_STDOUT", "/orig/run0001/00/00/a.out.002"),
        ("PEGASUS_STDERR", "/orig/run0001/00/00/a.err.002"),
        ("PEGASUS_STATUS", "0"),
    ]


def test_job_failure_fires_everything_but_start_and_on_success() -> None:
    table = _table("\n".join(f"DAXJOB a {c} {c}" for c in ALL))
    fired = job_end_firings(table, WF, JOB, TS, success=False, status=3)
    assert [(f.action, f.event) for f in fired] == [
        ("never", "never"),
        ("on_error", "on_error"),
        ("at_end", "at_end"),
        ("all", "at_end"),
    ]
    assert {f.env["PEGASUS_STATUS"] for f in fired} == {"3"}


def test_job_end_status_rules() -> None:
    assert job_end_status(True, 5, 7) == 0
    assert job_end_status(False, 1, None) == 1  # the dagman.out status
    assert job_end_status(False, 1, 2) == 2  # PM-1176: the single record's exit code


def test_job_output_counter_none_means_000_and_missing_files_are_omitted() -> None:
    table = _table("JOB a at_end x")
    job = JobFacts("a", None, None, "00/00/a.err")
    (fired,) = job_end_firings(table, WF, job, TS, success=True, status=0)
    assert "PEGASUS_STDOUT" not in fired.env
    assert fired.env["PEGASUS_STDERR"] == "/orig/run0001/00/00/a.err.000"


# ---------------------------------------------------------------------- invocations
def test_invocation_success_fires_everything_but_on_error_start_included() -> None:
    table = _table("\n".join(f"INVOCATION a 1 {c} {c}" for c in ALL))
    fired = invocation_firings(table, WF, JOB, 1, TS, 0)
    assert [(f.action, f.event) for f in fired] == [
        ("never", "never"),
        ("start", "start"),
        ("on_success", "on_success"),
        ("at_end", "at_end"),
        ("all", "at_end"),
    ]
    assert list(fired[2].env.items()) == [
        ("PEGASUS_EVENT", "on_success"),
        ("PEGASUS_EVENT_TIMESTAMP", "1672531205.0"),
        ("PEGASUS_EVENT_TIMESTAMP_ISO", "2023-01-01T00:00:05+0000"),
        ("PEGASUS_SUBMIT_DIR", "/orig/run0001"),
        ("PEGASUS_JOBID", "a"),
        ("PEGASUS_INVID", "1"),
        ("PEGASUS_WFID", "demo-0"),
        ("PEGASUS_STDOUT", "/orig/run0001/00/00/a.out.002"),
        ("PEGASUS_STDERR", "/orig/run0001/00/00/a.err.002"),
        ("PEGASUS_STATUS", "0"),
    ]
    assert "PEGASUS_STATUS" not in fired[1].env  # not for start


@pytest.mark.parametrize(("raw", "plain"), [(256, "1"), ("512", "2"), (9, "-9"), (-1, "-128")])
def test_invocation_failure_status_is_converted_raw_to_plain(raw: object, plain: str) -> None:
    table = _table("\n".join(f"INVOCATION a 2 {c} {c}" for c in ALL))
    fired = invocation_firings(table, WF, JOB, 2, TS, raw)
    assert [f.action for f in fired] == ["never", "start", "on_error", "at_end", "all"]
    assert {f.env["PEGASUS_STATUS"] for f in fired if f.event != "start"} == {plain}
    assert invocation_firings(table, WF, JOB, 1, TS, raw) == []  # another task index


# ---------------------------------------------------------------------- through the state machine
BRAINDUMP = """\
wf_uuid: "wf-1"
root_wf_uuid: "wf-1"
dax_label: "demo"
dax_index: "0"
dag: "demo-0.dag"
notify: "demo-0.notify"
submit_dir: "/orig/run0001"
"""
DAG = "JOB a 00/00/a.sub\nSCRIPT POST a /bin/pegasus-exitcode  -r $RETURN\nJOB b 00/00/b.sub\n"
SUB = "output = /orig/run0001/00/00/{n}.out\nerror = /orig/run0001/00/00/{n}.err\n"
KS = """- invocation: True
  start: 2023-01-01T00:00:03.000+00:00
  duration: 1.0
  mainjob:
    start: 2023-01-01T00:00:03.000+00:00
    duration: 1.0
    status:
      raw: {raw}
      regular_exitcode: {code}
"""
LINES = """\
01/01/23 00:00:00 ** condor_scheduniv_exec.1.0 (CONDOR_DAGMAN) STARTING UP
01/01/23 00:00:00 Parsing demo-0.dag ...
01/01/23 00:00:01 Submitting HTCondor Node a job(s)...
01/01/23 00:00:02 Event: ULOG_SUBMIT for HTCondor Node a (5.0.0) {01/01/23 00:00:01}
01/01/23 00:00:03 Event: ULOG_EXECUTE for HTCondor Node a (5.0.0) {01/01/23 00:00:03}
01/01/23 00:00:05 Event: ULOG_JOB_TERMINATED for HTCondor Node a (5.0.0) {01/01/23 00:00:04}
01/01/23 00:00:05 Node a job proc (5.0.0) failed with status 2.
01/01/23 00:00:05 Running POST script of Node a...
01/01/23 00:00:07 POST Script of node a failed with status 1
01/01/23 00:00:08 Submitting HTCondor Node b job(s)...
01/01/23 00:00:09 Event: ULOG_SUBMIT for HTCondor Node b (6.0.0) {01/01/23 00:00:08}
01/01/23 00:00:10 Event: ULOG_EXECUTE for HTCondor Node b (6.0.0) {01/01/23 00:00:10}
01/01/23 00:00:11 Event: ULOG_JOB_TERMINATED for HTCondor Node b (6.0.0) {01/01/23 00:00:11}
01/01/23 00:00:11 Node b job proc (6.0.0) completed successfully.
01/01/23 00:00:12 **** condor_scheduniv_exec.1.0 (condor_DAGMAN) pid 7 EXITING WITH STATUS 1
"""
NOTIFY = """\
WORKFLOW wf-1 all wf
JOB a all a
INVOCATION a 1 all inv-a
JOB b all b
INVOCATION b 1 on_success inv-b
JOB ghost all ghost
"""


def _follow(tmp_path: Path, *, events: bool = True, recover_line: int = 0) -> list:
    run = str(tmp_path)
    (tmp_path / "demo-0.notify").write_text(NOTIFY)
    fs = {f"{run}/00/00/{n}.sub": SUB.format(n=n) for n in ("a", "b")}
    # Job a (POST script): one record with exit code 2 (PM-1176); b: no record at all.
    fs[f"{run}/00/00/a.out.000"] = KS.format(raw=512, code=2)
    ctx = WorkflowContext(
        read_text=fs.get, events=[], options=WorkflowOptions(events_enabled=events)
    )
    notifier = Notifier(pool=None, loop=None)  # type: ignore[arg-type]
    ctx.notifier = notifier
    bd = parse_braindump_yml(BRAINDUMP)
    recover = None
    if recover_line:
        recover = str(tmp_path / "monitord.recover")
        Path(recover).write_text(f"line_processed {recover_line}\n")
    notifier.open_workflow(run, bd, f"{run}/demo-0.dag.dagman.out", recover)
    wf = Workflow(ctx, run_dir=run, braindump=bd, dag=parse_dag(DAG), root_uuid="wf-1", wf_ts=1)
    for line in LINES.splitlines():
        wf.feed(line)
    return list(notifier._early)


def test_state_machine_hooks_fire_in_order_with_statuses(tmp_path: Path) -> None:
    fired = _follow(tmp_path)
    got = [
        (f.action, f.event, f.env.get("PEGASUS_STATUS"), f.env.get("PEGASUS_STDOUT")) for f in fired
    ]
    out = "/orig/run0001/00/00"
    assert got == [
        ("wf", "start", None, f"{tmp_path}/demo-0.dag.dagman.out"),
        ("a", "start", None, f"{out}/a.out"),
        # POST failure: the single kickstart record (exit code 2) wins over the POST status 1.
        ("inv-a", "at_end", "2", f"{out}/a.out.000"),
        ("a", "at_end", "2", f"{out}/a.out.000"),
        ("b", "start", None, f"{out}/b.out"),
        # No record: the invocation is evaluated once with the main exit code (0).
        ("inv-b", "on_success", "0", f"{out}/b.out.000"),
        ("b", "at_end", "0", f"{out}/b.out.000"),
        ("wf", "at_end", "1", f"{tmp_path}/demo-0.dag.dagman.out"),
    ]
    assert fired[2].env["PEGASUS_EVENT_TIMESTAMP"] == "1672531207.0"  # the POST line's time


def test_without_event_sinks_only_workflow_and_job_time_invocations_fire(tmp_path: Path) -> None:
    fired = _follow(tmp_path, events=False)
    # Job notifications and POST-time invocation notifications need an event sink (doc §5.4).
    assert [(f.action, f.event) for f in fired] == [
        ("wf", "start"),
        ("inv-b", "on_success"),
        ("wf", "at_end"),
    ]


def test_recovery_suppresses_what_the_crashed_predecessor_already_sent(tmp_path: Path) -> None:
    fired = _follow(tmp_path, recover_line=9)  # up to the POST failure of a
    assert [(f.action, f.event) for f in fired] == [
        ("b", "start"),
        ("inv-b", "on_success"),
        ("b", "at_end"),
        ("wf", "at_end"),
    ]
