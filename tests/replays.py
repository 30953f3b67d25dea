"""A whole replay run as the user runs it (``monitord replay`` in a subprocess) and the
comparison of two databases' rows, shared by the tests of the replay's options
(tests/test_sql_process.py, tests/test_read_ahead.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ, STAMPEDE_DIFF
from tests.test_cli_commands import MONITORD


def replay(
    dagman_out: Path, db: Path, home: Path, *extra: str, stderr: Any = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``monitord replay *extra -d sqlite:///db`` of ``dagman_out``, started in its directory
    in the corpus's time zone with ``home`` as HOME (stdout dropped)."""
    return subprocess.Popen(
        [*MONITORD, "replay", *extra, "-d", f"sqlite:///{db}", dagman_out.name],
        cwd=dagman_out.parent,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
    )


def replayed(dagman_out: Path, db: Path, home: Path, *extra: str) -> str:
    """A whole :func:`replay`; it must end with 0 (its stderr's tail, else). Its stderr."""
    proc = replay(dagman_out, db, home, *extra)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return str(err)


def generated_and_replayed(
    root: Path, name: str, retry_fraction: float, *extra: str
) -> tuple[Path, Path, Path]:
    """A generated 300-job workflow under ``root`` and its database replayed with ``extra``
    (a module's reference to compare other replays with): its dagman.out, that database and
    the HOME it was replayed with."""
    out = generate(root / "run", 300, seed=30, retry_fraction=retry_fraction, name=name).dagman_out
    home = root / "home"
    home.mkdir()
    expected = root / "expected.db"
    replayed(out, expected, home, "-q", *extra)
    return out, expected, home


def assert_same_rows(expected: Path, got: Path) -> None:
    """stampede-diff finds ``got``'s rows equal to ``expected``'s."""
    proc = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(expected), str(got)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
