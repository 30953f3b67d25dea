"""scripts/oracle-venv.sh and scripts/phoenix-venv.sh, which share scripts/lib/tool-venv.sh:
each prints a ready venv's path and leaves it alone, refuses to replace a directory that is
not a virtualenv, and shows pip's output and fails when the install fails (a fake python:
no network needed)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PROJECT

SCRIPTS = PROJECT / "scripts"
PHOENIX_VERSION = re.search(  # type: ignore[union-attr]
    r"^VERSION=(\S+)", (SCRIPTS / "phoenix-venv.sh").read_text(), re.M
).group(1)
TOOLS = {  # script -> (its venv's variable, what makes a venv ready)
    "oracle-venv.sh": ("MONITORD_ORACLE_VENV", {"bin/python": "exit 0", ".oracle-ready": None}),
    "phoenix-venv.sh": (
        "MONITORD_PHOENIX_VENV",
        {"bin/phoenix": "exit 0", "bin/python": "exit 0", ".phoenix-ready": PHOENIX_VERSION},
    ),
}
FAKE_PYTHON = """#!/bin/sh
# `python -m venv DIR`: a venv whose python fails every pip install
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin" && : > "$3/pyvenv.cfg"
  printf '#!/bin/sh\\necho "pip: no network here" >&2\\nexit 1\\n' > "$3/bin/python"
  chmod +x "$3/bin/python"
  exit 0
fi
exit 1
"""


def run(script: str, venv: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {**os.environ, TOOLS[script][0]: str(venv), "PYTHON": str(fake), "TMPDIR": str(tmp_path)}
    return subprocess.run(
        ["bash", str(SCRIPTS / script)], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize("script", sorted(TOOLS))
def test_a_ready_venv_is_printed_and_left_alone(script: str, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    for name, content in TOOLS[script][1].items():
        path = venv / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.startswith("bin/"):
            path.write_text(f"#!/bin/sh\n{content}\n")
            path.chmod(0o755)
        else:
            path.write_text(content or "")
    before = sorted(p.relative_to(venv).as_posix() for p in venv.rglob("*"))
    proc = run(script, venv, tmp_path)
    assert (proc.returncode, proc.stdout) == (0, f"{venv}\n"), proc.stderr
    assert sorted(p.relative_to(venv).as_posix() for p in venv.rglob("*")) == before


@pytest.mark.parametrize("script", sorted(TOOLS))
def test_a_directory_that_is_not_a_venv_is_never_replaced(script: str, tmp_path: Path) -> None:
    venv = tmp_path / "mine"
    venv.mkdir()
    (venv / "notes.txt").write_text("keep me")
    proc = run(script, venv, tmp_path)
    name = script.removesuffix(".sh")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == f"{name}: {venv} exists and is not a virtualenv; refusing to replace it\n"
    assert (venv / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("script", sorted(TOOLS))
def test_a_failed_install_shows_pips_output_and_fails(script: str, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    proc = run(script, venv, tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "pip: no network here" in proc.stderr
    assert (tmp_path / f"monitord-{script.removesuffix('.sh')}.lock").exists()  # one at a time
