"""The workflow state machine, fed dagman.out lines and in-memory job files (no disk, no loop)."""

from __future__ import annotations

import pytest

from monitord.core.readers.braindump import parse_braindump_yml
from monitord.core.readers.dagfile import parse_dag
from monitord.core.workflow import Workflow, WorkflowContext, WorkflowOptions
from tests.event_check import wire

RUN = "/run"
BRAINDUMP = """\
user: "u"
wf_uuid: "wf-1"
root_wf_uuid: "wf-1"
dax: "/x/workflow.yml"
dax_label: "demo"
dax_index: "0"
dag: "demo-0.dag"
submit_dir: "/orig/run0001"
planner_version: "5.0.5"
submit_hostname: "h"
timestamp: "20230303T222333-0800"
"""
DAG = """\
JOB a 00/00/a.sub
SCRIPT POST a /bin/pegasus-exitcode  -r $RETURN
JOB b 00/00/b.sub
JOB p 00/00/p.sub
SCRIPT PRE p 00/00/p.pre.sh  -Dpegasus.log.*=/orig/run0001/p.pre.log --conf x
"""
SUB = """\
output = /orig/run0001//00/00/{n}.out
error = /orig/run0001//00/00/{n}.err
executable = /bin/{n}
+pegasus_site = "condorpool"
+pegasus_job_class = 1
+pegasus_cores = 1
"""


def ks(raw: int = 0) -> str:
    return f"""- invocation: True
  start: 2023-03-03T22:24:20.615-08:00
  duration: 0.5
  transformation: "t"
  derivation: "ID1"
  resource: "condorpool"
  hostaddr: 10.0.0.1
  hostname: node1
  user: u
  mainjob:
    start: 2023-03-03T22:24:20.709-08:00
    duration: 0.25
    usage:
      utime: 0.1
      stime: 0.15
      maxrss: 100
    status:
      raw: {raw}
      regular_exitcode: {raw >> 8}
    executable:
      file_name: /bin/t
  cwd: /scratch
"""


pytestmark = pytest.mark.usefixtures("utc")  # local times read and written in UTC


def make(files: dict[str, str] | None = None, dag: str = DAG, **opts) -> Workflow:
    """A workflow on ``dag`` (given at the start: its nodes are one table with the job
    instances, core/nodetable.py)."""
    fs = {f"{RUN}/00/00/{n}.sub": SUB.format(n=n) for n in ("a", "b", "p")}
    fs.update(files or {})
    ctx = WorkflowContext(read_text=fs.get, events=[], options=WorkflowOptions(**opts))
    return Workflow(
        ctx,
        run_dir=RUN,
        braindump=parse_braindump_yml(BRAINDUMP),
        dag=parse_dag(dag),
        root_uuid="wf-1",
        wf_ts=1,
    )


def feed(wf: Workflow, text: str) -> None:
    for line in text.strip("\n").splitlines():
        wf.feed(line)


def names(wf: Workflow) -> list[str]:
    return [e.name for e in wf.events]


def states(wf: Workflow) -> list[str]:
    return [" ".join(line.split()[1:]) for line in wf.jobstate_lines]


START = """\
01/01/23 00:00:00 ** condor_scheduniv_exec.1.0 (CONDOR_DAGMAN) STARTING UP
01/01/23 00:00:00 ** $CondorVersion: 10.2.5 2023-02-27 $
01/01/23 00:00:00 Parsing demo-0.dag ...
"""

RUN_A = """\
01/01/23 00:00:01 Submitting HTCondor Node a job(s)...
01/01/23 00:00:02 Event: ULOG_SUBMIT for HTCondor Node a (5.0.0) {01/01/23 00:00:01}
01/01/23 00:00:03 Event: ULOG_EXECUTE for HTCondor Node a (5.0.0) {01/01/23 00:00:03}
01/01/23 00:00:05 Event: ULOG_JOB_TERMINATED for HTCondor Node a (5.0.0) {01/01/23 00:00:04}
01/01/23 00:00:05 Node a job proc (5.0.0) failed with status 2.
01/01/23 00:00:05 Running POST script of Node a...
01/01/23 00:00:06 Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node a (5.0.0) {01/01/23 00:00:06}
01/01/23 00:00:07 POST Script of node a failed with status 1
"""


def test_job_with_post_script_event_order_and_numbering():
    wf = make(
        {f"{RUN}/00/00/a.out.000": ks(512), f"{RUN}/00/00/a.err.000": "PegasusLite: exitcode 2\n"}
    )
    feed(wf, START + RUN_A)
    assert states(wf) == [
        "INTERNAL *** DAGMAN_STARTED 1.0 ***",
        "a SUBMIT 5.0 condorpool - 1",
        "a EXECUTE 5.0 condorpool - 1",
        "a JOB_TERMINATED 5.0 condorpool - 1",
        "a JOB_FAILURE 2 condorpool - 1",
        "a POST_SCRIPT_STARTED 5.0 condorpool - 1",
        "a POST_SCRIPT_TERMINATED 5.0 condorpool - 1",
        "a POST_SCRIPT_FAILURE 1 condorpool - 1",
    ]
    assert names(wf) == [
        "xwf.start",
        "job_inst.submit.start",
        "job_inst.submit.end",
        "job_inst.main.start",
        "job_inst.main.term",
        "job_inst.post.start",
        "job_inst.post.term",
        "inv.start",
        "inv.end",
        "job_inst.host.info",
        "job_inst.main.end",
        "job_inst.composite",
        "inv.start",
        "inv.end",
        "job_inst.post.end",
    ]
    by = {e.name: wire(e) for e in wf.events}
    main_end = by["job_inst.main.end"]
    # deferred main.end keeps the dagman.out exit code (raw), not the PegasusLite one
    assert main_end["exitcode"] == "512" and main_end["status"] == -1 and main_end["js.id"] == 4
    assert main_end["stdout.file"] == "00/00/a.out.000" and main_end["work_dir"] == "/scratch"
    assert by["job_inst.post.end"]["exitcode"] == "256" and by["job_inst.post.end"]["js.id"] == 7
    inv = [wire(e) for e in wf.events if e.name == "inv.end"]
    assert inv[0]["exitcode"] == 512 and inv[0]["level"] == "Error" and inv[0]["dur"] == 0.25
    assert inv[1]["inv.id"] == -2 and inv[1]["transformation"] == "dagman::post"
    assert all(wire(e)["root.xwf.id"] == "wf-1" for e in wf.events)


def test_first_state_with_a_sched_id_sends_submit_start_even_job_success():
    """Lines lost between the submission and the job's end: the row still gets its submit.start."""
    wf = make({f"{RUN}/00/00/a.out.000": ks(0)})
    feed(
        wf,
        START
        + "01/01/23 00:00:01 Submitting HTCondor Node a job(s)...\n"
        + "01/01/23 00:00:05 Node a job proc (5.0.0) completed successfully.\n"
        + "01/01/23 00:00:05 Running POST script of Node a...\n"
        + "01/01/23 00:00:07 POST Script of node a completed successfully.\n",
    )
    assert names(wf)[1] == "job_inst.submit.start"
    start = wire(wf.events[1])
    assert start["sched.id"] == "5.0.0" and start["js.id"] == 1
    # the POST script's start line is kept here; without it see the next test
    # the outputs read are the .000 ones, and the paths say so
    main_end = next(wire(e) for e in wf.events if e.name == "job_inst.main.end")
    assert main_end["stdout.file"] == "00/00/a.out.000"


def test_script_without_its_start_line_starts_at_its_end_without_cpu_time():
    wf = make({f"{RUN}/00/00/a.out.000": ks(0)})
    feed(
        wf,
        START
        + RUN_A.replace("01/01/23 00:00:05 Running POST script of Node a...\n", "").replace(
            "failed with status 1", "completed successfully."
        ),
    )
    start, end = (
        wire(e) for e in wf.events if e.name.startswith("inv.") and wire(e)["inv.id"] == -2
    )
    assert "ts" not in start  # the BP writer stamps it "now", as the reference's
    assert end["start_time"] == end["ts"] and end["dur"] == 0
    assert "remote_cpu_time" not in end


def test_duplicated_block_after_the_end_repeats_the_submit_file_details():
    """A block of lines seen twice: the job's ended, yet its events keep the .sub details."""
    wf = make({f"{RUN}/00/00/a.out.000": ks(512), f"{RUN}/00/00/a.out.001": ks(512)})
    again = RUN_A.split("\n", 1)[1]  # from the ULOG_SUBMIT line: same sched id, same instance
    feed(wf, START + RUN_A + again)
    starts = [wire(e) for e in wf.events if e.name == "job_inst.main.start"]
    assert len(starts) == 2
    for key in ("stdout.file", "stderr.file", "site"):
        assert starts[1].get(key) == starts[0].get(key), key


def test_retry_gets_a_new_instance_and_the_next_output_counter():
    wf = make({f"{RUN}/00/00/a.out.000": ks(512), f"{RUN}/00/00/a.out.001": ks(0)})
    feed(
        wf,
        START
        + RUN_A
        + RUN_A.replace("5.0.0", "6.0.0")
        .replace("failed with status 2.", "completed successfully.")
        .replace("failed with status 1", "completed successfully."),
    )
    seqs = {line.split()[-1] for line in wf.jobstate_lines if " a " in line}
    assert seqs == {"1", "2"}
    ends = [wire(e) for e in wf.events if e.name == "job_inst.main.end"]
    assert [e["stdout.file"] for e in ends] == ["00/00/a.out.000", "00/00/a.out.001"]
    assert wf.out_count("a") == 1 and wf.job_seq == 3


def test_pre_script_failure_then_retry():
    wf = make()
    feed(
        wf,
        START
        + """\
01/01/23 00:01:00 Running PRE script of Node p...
01/01/23 00:01:02 PRE Script of Job p failed with status 2
01/01/23 00:01:03 Running PRE script of Node p...
01/01/23 00:01:04 PRE Script of node p completed successfully.
01/01/23 00:01:05 Submitting HTCondor Node p job(s)...
01/01/23 00:01:06 Event: ULOG_SUBMIT for HTCondor Node p (9.0.0) {01/01/23 00:01:05}
""",
    )
    assert states(wf)[1:] == [
        "p PRE_SCRIPT_STARTED - condorpool - 1",
        "p PRE_SCRIPT_TERMINATED - condorpool - 1",
        "p PRE_SCRIPT_FAILURE 2 condorpool - 1",
        "p PRE_SCRIPT_STARTED - condorpool - 2",
        "p PRE_SCRIPT_TERMINATED - condorpool - 2",
        "p PRE_SCRIPT_SUCCESS 0 condorpool - 2",
        "p SUBMIT 9.0 condorpool - 2",
    ]
    first_end = next(wire(e) for e in wf.events if e.name == "job_inst.main.end")
    assert first_end["status"] == -1 and first_end["exitcode"] == "512"
    assert first_end["stdout.file"] == "/orig/run0001/p.pre.log.000"
    assert wf.out_count("p") == 1  # PRE failure (0) then SUBMIT (1)


def test_held_released_and_abort_after_hold_is_deferred_to_post():
    wf = make({f"{RUN}/00/00/a.out.000": ks(0)})
    feed(
        wf,
        START
        + """\
01/01/23 00:00:01 Submitting HTCondor Node a job(s)...
01/01/23 00:00:02 Event: ULOG_SUBMIT for HTCondor Node a (5.0.0) {01/01/23 00:00:01}
01/01/23 00:00:03 Event: ULOG_JOB_HELD for HTCondor Node a (5.0.0) {01/01/23 00:00:03}
01/01/23 00:00:03   Hold reason: disk full
01/01/23 00:00:04 Event: ULOG_JOB_RELEASED for HTCondor Node a (5.0.0) {01/01/23 00:00:04}
01/01/23 00:00:05 Event: ULOG_JOB_HELD for HTCondor Node a (5.0.0) {01/01/23 00:00:05}
01/01/23 00:00:05   Hold reason: again
01/01/23 00:00:06 Event: ULOG_JOB_ABORTED for HTCondor Node a (5.0.0) {01/01/23 00:00:06}
01/01/23 00:00:07 Running POST script of Node a...
01/01/23 00:00:08 POST Script of node a failed with status 1
""",
    )
    held = [wire(e) for e in wf.events if e.name == "job_inst.held.start"]
    assert [h["reason"] for h in held] == [" disk full", " again"]
    assert [h["js.id"] for h in held] == [3, 6]
    order = names(wf)
    assert (
        order.index("job_inst.abort.info")
        < order.index("job_inst.post.start")
        < order.index("job_inst.main.end")
    )
    assert "job_inst.held.end" in order


def test_submit_failure_sends_main_end_with_quoted_reason():
    wf = make()
    feed(
        wf,
        START
        + """\
01/01/23 00:00:01 Submitting HTCondor Node b job(s)...
01/01/23 00:00:02 ERROR: submit attempt failed
""",
    )
    assert states(wf)[-1] == "b SUBMIT_FAILED - condorpool - 1"
    end = next(wire(e) for e in wf.events if e.name == "job_inst.main.end")
    assert end["status"] == -1 and end["exitcode"] == "1"
    assert end["stderr.text"] == "Job submission failed because of HTCondor event SUBMIT_FAILED"


def test_dagman_restart_without_exit_inserts_synthetic_end():
    wf = make()
    feed(wf, START + START.replace("00:00:00", "00:10:00"))
    assert states(wf) == [
        "INTERNAL *** DAGMAN_STARTED 1.0 ***",
        "INTERNAL *** DAGMAN_FINISHED 2 ***",
        "INTERNAL *** DAGMAN_STARTED 1.0 ***",
    ]
    xwf = [(e.name, wire(e)["restart_count"], wire(e).get("status")) for e in wf.events]
    assert xwf == [("xwf.start", 0, None), ("xwf.end", 0, 2), ("xwf.start", 1, None)]
    assert int(wf.jobstate_lines[1].split()[0]) == int(wf.jobstate_lines[2].split()[0]) - 1


def test_bad_lines_never_crash():
    wf = make()
    feed(
        wf,
        START
        + """\
01/01/23 00:00:01   Hold reason: before any job
01/01/23 00:00:02 Event: ULOG_EXECUTE for HTCondor Node ghost (1.0.0) {01/01/23 00:00:02}
01/01/23 00:00:03 POST Script of node ghost completed successfully.
not a dagman line at all
01/01/23 00:00:04 **** condor_scheduniv_exec.1.0 (condor_DAGMAN) pid 1 EXITING WITH STATUS x
""",
    )
    # unknown jobs and early hold reasons are ignored; a non-integer exit code gives 0 and exit code 1
    assert states(wf) == [
        "INTERNAL *** DAGMAN_STARTED 1.0 ***",
        "INTERNAL *** DAGMAN_FINISHED 0 ***",
    ]
    assert wf.monitord_exit == 1


def test_no_events_still_writes_jobstate():
    wf = make(events_enabled=False)
    feed(wf, START + RUN_A)
    assert wf.events == []
    assert len(wf.jobstate_lines) == 8


def test_finished_instances_share_their_texts():
    """A finished instance is kept to the end: the texts every instance holds (state, site,
    user, work dir, submit dir, the node's name) are one copy each, not one per line."""
    import sys

    wf = make(
        {
            f"{RUN}/00/00/a.out.000": ks(512),
            f"{RUN}/00/00/a.err.000": "",
            f"{RUN}/00/00/b.out": ks(0),
            f"{RUN}/00/00/b.err": "",
        }
    )
    feed(
        wf,
        START
        + RUN_A
        + """\
01/01/23 00:00:08 Submitting HTCondor Node b job(s)...
01/01/23 00:00:09 Event: ULOG_SUBMIT for HTCondor Node b (6.0.0) {01/01/23 00:00:09}
01/01/23 00:00:10 Event: ULOG_EXECUTE for HTCondor Node b (6.0.0) {01/01/23 00:00:10}
01/01/23 00:00:11 Event: ULOG_JOB_TERMINATED for HTCondor Node b (6.0.0) {01/01/23 00:00:11}
01/01/23 00:00:11 Node b job proc (6.0.0) completed successfully.
""",
    )
    a, b = (wf._latest_instance(name) for name in ("a", "b"))
    assert a is not None and b is not None
    assert (a.state, b.state) == ("POST_SCRIPT_FAILURE", "JOB_SUCCESS")
    assert (a.site, a.user, a.work_dir) == ("condorpool", "u", "/scratch")
    for text in ("site", "user", "work_dir", "submit_dir"):
        assert getattr(a, text) is getattr(b, text), text
    for inst in (a, b):
        assert inst.name is wf.dag.nodes[inst.name].name
        for text in ("state", "prev_state", "known_state"):
            value = getattr(inst, text)
            assert value is sys.intern(value), (inst.name, text)


def _many_jobs(n: int, first: int = 0) -> tuple[str, dict[str, str], str]:
    """A .dag of ``n`` plain jobs, their files, and the dagman.out lines that run each once."""
    dag, files, lines = [], {}, []
    for i in range(first, first + n):
        name = f"job_{i}"
        dag.append(f"JOB {name} 00/00/{name}.sub")
        files[f"{RUN}/00/00/{name}.sub"] = SUB.format(n=name)
        files[f"{RUN}/00/00/{name}.out"] = ks(0)
        files[f"{RUN}/00/00/{name}.err"] = ""
        sched = f"{1000 + i}.0.0"
        lines.append(
            f"01/01/23 00:00:08 Submitting HTCondor Node {name} job(s)...\n"
            f"01/01/23 00:00:09 Event: ULOG_SUBMIT for HTCondor Node {name} ({sched}) {{01/01/23 00:00:09}}\n"
            f"01/01/23 00:00:10 Event: ULOG_EXECUTE for HTCondor Node {name} ({sched}) {{01/01/23 00:00:10}}\n"
            f"01/01/23 00:00:11 Event: ULOG_JOB_TERMINATED for HTCondor Node {name} ({sched}) {{01/01/23 00:00:11}}\n"
            f"01/01/23 00:00:11 Node {name} job proc ({sched}) completed successfully.\n"
        )
    return "\n".join(dag) + "\n", files, "".join(lines)


def test_a_finished_instance_is_kept_compact_and_revived_whole():
    """The workflow keeps a finished instance to the end, as a compact record: a later state
    of it (duplicated lines) gets back the very instance that ended, every value equal."""
    from copy import copy

    from monitord.core.jobinstance import (
        JobInstance,
        record_sched_id,
        record_seq,
        record_state,
    )

    wf = make({f"{RUN}/00/00/a.out.000": ks(512)})
    feed(wf, START + RUN_A)
    ended = copy(wf.last_updated)
    assert isinstance(ended, JobInstance) and ended.retired and ended.main_start is not None
    record = wf.latest["a"]
    assert type(record) is bytes
    assert (record_state(record), record_sched_id(record), record_seq(record)) == (
        "POST_SCRIPT_FAILURE",
        "5.0",
        1,
    )
    assert wf._latest_instance("a") == ended
    assert isinstance(wf.latest["a"], JobInstance)


def test_memory_per_finished_job_instance_is_small():
    """What the machine keeps per finished job (its instance, the keys naming it) is a few
    hundred bytes, so a 100,000-job workflow's memory is not its job count (issue 30)."""
    import gc
    import tracemalloc

    n = 400
    dag_a, files_a, lines_a = _many_jobs(n)
    dag_b, files_b, lines_b = _many_jobs(n, first=n)
    wf = make({**files_a, **files_b}, dag_a + dag_b, events_enabled=False)
    feed(wf, START + lines_a)
    wf.jobstate_lines.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for line in lines_b.splitlines():
            wf.feed(line)
            wf.jobstate_lines.clear()
        gc.collect()
        per_job = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    assert len(wf.latest) == 2 * n
    # 777 B with the whole instance kept, 504 B with each keyed by (name, seq) beside the
    # node's latest seq; ~332 B keyed by the node's name alone; ~270 B with the record's
    # states as codes and retire()'s cleared values left out; ~246 B with the values as
    # varints and the shared texts numbered (issue 30; 269.5 B before)
    assert per_job < 255, per_job


def test_a_finished_instance_record_packs_only_what_revive_needs():
    """The record keeps the states as one-byte codes and neither what retire() cleared nor
    the submit directory the node's .dag entry gives: ~130 B for this job, 194 B when every
    value was packed (issue 30)."""
    import sys

    wf = make({f"{RUN}/00/00/a.out.000": ks(512)})
    feed(wf, START + RUN_A)
    record = wf.latest["a"]
    assert type(record) is bytes
    assert b"POST_SCRIPT" not in record and b"/run/00/00" not in record
    assert sys.getsizeof(record) < 150, sys.getsizeof(record)


def test_a_record_revives_values_it_packs_another_way():
    """A state outside the code table kept as its text, a time with a fraction kept a
    float, a submit directory other than the node's kept: revived, every value is equal."""
    from dataclasses import replace

    from monitord.core.jobinstance import (
        JobInstance,
        finished,
        record_seq,
        record_state,
        revive,
    )

    inst = JobInstance("a", 3, "/elsewhere", state="SOME_NEW_STATE", prev_state=None)
    inst.known_state, inst.main_start, inst.main_end = "JOB_SUCCESS", 10.5, 12.0
    inst.retire()
    record = finished(inst, "/run/00/00")
    assert type(record) is bytes
    assert (record_state(record), record_seq(record)) == ("SOME_NEW_STATE", 3)
    assert revive(record, "a", "/run/00/00") == inst
    whole = replace(inst, main_start=10.0, submit_dir="/run/00/00")
    again = finished(whole, "/run/00/00")
    assert type(again) is bytes
    revived = revive(again, "a", "/run/00/00")
    assert revived == whole and type(revived.main_start) is float
    inst.retired = False  # not retired: kept whole
    assert finished(inst) is inst


def _finished_instance(**values: object) -> object:
    from monitord.core.jobinstance import JobInstance

    inst = JobInstance("a", 12345, "/run/00/00", state="POST_SCRIPT_SUCCESS", js_seq=7)
    inst.sched_id, inst.site, inst.user, inst.out_num = "3842.0", "local", "bruno", 0
    inst.main_start, inst.main_end, inst.post_start, inst.post_end = 1675534791.0, 1675534795.0, 1675534796.0, 1675534796.0  # fmt: skip
    inst.main_exitcode = inst.post_exitcode = 0
    inst.work_dir = "/var/lib/condor/spool/local_univ_execute/dir_3060240"
    inst.kickstart_parsed = inst.rotated = True
    for name, value in values.items():
        setattr(inst, name, value)
    inst.retire()
    return inst


def test_a_record_numbers_its_shared_texts_and_packs_ints_small():
    """A synthetic workflow's finished instance: its site, user and work directory's parent
    numbered in the workflow's table, its ints as varints, its times after the first as
    differences, its sched id as two numbers, its work directory as the numbered text before
    its last number and that number: 100 B, 112 B with those two as texts, 186 B with every
    value marshalled (issue 30); 86 B with its values laid out by position (no tag for a
    None, an int or a bool), one pymalloc size class less."""
    import sys

    from monitord.core.jobinstance import (
        TextTable,
        finished,
        record_sched_id,
        record_seq,
        record_state,
        revive,
    )

    texts = TextTable()
    inst = _finished_instance()
    record = finished(inst, "/run/00/00", texts)  # type: ignore[arg-type]
    assert type(record) is bytes
    assert b"local_univ_execute" not in record and b"bruno" not in record
    assert b"3842" not in record and b"3060240" not in record
    assert sys.getsizeof(record) <= 86, sys.getsizeof(record)
    assert (record_state(record), record_sched_id(record), record_seq(record)) == (
        "POST_SCRIPT_SUCCESS",
        "3842.0",
        12345,
    )
    assert revive(record, "a", "/run/00/00", texts) == inst
    # a second instance shares the table's texts: no new one
    finished(_finished_instance(work_dir="/var/lib/condor/spool/local_univ_execute/dir_7"), "/run/00/00", texts)  # type: ignore[arg-type]  # fmt: skip
    assert len(texts.texts) == 3


# _finished_instance()'s record as the tagged layout (_encode, snapshot version 6) wrote it
_TAGGED_RECORD = "18ffff0b03b9600003070a821e00070003000000000003c7c3fa9e060908030009020900030007010b0290e4ba010000000202"  # fmt: skip


def test_a_record_of_the_tagged_layout_still_revives():
    """A record a snapshot of version 6 holds (one tag a value) is read as before: a crash
    resumed by a newer daemon finds every value it packed."""
    from monitord.core.jobinstance import (
        TextTable,
        finished,
        record_out_num,
        record_sched_id,
        record_seq,
        revive,
    )

    texts = TextTable()
    texts.__setstate__(["local", "bruno", "/var/lib/condor/spool/local_univ_execute/dir_"])
    record = bytes.fromhex(_TAGGED_RECORD)
    assert revive(record, "a", "/run/00/00", texts) == _finished_instance()
    assert (record_sched_id(record), record_seq(record), record_out_num(record)) == (
        "3842.0",
        12345,
        0,
    )
    again = finished(_finished_instance(), "/run/00/00", texts)  # type: ignore[arg-type]
    assert (
        len(again) < len(record) and revive(again, "a", "/run/00/00", texts) == _finished_instance()
    )


@pytest.mark.parametrize(
    "values",
    [
        {"main_end": 1675534700.0, "post_start": None},  # a time before the one before it
        {"main_exitcode": -1, "pre_exitcode": -128, "post_exitcode": 2**40},
        {"main_start": 0.25, "cluster_dur": 1.5, "main_exitcode": "PegasusLite: 3"},
        {"work_dir": "relative", "user": "", "site": "sité ✓", "stdout_file": "/o/a.out"},
        {"work_dir": "/"},
        {"sched_id": "\udc80"},  # a lone surrogate: marshalled
        {"cluster_start": 7, "time_req": 300, "submit_dir": "/elsewhere"},
        {"sched_id": "0.0", "work_dir": "/scratch/0"},  # numbers
        {"sched_id": "0042.1", "work_dir": "/scratch/0012"},  # leading zeros: texts
        {"sched_id": "12", "work_dir": "/x/dir_\u0663"},  # no dot; an Arabic-Indic digit
        {"sched_id": "1.2.3", "work_dir": "/x/" + "9" * 19},  # two dots; a number too long
        {"sched_id": "1.", "work_dir": "/x/5/"},  # no proc; no number at the end
        {"main_start": 0.25, "main_end": 1675534795},  # an int time among floats: tagged
        {"kickstart_parsed": None, "js_seq": True},  # not of their places' kinds: tagged
    ],
)
def test_a_record_revives_every_kind_of_value_equal(values: dict[str, object]) -> None:
    """Whatever the values (negative ints, fractions, texts that are no path, a surrogate
    marshal keeps), with or without the text table, and with the table full: revived equal."""
    from monitord.core import jobinstance
    from monitord.core.jobinstance import (
        TextTable,
        finished,
        record_sched_id,
        record_seq,
        revive,
    )

    inst = _finished_instance(**values)
    full = TextTable()
    for n in range(jobinstance.TEXTS_MAX):
        full.number(str(n))
    for texts in (TextTable(), None, full):
        record = finished(inst, "/run/00/00", texts)  # type: ignore[arg-type]
        assert type(record) is bytes
        assert revive(record, "a", "/run/00/00", texts) == inst
        assert record_seq(record) == 12345 and record_sched_id(record) == inst.sched_id  # type: ignore[attr-defined]


def test_a_snapshot_keeps_the_finished_instances_compact():
    """A crash-resume snapshot pickles the machine: a finished instance stays its compact
    record there, and the restored machine revives it whole (the live daemon's path)."""
    import pickle

    wf = make({f"{RUN}/00/00/a.out.000": ks(512)})
    feed(wf, START + RUN_A)
    restored = pickle.loads(pickle.dumps(wf))
    assert type(restored.latest["a"]) is bytes
    assert restored.latest["a"] == wf.latest["a"]
    assert restored._latest_instance("a") == wf._latest_instance("a")


# A piece of a version-7 snapshot's ``latest`` (monitord/daemon/resume.py SnapshotCache):
# [("a", _finished_instance()'s record)], the record pickled as the bytes subclass it was then
_PICKLED_BY_7 = "80059562000000000000005d948c0161948c196d6f6e69746f72642e636f72652e6a6f62696e7374616e6365948c0b46696e69736865644a6f62949394432518ffff0be3fc3df2c0010e0a821e000700008e87f5bd0c08030002000007010b0290e4ba0194859481948694612e"  # fmt: skip


def test_a_record_a_version_7_snapshot_pickled_loads_as_plain_bytes():
    """A crash resumed by this daemon from a snapshot of the one before: its records (a
    ``bytes`` subclass then) load as the plain ``bytes`` the machine tells from a live
    instance, and revive every value."""
    import pickle

    from monitord.core.jobinstance import TextTable, record_state, revive
    from monitord.daemon.resume import READS

    assert 7 in READS
    texts = TextTable()
    texts.__setstate__(["local", "bruno", "/var/lib/condor/spool/local_univ_execute/dir_"])
    [(name, record)] = pickle.loads(bytes.fromhex(_PICKLED_BY_7))
    assert name == "a" and type(record) is bytes
    assert record_state(record) == "POST_SCRIPT_SUCCESS"
    assert revive(record, "a", "/run/00/00", texts) == _finished_instance()
