"""Replays every corpus sample with the real CLI and compares with the reference's outputs.

Runs ``pegasus-monitord -r`` in a subprocess (TZ of the recording, scratch
HOME) on a copy of each submit directory, then ``stampede-diff`` in its three
modes: database, jobstate.log tree, and the .bp event stream.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    CORPUS,
    CORPUS_TZ,
    STAMPEDE_DIFF,
    corpus_samples,
    replay_copy,
    require_corpus,
)

BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"
SAMPLES = corpus_samples() or ["<corpus absent>"]


def _replay(sample: str, tmp_path: Path, *extra: str) -> Path:
    return replay_copy(CORPUS / sample / "input", tmp_path, *extra)


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("sample", SAMPLES)
def test_replay_matches_reference(sample: str, tmp_path: Path) -> None:
    require_corpus()
    expected = CORPUS / sample / "expected"
    bp = tmp_path / "events.bp"
    run = _replay(sample, tmp_path, "-d", f"file://{bp}")
    bp_diff = _diff("--bp", str(expected / "events.bp"), str(bp), "--ignore", BP_IGNORE)
    assert bp_diff.returncode == 0, bp_diff.stdout[-4000:]
    js_diff = _diff("--jobstate", str(expected / "jobstate"), str(run))
    assert js_diff.returncode == 0, js_diff.stdout[-4000:]

    # Second run into the default SQLite database (rotating nothing: there is none yet).
    (tmp_path / "db").mkdir()
    run2 = _replay(sample, tmp_path / "db")
    dbs = list(run2.glob("*.stampede.db"))
    assert len(dbs) == 1, f"expected one default database, found {dbs}"
    db_diff = _diff(str(expected / "stampede.db"), str(dbs[0]))
    assert db_diff.returncode == 0, db_diff.stdout[-4000:]
    assert "TOTAL" in db_diff.stdout


def test_second_replay_rotates_database_and_jobstate(tmp_path: Path) -> None:
    require_corpus()
    sample = "process_wf_success"
    run = _replay(sample, tmp_path)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "-r", dagman_out.name],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (run / "jobstate.log.000").exists()
    assert (run / "process-0.stampede.db.000").exists()
    db_diff = _diff(
        str(CORPUS / sample / "expected" / "stampede.db"), str(run / "process-0.stampede.db")
    )
    assert db_diff.returncode == 0, db_diff.stdout[-3000:]
    for name in ("monitord.done", "monitord.info", "monitord.started"):
        assert (run / name).exists(), name
    assert not (run / "monitord.recover").exists()
    assert not (run / "monitord.pid").exists()
    info = dict(line.split() for line in (run / "monitord.info").read_text().splitlines())
    assert info["monitord_job_sequence"] == "6"
    assert info["monitord_workflow_restart_count"] == "1"
