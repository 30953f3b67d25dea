"""Replays the project's own conformance cases (tests/data/cases) and compares with the reference's outputs.

Each case is a small submit directory (``input/``) for a feature the corpus
does not exercise, with what the reference pegasus-monitord 5.1.3 produced
from it (``expected/``, made by ``tests/data/make_cases.py --reference``).
The replay and the three ``stampede-diff`` comparisons are the same as in
test_conformance_corpus.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KEPT_DIFFERENCES, STAMPEDE_DIFF, copy_submit_dir, replay_copy
from tests.differential import Replay, compare

CASES = Path(__file__).resolve().parent / "data" / "cases"
BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"

# Cases where our daemon is known to differ from the reference (see the reasons).
XFAIL: dict[str, str] = {}


def _cases() -> list[str]:
    if not CASES.is_dir():
        return []
    return sorted(
        p.name for p in CASES.iterdir() if (p / "input").is_dir() and (p / "expected").is_dir()
    )


def _params() -> list[object]:
    out: list[object] = []
    for case in _cases():
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[case])] if case in XFAIL else []
        out.append(pytest.param(case, marks=marks, id=case))
    return out


def _require_tool() -> None:
    if not STAMPEDE_DIFF.exists():
        pytest.skip(
            f"stampede-diff not available at {STAMPEDE_DIFF} (../shared/tools beside the project)"
        )


def _replay(case: str, tmp_path: Path, *extra: str, returncode: int = 0) -> Path:
    return replay_copy(CASES / case / "input", tmp_path, *extra, returncode=returncode)


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args], capture_output=True, text=True, timeout=300
    )


def test_cases_present() -> None:
    """The case data ships with the project; an empty list would make the test below vacuous."""
    assert len(_cases()) >= 8, f"conformance cases missing under {CASES}"


def _expected_returncode(case: str) -> int:
    """The reference's exit status (``expected/returncode``, absent when 0)."""
    path = CASES / case / "expected" / "returncode"
    return int(path.read_text()) if path.exists() else 0


@pytest.mark.parametrize("case", _params())
def test_case_matches_reference(case: str, tmp_path: Path) -> None:
    _require_tool()
    expected = CASES / case / "expected"
    rc = _expected_returncode(case)
    bp = tmp_path / "events.bp"
    run = _replay(case, tmp_path, "-d", f"file://{bp}", returncode=rc)
    (tmp_path / "db").mkdir()
    run2 = _replay(case, tmp_path / "db", returncode=rc)
    dbs = list(run2.glob("*.stampede.db"))
    assert len(dbs) == 1, f"expected one default database, found {dbs}"
    if case in KEPT_DIFFERENCES:
        ref = Replay(
            rc, "", expected / "jobstate", expected / "events.bp", expected / "stampede.db"
        )
        ours = Replay(rc, "", run, bp, dbs[0])
        comparison = compare(ref, ours)
        assert comparison.verdict == "ours-better", comparison.unexplained() or comparison.items
        return

    failures = []
    bp_diff = _diff("--bp", str(expected / "events.bp"), str(bp), "--ignore", BP_IGNORE)
    if bp_diff.returncode != 0:
        failures.append("events.bp:\n" + bp_diff.stdout[-4000:])
    js_diff = _diff("--jobstate", str(expected / "jobstate"), str(run))
    if js_diff.returncode != 0:
        failures.append("jobstate.log:\n" + js_diff.stdout[-4000:])
    db_diff = _diff(str(expected / "stampede.db"), str(dbs[0]))
    if db_diff.returncode != 0 or "TOTAL" not in db_diff.stdout:
        failures.append("stampede.db:\n" + db_diff.stdout[-4000:])
    assert not failures, "\n\n".join(failures)


def test_unknown_braindump_key_changes_nothing(tmp_path: Path) -> None:
    """A newer planner's braindump key: the reference refuses the directory, we warn and go on.

    The case replayed with an extra key must give exactly the reference's outputs for the
    case without it (README, Differences).
    """
    _require_tool()
    case = "pre_scripts_and_recovery"
    src = tmp_path / "src"
    copy_submit_dir(CASES / case / "input", src)
    with (src / "braindump.yml").open("a") as fh:
        fh.write("container_runtime_v6: singularity\n")
    bp = tmp_path / "events.bp"
    run = replay_copy(src, tmp_path, "-d", f"file://{bp}")
    expected = CASES / case / "expected"
    bp_diff = _diff("--bp", str(expected / "events.bp"), str(bp), "--ignore", BP_IGNORE)
    assert bp_diff.returncode == 0, bp_diff.stdout[-3000:]
    js_diff = _diff("--jobstate", str(expected / "jobstate"), str(run))
    assert js_diff.returncode == 0, js_diff.stdout[-3000:]
