"""Where a replay's outputs go (issue 29): the database and jobstate.log land in the directory
being read, whether it is a copy whose original still exists, a moved directory or one named
by a relative path, sub-workflows included; the original is never touched.

Each test compares whole trees (a hash of every file) and rows (stampede-diff), not log lines.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus
from tests.test_cli_commands import MONITORD, PEGASUS_MONITORD
from tests.test_service import diff

COMMANDS = {
    "monitord replay": [*MONITORD, "replay"],
    "pegasus-monitord -r": [*PEGASUS_MONITORD, "-r"],
}
HIERARCHY = "hierarchical_wf_success"


def run(cmd: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def tree_hash(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative name -> sha256): equal maps, an untouched tree."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def same_rows(expected: Path, got: Path) -> None:
    proc = diff(str(expected), str(got))
    assert proc.returncode == 0, f"{got} differs from {expected}\n{proc.stdout[-3000:]}"


def planned_at(src: Path, dest: Path, recorded: str) -> Path:
    """A copy of corpus ``src`` that looks planned in ``dest`` (every recorded path is it)."""
    dagman_out = copy_submit_dir(src, dest)
    for path in dest.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if recorded.encode() in data:
                path.write_bytes(data.replace(recorded.encode(), str(dest).encode()))
    return dagman_out


def recorded_submit_dir(src: Path) -> str:
    line = next(
        x for x in (src / "braindump.yml").read_text().splitlines() if x.startswith("submit_dir:")
    )
    return line.split(":", 1)[1].strip().strip('"')


@pytest.fixture
def original(tmp_path: Path) -> Path:
    """A generated workflow replayed where it was planned: the braindump's submit_dir is it."""
    made = generate(tmp_path / "run0001", 30, retry_fraction=0.1, seed=11, name="look")
    run([*PEGASUS_MONITORD, "-r", made.dagman_out.name], made.submit_dir, tmp_path / "home")
    assert (made.submit_dir / "look-0.stampede.db").is_file()
    return made.submit_dir


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_copy_writes_into_itself_and_leaves_the_original_untouched(
    original: Path, tmp_path: Path, command: str
) -> None:
    copy = tmp_path / "look"
    shutil.copytree(original, copy, symlinks=True)
    before = tree_hash(original)
    proc = run([*COMMANDS[command], "look-0.dag.dagman.out"], copy, tmp_path / "home")
    assert tree_hash(original) == before  # not a byte changed, nothing added or rotated
    if command == "monitord replay":  # the summary line says where they went
        last = proc.stderr.splitlines()[-1]
        assert f"(sqlite:///{copy}/look-0.stampede.db)" in last, last
        assert f"jobstate.log {copy}/jobstate.log" in last, last
    assert (copy / "jobstate.log.000").is_file()  # the copy's own outputs were rotated
    same_rows(original / "look-0.stampede.db", copy / "look-0.stampede.db")


def test_a_copied_hierarchy_writes_every_sub_workflow_into_the_copy(tmp_path: Path) -> None:
    require_corpus()
    src = CORPUS / HIERARCHY / "input"
    orig = tmp_path / "orig"
    dagman_out = planned_at(src, orig, recorded_submit_dir(src))
    run([*MONITORD, "replay", dagman_out.name], orig, tmp_path / "home")
    copy = tmp_path / "copy"
    shutil.copytree(orig, copy, symlinks=True)
    before = tree_hash(orig)
    proc = run([*MONITORD, "replay", dagman_out.name], copy, tmp_path / "home")
    assert tree_hash(orig) == before
    db = f"{dagman_out.name.split('.dag')[0]}.stampede.db"
    assert sorted(p.name for p in copy.rglob("*.stampede.db")) == [db]  # one, at the root
    same_rows(orig / db, copy / db)
    subs = [p.parent for p in orig.rglob("braindump.yml") if p.parent != orig]
    assert subs  # the sample has a sub-workflow, and its jobstate.log was rewritten in the copy
    last = proc.stderr.splitlines()[-1]
    assert f"jobstate.log {copy}/jobstate.log (and {len(subs)} sub-workflow" in last, last
    for sub in subs:
        rel = sub.relative_to(orig)
        assert (copy / rel / "jobstate.log.000").is_file(), rel
        same = diff("--jobstate", str(sub), str(copy / rel))
        assert same.returncode == 0, same.stdout[-3000:]


def test_a_moved_directory_writes_where_it_is_now(original: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    original.rename(moved)
    run([*PEGASUS_MONITORD, "-r", "look-0.dag.dagman.out"], moved, tmp_path / "home")
    assert not original.exists()
    same_rows(moved / "look-0.stampede.db.000", moved / "look-0.stampede.db")


@pytest.mark.parametrize("where", ["parent", "sibling"])
def test_a_relative_path_writes_into_the_directory_it_names(
    original: Path, tmp_path: Path, where: str
) -> None:
    copy = tmp_path / "look"
    shutil.copytree(original, copy, symlinks=True)
    cwd = tmp_path if where == "parent" else tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    before_cwd = set(cwd.iterdir())
    before = tree_hash(original)
    rel = os.path.relpath(copy / "look-0.dag.dagman.out", cwd)
    run([*MONITORD, "replay", rel], cwd, tmp_path / "home")
    assert tree_hash(original) == before
    assert set(cwd.iterdir()) == before_cwd  # nothing new here
    assert (copy / "jobstate.log.000").is_file()
    same_rows(original / "look-0.stampede.db", copy / "look-0.stampede.db")


def test_the_reference_writes_a_copys_database_into_the_original(
    original: Path, tmp_path: Path
) -> None:
    """The difference docs/differences.md states: pegasus-monitord 5.1.3 puts the copy's
    database in the braindump's recorded ``submit_dir`` and rotates the original's."""
    from tests.oracle import find_oracle

    oracle = find_oracle()
    copy = tmp_path / "look"
    shutil.copytree(original, copy, symlinks=True)
    before = tree_hash(original)
    run([*oracle.tool("pegasus-monitord"), "-r", "look-0.dag.dagman.out"], copy, tmp_path / "home")
    after = tree_hash(original)
    assert after["look-0.stampede.db.000"] == before["look-0.stampede.db"]  # rotated away
    assert (copy / "jobstate.log.000").is_file()  # while jobstate.log is the copy's
