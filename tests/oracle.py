"""The test oracle: the reference pegasus-wms 5.1.3 tools in their own venv (scripts/oracle-venv.sh).

Only ever run as a black box (subprocesses); nothing in the project imports it.
Outside CI a missing venv that cannot be created skips the test; in CI it fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROJECT
from tests.servers import missing, side_venv

ORACLE_SCRIPT = PROJECT / "scripts" / "oracle-venv.sh"
WHAT = "the pegasus-wms 5.1.3 oracle venv"


@dataclass(frozen=True)
class Oracle:
    python: Path
    cli: Path

    def tool(self, name: str) -> list[str]:
        return [str(self.python), str(self.cli / f"{name}.py")]


def find_oracle() -> Oracle:
    """The oracle venv, created by scripts/oracle-venv.sh (a no-op when it is ready)."""
    venv = side_venv(ORACLE_SCRIPT, WHAT)
    clis = sorted(venv.glob("lib/python3*/site-packages/Pegasus/cli/pegasus-statistics.py"))
    if not clis:
        missing(f"{WHAT} incomplete: no Pegasus/cli/pegasus-statistics.py under {venv}")
    return Oracle(python=venv / "bin" / "python", cli=clis[0].parent)


def differential_oracle() -> Oracle:
    """The oracle for tests that compare with stampede-diff on corpus inputs (skips without them)."""
    from tests.conftest import STAMPEDE_DIFF, require_corpus

    require_corpus()
    if not STAMPEDE_DIFF.exists():
        pytest.skip("stampede-diff not available")
    return find_oracle()
