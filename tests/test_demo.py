"""``monitord demo``: the README's first command, end to end on a generated workflow."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli_commands import MONITORD, run_in_pty


def test_demo_replays_an_example_into_sqlite(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "demo", "--jobs", "12", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    dbs = list(tmp_path.rglob("*.stampede.db"))
    assert len(dbs) == 1
    con = sqlite3.connect(dbs[0])
    jobs = con.execute("select count(*) from job").fetchone()[0]
    states = con.execute("select count(*) from workflowstate").fetchone()[0]
    assert jobs == 12 and states == 2
    assert f"job={jobs}" in proc.stdout
    assert proc.stderr == ""  # nothing extra when stderr is not a terminal


@pytest.mark.parametrize("quiet", [False, True])
def test_demo_shows_each_step_on_a_terminal_unless_quiet(tmp_path: Path, quiet: bool) -> None:
    """A big example takes minutes: the generator shows a spinner, the replay its bar."""
    cmd = [*MONITORD, "demo", "--jobs", "300", "--dir", str(tmp_path / "ex")]
    status, out = run_in_pty([*cmd, "-q"] if quiet else cmd, tmp_path, tmp_path)
    assert status == 0 and "Traceback" not in out, out[-2000:]
    assert "job=300" in out, out[-2000:]  # the result, on stdout
    generating = "generating an example of 300 jobs" in out
    replaying = re.search(r"replaying .*\d+%.* lines/s .* jobs done", out) is not None
    assert (generating, replaying) == (not quiet, not quiet), out[-2000:]
    assert "monitord: replayed" not in out and "[info" not in out  # no summary, no log lines
