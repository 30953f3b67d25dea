"""The workflow player: the order of its writes (planned without files), and playing for real."""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from monitord.tools.player import (
    Action,
    Append,
    Copy,
    Pause,
    Player,
    Source,
    SourceWorkflow,
    WriteFile,
    plan,
    run_starts,
    scan,
)
from monitord.tools.synthetic import generate

T = "01/26/23 08:00:00"


def ulog(state: str, node: str, cluster: int) -> str:
    return f"{T} Event: ULOG_{state} for HTCondor Node {node} ({cluster}.0.0) {{{T}}}\n"


def done(node: str, cluster: int) -> str:
    return f"{T} Node {node} job proc ({cluster}.0.0) completed successfully.\n"


def banner(cluster: int) -> list[str]:
    return [
        f"{T} ******************************************************\n",
        f"{T} ** condor_scheduniv_exec.{cluster}.0 (CONDOR_DAGMAN) STARTING UP\n",
    ]


def exiting(code: int) -> str:
    return f"{T} **** condor_scheduniv_exec.1.0 (condor_DAGMAN) pid 1 EXITING WITH STATUS {code}\n"


def appended(actions: Sequence[Action], path: str) -> list[str]:
    return [a.line for a in actions if isinstance(a, Append) and a.path == path]


def index_of(actions: Sequence[Action], wanted: Action) -> int:
    return actions.index(wanted)


def test_outputs_appear_just_before_the_line_that_ends_each_attempt() -> None:
    lines = [
        *banner(1),
        ulog("SUBMIT", "a", 10),
        ulog("EXECUTE", "a", 10),
        ulog("JOB_TERMINATED", "a", 10),  # attempt .000 ends
        ulog("SUBMIT", "a", 11),
        ulog("JOB_TERMINATED", "a", 11),  # attempt .001 ends
        done("a", 11),
        exiting(0),
    ]
    wf = SourceWorkflow(
        "w.dag.dagman.out",
        lines,
        outputs={
            "a": [(0, "00/a.out.000"), (0, "00/a.err.000"), (1, "00/a.out.001"), (None, "00/a.log")]
        },
    )
    actions = plan(Source(wf, ["00", "w.dag", "00/a.sub"]))
    assert actions[:3] == [Copy("00"), Copy("w.dag"), Copy("00/a.sub")]
    assert appended(actions, "w.dag.dagman.out") == lines  # every line, in order, once
    first_end = index_of(actions, Append("w.dag.dagman.out", lines[4]))
    second_end = index_of(actions, Append("w.dag.dagman.out", lines[6]))
    writes = {a.path: i for i, a in enumerate(actions) if isinstance(a, WriteFile)}
    assert writes.keys() == {"00/a.out.000", "00/a.err.000", "00/a.out.001", "00/a.log"}
    assert index_of(actions, Append("w.dag.dagman.out", lines[3])) < writes["00/a.out.000"]
    assert writes["00/a.out.000"] < first_end and writes["00/a.err.000"] < first_end
    assert writes["00/a.log"] < first_end  # an unsuffixed output: with the first attempt
    assert first_end < writes["00/a.out.001"] < second_end


def test_recovery_lines_do_not_count_attempts_and_unclaimed_outputs_come_last() -> None:
    lines = [
        *banner(1),
        f"{T} Running in RECOVERY mode...\n",
        ulog("SUBMIT", "a", 10),  # replayed from the node log: not a new attempt
        f"{T} ...done with RECOVERY mode <<<<<\n",
        ulog("SUBMIT", "a", 12),
        ulog("JOB_TERMINATED", "a", 12),
        exiting(0),
    ]
    wf = SourceWorkflow(
        "w.dag.dagman.out",
        lines,
        outputs={"a": [(0, "a.out.000"), (1, "a.out.001")], "b": [(0, "b.out.000")]},
    )
    actions = plan(Source(wf, []))
    end = index_of(actions, Append("w.dag.dagman.out", lines[6]))
    assert index_of(actions, WriteFile("a.out.000")) < end
    # .001 belongs to no attempt this log shows; b never ran: both after the last line
    last = index_of(actions, Append("w.dag.dagman.out", lines[-1]))
    assert index_of(actions, WriteFile("a.out.001")) > last
    assert index_of(actions, WriteFile("b.out.000")) > last


def test_a_sub_workflow_is_played_between_its_job_submit_and_its_job_end() -> None:
    child_lines = [*banner(5), ulog("SUBMIT", "k", 50), ulog("JOB_TERMINATED", "k", 50)]
    child_lines += [done("k", 50), exiting(0)]
    child = SourceWorkflow(
        "00/inner.000/inner.dag.dagman.out",
        child_lines,
        outputs={"k": [(0, "00/inner.000/00/k.out.000")]},
    )
    never = SourceWorkflow("00/inner.009/inner.dag.dagman.out", [*banner(9), exiting(0)])
    parent_lines = [
        *banner(1),
        ulog("SUBMIT", "subdax_inner", 20),
        ulog("EXECUTE", "subdax_inner", 20),
        f"{T} Number of idle job procs: 0\n",
        f"{T} Number of idle job procs: 1\n",
        ulog("JOB_TERMINATED", "subdax_inner", 20),
        exiting(0),
    ]
    parent = SourceWorkflow(
        "root.dag.dagman.out",
        parent_lines,
        subworkflows={("subdax_inner", 0): child, ("subdax_inner", 9): never},
    )
    actions = plan(Source(parent, []))
    assert appended(actions, child.dagman_out) == child_lines
    assert appended(actions, parent.dagman_out) == parent_lines
    child_pos = [i for i, a in enumerate(actions) if getattr(a, "path", "") == child.dagman_out]
    submit = index_of(actions, Append(parent.dagman_out, parent_lines[2]))
    job_end = index_of(actions, Append(parent.dagman_out, parent_lines[6]))
    assert submit < child_pos[0] and child_pos[-1] < job_end
    # played concurrently: parent lines between the child's first and last line
    assert any(
        child_pos[0] < index_of(actions, Append(parent.dagman_out, x)) < child_pos[-1]
        for x in parent_lines[3:5]
    )
    assert index_of(actions, WriteFile("00/inner.000/00/k.out.000")) < child_pos[3]
    # a sub-workflow no attempt started is written whole at the end
    assert actions[-1] == WriteFile(never.dagman_out)


def test_a_rescue_dag_second_run_gets_a_pause_before_its_banner() -> None:
    lines = [*banner(1), ulog("SUBMIT", "a", 1), exiting(1), *banner(2), exiting(0)]
    assert run_starts(lines) == [0, 4]
    wf = SourceWorkflow("w.dag.dagman.out", lines)
    paused = plan(Source(wf, []), pause=0.5)
    assert [a for a in paused if isinstance(a, Pause)] == [Pause(0.5, "w.dag.dagman.out")]
    at = next(i for i, a in enumerate(paused) if isinstance(a, Pause))
    assert paused[at - 1] == Append("w.dag.dagman.out", lines[3])
    assert paused[at + 1] == Append("w.dag.dagman.out", lines[4])
    assert not any(isinstance(a, Pause) for a in plan(Source(wf, [])))


def test_playing_a_generated_workflow_rebuilds_it_and_outputs_precede_their_end_lines(
    tmp_path: Path,
) -> None:
    gen = generate(tmp_path / "src", 15, retry_fraction=0.3, seed=3, name="pl")
    src, dest = gen.submit_dir, tmp_path / "dest"
    source = scan(str(src))
    deferred = {p for paths in source.root.outputs.values() for _, p in paths}
    assert deferred and all(".out" in p or ".err" in p for p in deferred)
    missing_at_end: list[str] = []

    def on_flush(lines: list[tuple[str, str]], _t: float) -> None:
        for _path, line in lines:
            if "ULOG_JOB_TERMINATED" in line:
                node = line.split(" Node ")[1].split()[0]
                outs = [p for p in deferred if os.path.basename(p).startswith(node + ".out")]
                if not any((dest / p).exists() for p in outs):
                    missing_at_end.append(line)

    player = Player(
        str(src),
        str(dest),
        lines_per_second=20000,
        seed=1,
        on_flush=on_flush,
    )
    stats = player.start().join(timeout=60)
    assert not missing_at_end, missing_at_end[:3]
    assert stats.lines == len(source.root.lines) and stats.files == len(deferred)
    cmp = filecmp.dircmp(src, dest)
    assert not cmp.left_only and not cmp.right_only and not cmp.diff_files
    for sub in source.static:
        if os.path.isfile(src / sub):
            assert (src / sub).read_bytes() == (dest / sub).read_bytes(), sub
    for p in deferred:
        assert (src / p).read_bytes() == (dest / p).read_bytes(), p


def test_command_line_play(tmp_path: Path) -> None:
    gen = generate(tmp_path / "src", 6, retry_fraction=0.0, seed=4, name="cl")
    dest = tmp_path / "dest"
    cmd = [sys.executable, "-m", "monitord.cli", "play", str(gen.submit_dir), str(dest)]
    proc = subprocess.run([*cmd, "--lines-per-second", "50000"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "played" in proc.stdout
    assert (dest / gen.dagman_out.name).read_bytes() == gen.dagman_out.read_bytes()
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 1 and "not empty" in again.stderr and "Traceback" not in again.stderr
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "monitord.cli",
            "play",
            str(tmp_path / "nowhere"),
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "error" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("quiet", [False, True])
def test_command_line_play_shows_progress_on_a_terminal(tmp_path: Path, quiet: bool) -> None:
    """A play at the default pace takes minutes: a bar of the lines written, unless -q."""
    from tests.test_cli_commands import MONITORD, run_in_pty

    gen = generate(tmp_path / "src", 6, retry_fraction=0.0, seed=4, name="cl")
    cmd = [*MONITORD, "play", "--lines-per-second", "400", str(gen.submit_dir), "dest"]
    status, out = run_in_pty([*cmd, "-q"] if quiet else cmd, tmp_path, tmp_path)
    assert status == 0 and "Traceback" not in out, out[-2000:]
    assert "played" in out
    lines = len(gen.dagman_out.read_text().splitlines())
    shown = re.search(rf"playing .*\d+/{lines} lines", out) is not None
    assert shown is not quiet, out[-2000:]
    plain = subprocess.run(
        [*cmd[:-1], "dest2"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr  # not a terminal
