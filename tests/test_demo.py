"""``monitord demo``: the README's first command, end to end on a generated workflow."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path


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
