"""The test oracle: the reference pegasus-wms 5.1.3 tools in their own venv (scripts/oracle-venv.sh).

Only ever run as a black box (subprocesses); nothing in the project imports it.
Outside CI a missing venv that cannot be created skips the test; in CI it fails.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from tests.conftest import PROJECT

ORACLE_SCRIPT = PROJECT / "scripts" / "oracle-venv.sh"


@dataclass(frozen=True)
class Oracle:
    python: Path
    cli: Path

    def tool(self, name: str) -> list[str]:
        return [str(self.python), str(self.cli / f"{name}.py")]


def _oracle_unavailable(why: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: cannot create the pegasus-wms 5.1.3 oracle venv: {why}")
    pytest.skip(f"pegasus-wms 5.1.3 oracle venv missing and cannot be created: {why}")


def find_oracle() -> Oracle:
    """The oracle venv, created by scripts/oracle-venv.sh (a no-op when it is ready)."""
    try:
        proc = subprocess.run(
            ["bash", str(ORACLE_SCRIPT)], capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _oracle_unavailable(repr(exc))
    if proc.returncode != 0:
        _oracle_unavailable(f"{ORACLE_SCRIPT.name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    venv = Path(proc.stdout.strip().splitlines()[-1])
    clis = sorted(venv.glob("lib/python3*/site-packages/Pegasus/cli/pegasus-statistics.py"))
    if not clis:
        _oracle_unavailable(f"no Pegasus/cli/pegasus-statistics.py under {venv}")
    return Oracle(python=venv / "bin" / "python", cli=clis[0].parent)


def differential_oracle() -> Oracle:
    """The oracle for tests that compare with stampede-diff on corpus inputs (skips without them)."""
    from tests.conftest import STAMPEDE_DIFF, require_corpus

    require_corpus()
    if not STAMPEDE_DIFF.exists():
        pytest.skip("stampede-diff not available")
    return find_oracle()
