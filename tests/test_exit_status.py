"""Exit status and summary line against the README (issue 29): the dashboard database is best
effort, not a destination; every destination is named in the summary, its password masked.

Each test failed before the change (the report says how).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ
from tests.test_cli_commands import MONITORD, PEGASUS_MONITORD
from tests.test_cli_truth import LOG_LINE, SECRET, SHORT_DRAIN, error_lines
from tests.test_service import diff


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


# ---------------------------------------------------------------- several -d
def events(bp: Path) -> list[str]:
    """The BP file's lines without their ``ts=`` (some events are stamped with the run's time)."""
    return [x.split(" ", 1)[1] for x in bp.read_text().splitlines()]


@pytest.mark.parametrize("command", ["replay", "follow"])
def test_several_destinations_each_get_every_event(
    workflow: Path, tmp_path: Path, command: str
) -> None:
    """``monitord replay``/``follow`` with two ``-d``: both hold what a replay into each alone
    holds (rows by stampede-diff, the event file byte for byte)."""
    alone = tmp_path / "alone"
    shutil.copytree(workflow.parent, alone)  # before anything ran in it
    one_bp = tmp_path / "one.bp"
    for dest in ("sqlite:///" + str(tmp_path / "one.db"), f"file://{one_bp}"):
        proc = run([*MONITORD, "replay", "-d", dest, workflow.name], alone, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
    db, bp = tmp_path / "both.db", tmp_path / "both.bp"
    cmd = [*MONITORD, command, "-d", f"sqlite:///{db}", "-d", f"file://{bp}", workflow.name]
    proc = run(cmd, workflow.parent, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"stored in 2 of 2 destinations (sqlite:///{db} and {bp})" in proc.stderr
    assert bp.stat().st_size > 0 and events(bp) == events(one_bp)
    same = diff(str(tmp_path / "one.db"), str(db))
    assert same.returncode == 0, same.stdout[-3000:]


def test_the_drop_in_keeps_the_last_destination_and_warns(workflow: Path, tmp_path: Path) -> None:
    """As the reference (its last ``-d`` wins, silently), plus a warning naming the others."""
    first, last = tmp_path / "first.bp", tmp_path / "last.bp"
    url = f"mysql://u:{SECRET}@127.0.0.1:1/stampede"
    cmd = [*PEGASUS_MONITORD, "-r", "-d", f"file://{first}", "-d", url, "-d", f"file://{last}"]
    proc = run([*cmd, workflow.name], workflow.parent, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert last.stat().st_size > 0 and not first.exists()
    assert SECRET not in proc.stderr
    [warning] = [x for x in proc.stderr.splitlines() if "several -d given" in x]
    assert "[warning" in warning and str(first) in warning and "u:***@127.0.0.1:1" in warning
    single = run(
        [*PEGASUS_MONITORD, "-r", "-d", f"file://{first}", workflow.name], workflow.parent, tmp_path
    )
    assert "several -d" not in single.stderr
