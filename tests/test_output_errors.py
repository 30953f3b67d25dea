"""A daemon whose every events destination fails for good exits non-zero with one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus

SAMPLE = "process_wf_success"
SECRET = "s3cr3tpw"


def _replay(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    require_corpus()
    run = tmp_path / "run"
    if not run.exists():
        copy_submit_dir(CORPUS / SAMPLE / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", *args, "--no-dashboard", "-r", dagman_out.name],
        cwd=run,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _no_psycopg(tmp_path: Path) -> dict[str, str]:
    """An environment in which the PostgreSQL drivers cannot be imported."""
    blocker = tmp_path / "blocker"
    for name in ("psycopg2", "psycopg"):
        (blocker / name).mkdir(parents=True, exist_ok=True)
        (blocker / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n"
        )
    return {"PYTHONPATH": os.pathsep.join([str(blocker), str(Path.cwd())])}


def test_missing_driver_names_the_extra_and_fails(tmp_path: Path) -> None:
    url = f"postgresql://monitord:{SECRET}@127.0.0.1:1/stampede"
    code, out = _replay(tmp_path, "-d", url, env=_no_psycopg(tmp_path))
    assert code != 0, out[-3000:]
    assert "Traceback" not in out and SECRET not in out, out[-3000:]
    final = [line for line in out.splitlines() if "error: no events output" in line]
    assert len(final) == 1, out[-3000:]
    assert "pip install 'monitord[postgresql]'" in final[0]
    assert "postgresql://monitord:***@127.0.0.1:1/stampede" in final[0]


def test_a_permanent_open_error_on_the_only_output_fails(tmp_path: Path) -> None:
    code, out = _replay(tmp_path, "-d", f"sqlite:///{tmp_path}/no/such/dir/w.db")
    assert code != 0, out[-3000:]
    assert "Traceback" not in out
    final = [line for line in out.splitlines() if "error: no events output" in line]
    assert len(final) == 1 and "unable to open database file" in final[0], out[-3000:]


def test_one_good_output_is_enough(tmp_path: Path) -> None:
    bp = tmp_path / "events.bp"
    code, out = _replay(
        tmp_path,
        f"-Dpegasus.catalog.workflow.bp.url=file://{bp}",
        "-d",
        f"postgresql://monitord:{SECRET}@127.0.0.1:1/stampede",
        env=_no_psycopg(tmp_path),
    )
    assert code == 0, out[-3000:]
    assert "pip install 'monitord[postgresql]'" in out and SECRET not in out
    assert bp.stat().st_size > 0
