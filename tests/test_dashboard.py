"""The dashboard master DB mirrors the root workflow's row and states (doc §7.5)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, corpus_samples, replay_copy, require_corpus

COLUMNS = (
    "wf_uuid",
    "dax_label",
    "dax_version",
    "dax_file",
    "dag_file_name",
    "timestamp",
    "submit_hostname",
    "submit_dir",
    "user",
    "grid_dn",
    "planner_version",
)


def replay(sample: str, tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    run = replay_copy(CORPUS / sample / "input", tmp_path, *extra, timeout=120)
    return run, tmp_path / "home" / ".pegasus" / "workflow.db"


@pytest.mark.parametrize("sample", corpus_samples() or ["<corpus absent>"])
def test_dashboard_rows_match_the_root_workflow(sample: str, tmp_path: Path) -> None:
    require_corpus()
    run, dash = replay(sample, tmp_path)
    assert dash.exists() and (dash.stat().st_mode & 0o777) == 0o600
    exp = sqlite3.connect(CORPUS / sample / "expected" / "stampede.db")
    got = sqlite3.connect(dash)
    cols = ", ".join(COLUMNS)
    root = exp.execute(f"select wf_id, {cols} from workflow where parent_wf_id is null").fetchone()
    row = got.execute(
        f"select wf_id, {cols}, planner_arguments, db_url, archived from master_workflow"
    ).fetchall()
    assert len(row) == 1
    assert row[0][1 : 1 + len(COLUMNS)] == root[1:]
    db = next(run.glob("*.stampede.db"))
    assert row[0][-3:] == (None, f"sqlite:///{db}", 0)
    states = "select state, timestamp, restart_count, status, reason from {} where wf_id = ? order by timestamp, state"
    assert (
        got.execute(states.format("master_workflowstate"), (row[0][0],)).fetchall()
        == exp.execute(states.format("workflowstate"), (root[0],)).fetchall()
    )


def test_replay_purges_then_rewrites_and_can_be_turned_off(tmp_path: Path) -> None:
    require_corpus()
    run, dash = replay("process_wf_success", tmp_path)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "-r", "process-0.dag.dagman.out"],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    con = sqlite3.connect(dash)
    assert con.execute("select count(*) from master_workflow").fetchone()[0] == 1
    assert con.execute("select count(*) from master_workflowstate").fetchone()[0] == 2
    other = tmp_path / "other"
    other.mkdir()
    _, dash2 = replay("process_wf_success", other, "--no-dashboard")
    assert not dash2.exists()
