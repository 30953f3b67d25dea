"""Live following: the daemon tails a dagman.out that is still being written (no -r).

A player writes the sample's dagman.out into a fresh copy of the submit directory a few
lines at a time while ``pegasus-monitord`` (live mode) follows it; the daemon must stop by
itself after DAGMan's exit line, and leave the same database and jobstate.log as the
reference's replay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir, require_corpus
from tests.proxies import free_port

SAMPLES = ["process_wf_success", "process_wf_failure", "hierarchical_wf_failure"]


def play(src_lines: list[str], dest: Path, daemon: subprocess.Popen[str], step: int = 25) -> None:
    with dest.open("a", encoding="utf-8") as fh:
        for i in range(0, len(src_lines), step):
            fh.write("".join(src_lines[i : i + step]))
            fh.flush()
            time.sleep(0.01)
            assert daemon.poll() is None, "the daemon stopped before DAGMan finished"


@pytest.mark.parametrize("sample", SAMPLES)
def test_following_a_growing_log_equals_the_replay(sample: str, tmp_path: Path) -> None:
    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    dagman_out.write_text("".join(lines[:10]), encoding="utf-8")
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    daemon = subprocess.Popen(
        [sys.executable, "-m", "monitord.cli", "-N", dagman_out.name],
        cwd=run,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)
        play(lines[10:], dagman_out, daemon)
        _, err = daemon.communicate(timeout=120)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err[-3000:]
    assert not (run / "monitord.recover").exists()
    info = dict(line.split() for line in (run / "monitord.info").read_text().splitlines())
    assert int(info["monitord_dagman_out_sequence"]) == len(lines)
    expected = CORPUS / sample / "expected"
    db = next(run.glob("*.stampede.db"))
    for args in (
        [str(expected / "stampede.db"), str(db)],
        ["--jobstate", str(expected / "jobstate"), str(run)],
    ):
        diff = subprocess.run(
            [sys.executable, str(STAMPEDE_DIFF), *args], capture_output=True, text=True
        )
        assert diff.returncode == 0, diff.stdout[-3000:]


def test_restart_after_sigint_goes_on_where_it_stopped(tmp_path: Path) -> None:
    """A cleanly stopped (SIGINT) daemon leaves a snapshot and monitord.recover, exits 130 with
    one line saying where it stopped; its successor goes on from there (issue 29: before, it
    ended the workflow and its successor lost the jobs in flight)."""
    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    # Stop while a job is in flight (submitted, not yet done): what a successor that went on
    # from monitord.info alone would not know.
    half = next(i for i, line in enumerate(lines) if "Submitting HTCondor Node stage_out" in line)
    half += 3
    dagman_out.write_text("".join(lines[:half]), encoding="utf-8")
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", dagman_out.name]
    first = subprocess.Popen(
        cmd, cwd=run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 30
    while time.time() < deadline and _recover_line(run) < half:
        time.sleep(0.1)
    first.send_signal(2)  # SIGINT: a clean stop
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err[-3000:]
    said = [
        line for line in err.splitlines() if "stopped; the next start goes on from here" in line
    ]
    assert len(said) == 1 and "SIGINT" in said[0], err[-3000:]
    assert (run / "monitord.recover").exists()
    assert not (run / "monitord.info").exists(), "the workflow was not ended"
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines[half:]))
    second = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resuming from a snapshot" in second.stderr
    assert "unknown job instance" not in second.stderr
    assert not list(run.glob("*.stampede.db.000")), "the database was not rotated"
    db = next(run.glob("*.stampede.db"))
    diff = subprocess.run(
        [
            sys.executable,
            str(STAMPEDE_DIFF),
            str(CORPUS / "process_wf_success" / "expected" / "stampede.db"),
            str(db),
        ],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0, diff.stdout[-3000:]


# Each trial kills in its own slice of the player's ~2 s (stratified), so a few trials cover the
# whole run; MONITORD_KILL_TRIALS=20 (the former default) for a finer sweep.
KILL_TRIALS = int(os.environ.get("MONITORD_KILL_TRIALS", "8"))


@pytest.mark.parametrize("trial", range(KILL_TRIALS))
def test_sigkill_at_a_random_moment_then_restart_equals_replay(trial: int, tmp_path: Path) -> None:
    """SIGKILL while following; the successor recovers (monitord.recover) and the end state is the replay's."""
    import random
    import signal
    import threading

    require_corpus()
    rng = random.Random(1000 + trial)
    sample = "process_wf_success"
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    dagman_out.write_text("".join(lines[:10]), encoding="utf-8")
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", dagman_out.name]

    def player() -> None:
        with dagman_out.open("a", encoding="utf-8") as fh:
            for i in range(10, len(lines), 3):
                fh.write("".join(lines[i : i + 3]))
                fh.flush()
                time.sleep(0.02)

    first = subprocess.Popen(
        cmd, cwd=run, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    writer = threading.Thread(target=player)
    writer.start()
    slice_width = 1.6 / KILL_TRIALS  # the player needs about 2 s
    time.sleep(0.2 + slice_width * (trial + rng.random()))
    first.send_signal(signal.SIGKILL)
    assert first.wait() == -signal.SIGKILL, "the daemon ended before it could be killed"
    second = subprocess.Popen(
        cmd, cwd=run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    writer.join()
    _, err = second.communicate(timeout=120)
    assert second.returncode == 0, err[-3000:]
    expected = CORPUS / sample / "expected"
    db = run / "process-0.stampede.db"
    for args in (
        [str(expected / "stampede.db"), str(db)],
        ["--jobstate", str(expected / "jobstate.log"), str(run / "jobstate.log")],
    ):
        diff = subprocess.run(
            [sys.executable, str(STAMPEDE_DIFF), *args], capture_output=True, text=True
        )
        assert diff.returncode == 0, diff.stdout[-3000:]


def test_restart_on_a_finished_workflow_ends_at_once(tmp_path: Path) -> None:
    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", "process-0.dag.dagman.out"]
    first = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]
    rows = (run / "jobstate.log").read_text().count("\n")
    start = time.perf_counter()
    second = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-2000:]
    assert time.perf_counter() - start < 30
    # only its own MONITORD_STARTED/FINISHED pair was appended: nothing processed twice
    assert (run / "jobstate.log").read_text().count("\n") == rows + 2


def _recover_line(run: Path) -> int:
    try:
        return int((run / "monitord.recover").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def test_a_second_signal_during_a_clean_stop_exits_at_once(tmp_path: Path) -> None:
    """docs/daemon-resume.md: a clean stop finishes what it holds (here it tries a database
    that does not answer, for its drain time); a second signal ends it then and there, with
    128 + that signal's number, and the last snapshot stays for the next start."""
    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    dagman_out.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    away = f"postgresql://monitord@127.0.0.1:{free_port()}/away"  # nothing listens there
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", "follow", dagman_out.name, "-d", away]
    daemon = subprocess.Popen(cmd, cwd=run, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline and _recover_line(run) == 0:
        time.sleep(0.1)
    daemon.send_signal(signal.SIGINT)  # a clean stop: it waits for the database to drain
    time.sleep(1)
    assert daemon.poll() is None, "the clean stop did not wait for the database"
    daemon.send_signal(signal.SIGTERM)
    _, err = daemon.communicate(timeout=60)
    assert daemon.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "stopping at once" in err and (run / "monitord.recover").exists(), err[-3000:]
