"""Bad invocations end with one clear error line and a non-zero status, never a traceback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS, copy_submit_dir, require_corpus


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "monitord.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def check_one_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    assert needle in errors[0]


def test_not_a_submit_directory(tmp_path: Path) -> None:
    (tmp_path / "x.dag.dagman.out").write_text("03/03/23 22:23:43 hello\n")
    check_one_error(run(["-r", "x.dag.dagman.out"], tmp_path), "not a Pegasus submit directory")


def test_missing_dagman_out(tmp_path: Path) -> None:
    (tmp_path / "braindump.yml").write_text('wf_uuid: "u"\ndag: "x.dag"\n')
    check_one_error(run(["-r", "x.dag.dagman.out"], tmp_path), "no such file")


def test_wrong_file_name(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    check_one_error(run(["-r", "notes.txt"], tmp_path), "dagman.out")


def test_bad_braindump(tmp_path: Path) -> None:
    (tmp_path / "braindump.yml").write_text('- wf_uuid: "u"\n- dag: "x.dag"\n')
    (tmp_path / "x.dag.dagman.out").write_text("")
    check_one_error(run(["-r", "x.dag.dagman.out"], tmp_path), "expected a mapping")


def test_unknown_braindump_key_is_a_warning(tmp_path: Path) -> None:
    """A newer planner's key: warned about, not fatal (the failure here is the missing static.bp)."""
    (tmp_path / "braindump.yml").write_text('wf_uuid: "u"\ndag: "x.dag"\nbogus_key: 1\n')
    (tmp_path / "x.dag.dagman.out").write_text("")
    proc = run(["-r", "x.dag.dagman.out"], tmp_path)
    check_one_error(proc, "x.static.bp")
    assert "bogus_key" in proc.stderr


def test_missing_static_bp(tmp_path: Path) -> None:
    """A fatal error, as the reference's: exit 1 (docs/differences.md)."""
    (tmp_path / "braindump.yml").write_text('wf_uuid: "u"\ndag: "x.dag"\nsubmit_dir: "/o"\n')
    (tmp_path / "x.dag.dagman.out").write_text("")
    proc = run(["-r", "x.dag.dagman.out"], tmp_path)
    check_one_error(proc, "x.static.bp")
    assert proc.returncode == 1


def test_no_events_conflicts_with_dest(tmp_path: Path) -> None:
    check_one_error(
        run(["-r", "--no-events", "-d", "x.bp", "a.dag.dagman.out"], tmp_path), "conflicts"
    )


def test_a_sub_workflow_without_its_static_bp_ends_with_1_and_keeps_what_was_read(
    tmp_path: Path, corpus_tz: None
) -> None:
    """docs/differences.md: a fatal error ends the daemon as it ends the reference, exit 1,
    and what was read before it stays written (the root's jobs, jobstate.log)."""
    require_corpus()
    run_dir = tmp_path / "run"
    dagman_out = copy_submit_dir(CORPUS / "hierarchical_wf_success" / "input", run_dir)
    inner = next(run_dir.glob("00/00/*/inner.static.bp"))
    inner.unlink()
    proc = run(["-r", "--no-dashboard", dagman_out.name], run_dir)
    check_one_error(proc, str(inner))
    assert proc.returncode == 1
    db = sqlite3.connect(next(run_dir.glob("*.stampede.db")))
    try:
        kept = db.execute("SELECT COUNT(*) FROM job_instance").fetchone()[0]
    finally:
        db.close()
    assert kept > 0 and (run_dir / "jobstate.log").read_text().count("\n") > 10
