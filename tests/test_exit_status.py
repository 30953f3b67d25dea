"""Exit status and summary line against the README (issue 29): the dashboard database is best
effort, not a destination; every destination is named in the summary, its password masked.

Each test failed before the change (the report says how).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ
from tests.test_cli_commands import MONITORD
from tests.test_cli_truth import LOG_LINE, SECRET, SHORT_DRAIN, error_lines


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    return generate(tmp_path / "run", 30, retry_fraction=0.1, seed=7, name="exit").dagman_out


def run(cmd: list[str], cwd: Path, home: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kw
    )


def summary(stderr: str) -> str:
    [line] = [x for x in stderr.splitlines() if x.startswith("monitord: replayed")]
    return line


def test_a_dashboard_that_cannot_be_written_is_a_warning_not_a_destination(
    workflow: Path, tmp_path: Path
) -> None:
    home = tmp_path / "not-a-dir"
    home.write_text("")  # ~/.pegasus cannot be made, even as root
    proc = run([*MONITORD, "replay", workflow.name], workflow.parent, home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[error" not in proc.stderr and not error_lines(proc.stderr), proc.stderr[-3000:]
    warned = [x for x in proc.stderr.splitlines() if LOG_LINE.match(x) and "[warning" in x]
    assert any("dashboard database cannot be opened" in x for x in warned), proc.stderr[-3000:]
    line = summary(proc.stderr)
    db = workflow.parent / "exit-0.stampede.db"
    assert f"stored in 1 of 1 destination (sqlite:///{db})" in line, line
    assert "dashboard not updated" in line, line


def test_the_summary_names_each_destination_with_its_password_masked(
    workflow: Path, tmp_path: Path
) -> None:
    """The ``monitord [options]`` drop-in form is content with one destination of two (as the
    reference), and its summary says which one lacks the events."""
    bp = tmp_path / "events.bp"
    url = f"mysql://u:{SECRET}@127.0.0.1:1/stampede"
    args = [SHORT_DRAIN, f"-Dpegasus.catalog.workflow.bp.url=file://{bp}", "--no-dashboard"]
    proc = run([*MONITORD, *args, "-r", "-d", url, workflow.name], workflow.parent, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert SECRET not in proc.stderr
    line = summary(proc.stderr)
    assert "stored in 1 of 2 destinations" in line, line
    assert f"({bp}; not in mysql+pymysql://u:***@127.0.0.1:1/stampede)" in line, line
    assert "events spooled for the next daemon" in line, line
