"""--no-recursive and an absolute -j stop sub-workflow following (doc §8.1, §3.1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import replay_copy

CASE = Path(__file__).resolve().parent / "data" / "cases" / "nested_subworkflows" / "input"


def replay(tmp_path: Path, *args: str) -> tuple[Path, sqlite3.Connection]:
    run = replay_copy(CASE, tmp_path, *args, timeout=120)
    return run, sqlite3.connect(next(run.glob("*.stampede.db")))


def workflows(con: sqlite3.Connection) -> int:
    return con.execute("select count(*) from workflow").fetchone()[0]


def test_subworkflows_are_followed_by_default(tmp_path: Path) -> None:
    run, con = replay(tmp_path)
    assert workflows(con) >= 3
    assert len(list(run.rglob("jobstate.log"))) >= 3
    linked = con.execute("select count(*) from job_instance where subwf_id is not null").fetchone()[
        0
    ]
    assert linked >= 2


def test_no_recursive(tmp_path: Path) -> None:
    run, con = replay(tmp_path, "--no-recursive")
    assert workflows(con) == 1
    assert [p.relative_to(run) for p in run.rglob("jobstate.log")] == [Path("jobstate.log")]


def test_absolute_jobstate_path_disables_following(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "js.log"
    target.parent.mkdir()
    run, con = replay(tmp_path, "-j", str(target))
    assert workflows(con) == 1
    assert target.exists() and not list(run.rglob("jobstate.log"))
