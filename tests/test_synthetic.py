"""The synthetic submit-directory generator: structure, retries, failures, determinism.

These check the generated files against the formats monitord parses (line by line
for dagman.out, YAML for kickstart records, BP for static.bp), not against the
reference daemon, which is far too slow for unit tests.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from monitord.core.readers.bp import parse_bp_line
from monitord.tools.synthetic import Generated, generate, generate_example, main

LINE_RE = re.compile(r"^(\d\d/\d\d/\d\d \d\d:\d\d:\d\d) (.*)$")
BRACE_RE = re.compile(r"\{(\d\d/\d\d/\d\d \d\d:\d\d:\d\d)\}$")
EVENT_RE = re.compile(r"^Event: ULOG_(\w+) for HTCondor Node (\S+) \((\d+)\.0\.0\) \{")
BRAINDUMP_KEYS = {
    "user", "grid_dn", "submit_hostname", "root_wf_uuid", "wf_uuid", "dax", "dax_label",
    "dax_index", "dax_version", "pegasus_wf_name", "timestamp", "basedir", "submit_dir",
    "planner", "planner_version", "pegasus_build", "planner_arguments", "jsd", "rundir",
    "bindir", "vogroup", "uses_pmc", "properties", "condor_log", "dag", "type", "notify",
}  # fmt: skip


def _stamp(text: str) -> datetime:
    return datetime.strptime(text, "%m/%d/%y %H:%M:%S")


def _dagman_lines(gen: Generated) -> list[tuple[datetime, str]]:
    out = []
    for raw in gen.dagman_out.read_text().splitlines():
        m = LINE_RE.match(raw)
        assert m, f"line without a DAGMan timestamp: {raw!r}"
        out.append((_stamp(m.group(1)), m.group(2)))
    return out


def _dag_jobs(gen: Generated) -> dict[str, str]:
    """node name -> submit file (relative), from the JOB lines of the .dag."""
    jobs = {}
    for line in (gen.submit_dir / "synthetic-0.dag").read_text().splitlines():
        if line.startswith("JOB "):
            _, name, sub = line.split()
            jobs[name] = sub
    return jobs


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return generate(tmp_path_factory.mktemp("small"), 20, seed=1, retry_fraction=0.2)


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return generate(tmp_path_factory.mktemp("failing"), 120, seed=4, fail_fraction=0.02)


def test_file_counts_match_the_dag(small: Generated) -> None:
    jobs = _dag_jobs(small)
    assert len(jobs) == 20 == small.expected.jobs
    assert all(sub == f"00/00/{name}.sub" for name, sub in jobs.items())
    files = {p.name for p in (small.submit_dir / "00" / "00").iterdir()}
    assert {f"{name}.sub" for name in jobs} <= files
    outs = [f for f in files if re.search(r"\.out\.\d{3}$", f)]
    errs = [f for f in files if re.search(r"\.err\.\d{3}$", f)]
    assert len(outs) == len(errs) == small.expected.job_instances
    registers = [n for n in jobs if n.startswith("register_")]
    assert registers and all(f"{n}.in" in files for n in registers)
    assert small.expected.jobstates == 7 * small.expected.job_instances
    assert small.expected.invocations == 2 * small.expected.job_instances


def test_job_kinds_are_mixed(small: Generated) -> None:
    prefixes = {re.sub(r"_.*", "", name) for name in _dag_jobs(small)}
    assert {"create", "stage", "register", "clean", "analyze"} <= prefixes


def test_static_bp_lines_parse_and_cover_every_job(small: Generated) -> None:
    events: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in (small.submit_dir / "synthetic-0.static.bp").read_text().splitlines():
        rec = parse_bp_line(line)
        assert rec["ts"].startswith("1970-") and rec["xwf.id"] == small.wf_uuid
        events[rec["event"]].append(rec)
    assert {r["job.id"] for r in events["job.info"]} == set(_dag_jobs(small))
    assert len(events["task.info"]) == small.expected.tasks
    assert len(events["wf.map.task_job"]) == small.expected.tasks
    dag_edges = sum(
        1 for line in (small.submit_dir / "synthetic-0.dag").read_text().splitlines()
        if line.startswith("PARENT ")
    )  # fmt: skip
    assert len(events["job.edge"]) == dag_edges
    assert [len(events[e]) for e in ("static.meta.start", "static.meta.end")] == [1, 1]
    for rec in events["job.info"]:
        assert rec["max_retries"] == "1" and rec["submit_file"].endswith(".sub")


def test_braindump_has_the_planner_keys(small: Generated) -> None:
    data = yaml.safe_load((small.submit_dir / "braindump.yml").read_text())
    assert set(data) == BRAINDUMP_KEYS
    assert data["wf_uuid"] == data["root_wf_uuid"] == small.wf_uuid
    assert data["dag"] == "synthetic-0.dag"
    assert data["submit_dir"] == str(small.submit_dir)
    assert re.fullmatch(r"\d{8}T\d{6}-0800", data["timestamp"])


def test_sub_files_carry_the_pegasus_classads(small: Generated) -> None:
    for name, sub in _dag_jobs(small).items():
        text = (small.submit_dir / sub).read_text()
        assert f'+pegasus_wf_dag_job_id = "{name}"' in text
        assert f'+pegasus_wf_uuid = "{small.wf_uuid}"' in text
        assert re.search(r"^\+pegasus_job_class = \d+$", text, re.M)
        assert re.search(r'^\+pegasus_site = "(local|condorpool)"$', text, re.M)
        assert f"error = {small.submit_dir}//00/00/{name}.err" in text
        assert f"output = {small.submit_dir}//00/00/{name}.out" in text


def test_dagman_out_timestamps_and_event_order(small: Generated) -> None:
    lines = _dagman_lines(small)
    stamps = [t for t, _ in lines]
    assert stamps == sorted(stamps), "DAGMan log times go backwards"
    seen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for t, msg in lines:
        m = EVENT_RE.match(msg)
        if not m:
            continue
        brace = _stamp(BRACE_RE.search(msg).group(1))  # type: ignore[union-attr]
        assert brace <= t, f"event reported before it happened: {msg}"
        seen[(m.group(2), m.group(3))].append(m.group(1))
    assert len(seen) == small.expected.job_instances
    for events in seen.values():
        assert events == ["SUBMIT", "EXECUTE", "JOB_TERMINATED", "POST_SCRIPT_TERMINATED"]
    msgs = [m for _, m in lines]
    assert msgs[1].endswith("(CONDOR_DAGMAN) STARTING UP")
    assert any(m.startswith("** $CondorVersion: 10.2.5 ") for m in msgs)
    assert "Parsing synthetic-0.dag ..." in msgs
    assert msgs.count("All jobs Completed!") == 1
    assert re.fullmatch(r"\*\*\*\* condor_scheduniv_exec\.\d+\.0 \(condor_DAGMAN\) pid \d+ "
                        r"EXITING WITH STATUS 0", msgs[-1])  # fmt: skip
    submits = [m for m in msgs if m.startswith("Submitting HTCondor Node ")]
    assert len(submits) == small.expected.job_instances
    assert sum(m.startswith("Of 20 nodes total:") for m in msgs) > 3


def test_jobs_run_concurrently(tmp_path: Path) -> None:
    gen = generate(tmp_path, 200, seed=9)
    running, peak = 0, 0
    for _, msg in _dagman_lines(gen):
        m = EVENT_RE.match(msg)
        if m and m.group(1) == "EXECUTE":
            running += 1
            peak = max(peak, running)
        elif m and m.group(1) == "JOB_TERMINATED":
            running -= 1
    assert peak >= 5


def test_retries_rotate_outputs(small: Generated) -> None:
    msgs = [m for _, m in _dagman_lines(small)]
    retried = [m.split()[2] for m in msgs if m.startswith("Retrying node ")]
    assert retried and len(retried) == small.expected.retried_jobs
    jobdir = small.submit_dir / "00" / "00"
    for name in retried:
        first = yaml.safe_load((jobdir / f"{name}.out.000").read_text())[0]
        second = yaml.safe_load((jobdir / f"{name}.out.001").read_text())[0]
        assert first["mainjob"]["status"] == {"raw": 256, "regular_exitcode": 1}
        assert second["mainjob"]["status"] == {"raw": 0, "regular_exitcode": 0}
        assert "PegasusLite: exitcode 1" in (jobdir / f"{name}.err.000").read_text()
        assert "PegasusLite: exitcode 0" in (jobdir / f"{name}.err.001").read_text()
        assert not (jobdir / f"{name}.out.002").exists()
        assert f"Node {name} job proc (" in "\n".join(msgs)
        assert any(m.startswith(f"Reassigning the id of job {name} from (") and m.endswith(
            "to (-1.-1.-1)") for m in msgs)  # fmt: skip


def test_kickstart_records_are_complete_yaml(small: Generated) -> None:
    jobdir = small.submit_dir / "00" / "00"
    for path in sorted(jobdir.glob("*.out.*")):
        text = path.read_text()
        assert text.startswith("- invocation: True\n")
        rec = yaml.safe_load(text)[0]
        for key in ("start", "duration", "transformation", "hostname", "hostaddr", "resource",
                    "mainjob", "machine", "files", "usage", "jobids"):  # fmt: skip
            assert key in rec, f"{path.name} lacks {key}"
        assert isinstance(rec["mainjob"]["status"]["raw"], int)
        assert rec["machine"]["cpu_count"] > 0
        outputs = [f for f in rec["files"].values() if f.get("output")]
        for out in outputs:
            assert re.fullmatch(r"[0-9a-f]{64}", out["sha256"])
            assert "checksum_timing" in out and "lfn" in out
        if path.name.startswith("analyze_") and rec["mainjob"]["status"]["raw"] == 0:
            assert outputs
    durations = {yaml.safe_load(p.read_text())[0]["duration"] for p in jobdir.glob("*.out.*")}
    assert len(durations) > small.expected.job_instances // 2


def test_pegasus_lite_stderr_names_the_host(small: Generated) -> None:
    jobdir = small.submit_dir / "00" / "00"
    compute_errs = [p for p in jobdir.glob("*_ID*.err.*")]
    assert compute_errs
    for err in compute_errs:
        text = err.read_text()
        host = re.search(r": Executing on host (\S+) IP=(\S+)$", text, re.M)
        assert host and re.search(r"^PegasusLite: exitcode \d+$", text, re.M)
        rec = yaml.safe_load(Path(str(err).replace(".err.", ".out.")).read_text())[0]
        assert (rec["hostname"], rec["hostaddr"]) == host.groups()


def test_register_in_lists_the_staged_outputs(small: Generated) -> None:
    for path in (small.submit_dir / "00" / "00").glob("register_*.in"):
        lines = path.read_text().splitlines()
        assert lines and all(re.fullmatch(r'\S+ file://\S+ site="local"', ln) for ln in lines)


def test_permanent_failure_ends_the_dag_with_status_1(failing: Generated) -> None:
    exp = failing.expected
    assert exp.dagman_exit == 1 and exp.failed_jobs >= 1 and exp.futile_jobs >= 1
    msgs = [m for _, m in _dagman_lines(failing)]
    assert msgs[-1].endswith("EXITING WITH STATUS 1")
    assert "ERROR: the following job(s) failed:" in msgs
    assert sum(m.startswith("      Node Name: ") for m in msgs) == exp.failed_jobs
    assert (failing.submit_dir / "synthetic-0.dag.rescue001").exists()
    submitted = {m.split()[3] for m in msgs if m.startswith("Submitting HTCondor Node ")}
    never_run = set(_dag_jobs(failing)) - submitted
    assert len(never_run) == exp.futile_jobs
    for name in never_run:
        sub = _dag_jobs(failing)[name]
        assert not (failing.submit_dir / sub).with_suffix(".out.000").exists()
    assert exp.job_instances == len(submitted) + exp.retried_jobs


def test_large_workflows_spread_over_hashed_subdirs(failing: Generated) -> None:
    subs = _dag_jobs(failing)
    dirs = {sub.rsplit("/", 1)[0] for sub in subs.values()}
    assert dirs == {"00/00", "00/01", "00/02"}
    assert all((failing.submit_dir / sub).is_file() for sub in subs.values())


def _snapshot(root: Path) -> dict[str, str]:
    """File contents, with the (legitimately different) parent path masked."""
    return {
        str(p.relative_to(root)): p.read_text().replace(str(root.parent), "<BASE>")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_directory(tmp_path: Path) -> None:
    a = generate(tmp_path / "a" / "run0001", 60, seed=42)
    b = generate(tmp_path / "b" / "run0001", 60, seed=42)
    c = generate(tmp_path / "c" / "run0001", 60, seed=43)
    snap_a, snap_b = _snapshot(a.submit_dir), _snapshot(b.submit_dir)
    assert snap_a == snap_b and a.wf_uuid == b.wf_uuid
    assert c.wf_uuid != a.wf_uuid and _snapshot(c.submit_dir) != snap_a


def test_tiny_workflows_are_a_chain(tmp_path: Path) -> None:
    gen = generate(tmp_path, 3, seed=0, retry_fraction=0)
    assert gen.expected.jobs == 3 and gen.expected.job_instances == 3
    assert len(_dag_jobs(gen)) == 3


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        generate(tmp_path / "x", 0)
    with pytest.raises(ValueError):
        generate(tmp_path / "y", 10, retry_fraction=1.5)
    with pytest.raises(ValueError):
        generate(tmp_path / "z", 10, name="bad name")


def test_generate_example(tmp_path: Path) -> None:
    out = generate_example(tmp_path / "demo")
    assert out.is_file() and out.name.endswith(".dag.dagman.out")
    assert (out.parent / "braindump.yml").is_file()
    assert out.read_text().rstrip().endswith("EXITING WITH STATUS 0")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "cli"
    assert main([str(target), "--jobs", "15", "--seed", "3", "--name", "demo", "--json"]) == 0
    printed = capsys.readouterr().out
    assert '"jobs": 15' in printed and (target / "demo-0.dag.dagman.out").is_file()
    with pytest.raises(SystemExit):
        main([str(target), "--jobs", "15"])  # refuses a non-empty directory
