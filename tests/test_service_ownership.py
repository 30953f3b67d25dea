"""A service running as root leaves the files it creates in a submit directory to the
directory's owner (monitord/ownership.py).

Root only (skipped otherwise).  The unit tests check what :func:`chown_new` refuses (symlinks,
hard links, files that are not ours, directories the owner does not control) and that SQLite
hands its rollback journal and WAL files to the owner of the database file.  The end-to-end
test follows a corpus workflow in a submit directory owned by ``nobody`` through the service,
with an event file and an AMQP endpoint besides the database, SIGKILLs the service midway,
restarts it (the workflow is re-processed into rotated outputs) and then checks that every
file and directory below the submit directory belongs to ``nobody`` and that the database
equals the reference's.
"""

from __future__ import annotations

import os
import pwd
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from monitord.system.ownership import Owner, chown_new, create_owned, makedirs_owned, owned_by
from sinks.sql.rotate import rotate_sqlite_file
from tests.conftest import CORPUS, copy_submit_dir, require_corpus
from tests.servers import server_url
from tests.test_service import (
    diff,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown)")


def _nobody() -> Owner:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody'")
    return Owner(entry.pw_uid, entry.pw_gid)


def _give(path: Path, owner: Owner) -> None:
    """chown -R (without following symlinks)."""
    os.lchown(path, owner.uid, owner.gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), owner.uid, owner.gid)


def _not_owned(path: Path, owner: Owner) -> list[str]:
    bad = []
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            st = os.lstat(full)
            if (st.st_uid, st.st_gid) != (owner.uid, owner.gid):
                bad.append(f"{os.path.relpath(full, path)} ({st.st_uid}:{st.st_gid})")
    return bad


# ---------------------------------------------------------------------------- units


def test_chown_new_hands_over_only_what_is_safe(tmp_path: Path) -> None:
    nobody = _nobody()
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    os.chown(user_dir, nobody.uid, nobody.gid)
    ours = user_dir / "ours"
    ours.write_text("x")
    target = tmp_path / "secret"  # root's, outside the user's directory
    target.write_text("s")
    (user_dir / "link").symlink_to(target)
    hard = user_dir / "hard"
    os.link(target, hard)
    not_ours = user_dir / "not-ours"
    not_ours.write_text("y")
    os.chown(not_ours, 1, 1)
    elsewhere = tmp_path / "elsewhere"  # a directory root owns
    elsewhere.write_text("z")

    chown_new(str(ours))  # no owner set: nothing happens
    assert ours.stat().st_uid == 0
    with owned_by(nobody):
        for path in (ours, user_dir / "link", hard, not_ours, elsewhere):
            chown_new(str(path))
        makedirs_owned(str(user_dir / "a" / "b"))
    assert (ours.stat().st_uid, ours.stat().st_gid) == (nobody.uid, nobody.gid)
    assert target.stat().st_uid == 0, "a symlink was followed"
    assert os.lstat(user_dir / "link").st_uid == 0
    assert hard.stat().st_uid == 0, "a hard-linked file was handed over"
    assert not_ours.stat().st_uid == 1
    assert elsewhere.stat().st_uid == 0
    assert (user_dir / "a").stat().st_uid == nobody.uid
    assert (user_dir / "a" / "b").stat().st_uid == nobody.uid


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_sqlite_gives_its_journals_the_database_owner(tmp_path: Path, mode: str) -> None:
    nobody = _nobody()
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    os.chown(user_dir, nobody.uid, nobody.gid)
    db = user_dir / "wf.stampede.db"
    with owned_by(nobody):
        create_owned(str(db))
    assert db.stat().st_uid == nobody.uid
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute(f"PRAGMA journal_mode={mode}")
        con.execute("CREATE TABLE t (x)")
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t VALUES (1)")
        sidecars = ["-journal"] if mode == "delete" else ["-wal", "-shm"]
        for suffix in sidecars:
            side = Path(str(db) + suffix)
            assert side.exists(), suffix
            assert (side.stat().st_uid, side.stat().st_gid) == (nobody.uid, nobody.gid), suffix
        con.execute("COMMIT")
    finally:
        con.close()
    assert _not_owned(user_dir, nobody) == []


def test_rotation_gives_a_moved_journal_its_database_owner(tmp_path: Path) -> None:
    """A hot journal a crashed daemon left as root's (once in the service test under load) is
    moved aside with the database and handed to the database's owner."""
    nobody = _nobody()
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    db = user_dir / "wf.stampede.db"
    db.write_bytes(b"")
    journal = Path(f"{db}-journal")
    journal.write_bytes(b"hot")  # root's, as the process made it
    _give(user_dir, nobody)
    os.chown(journal, 0, 0)
    assert rotate_sqlite_file(db) == Path(f"{db}.000")
    moved = Path(f"{db}.000-journal")
    assert moved.read_bytes() == b"hot"
    assert (moved.stat().st_uid, moved.stat().st_gid) == (nobody.uid, nobody.gid)


# ---------------------------------------------------------------------------- the service


def _attach(dagman_out: Path, env: dict[str, str], *options: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "attach", *options, str(dagman_out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_service_as_root_leaves_every_file_to_the_submit_dir_owner(tmp_path: Path) -> None:
    """Live follow, SIGKILL, restart (rotated outputs), end: nothing below the run dir is root's."""
    require_corpus()
    nobody = _nobody()
    sample = "hierarchical_wf_success"
    home = tmp_path / "user"
    run = home / "run"
    run.parent.mkdir()
    dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    dagman_out.write_text("".join(lines[:half]), encoding="utf-8")
    _give(home, nobody)
    base = server_url("amqp")
    if base:
        amqp = f"{base.rstrip('/')}/monitord.test.ownership"
    else:  # no broker: the spool is still written (and kept)
        amqp = "amqp://u:p@127.0.0.1:1/vh/monitord.test.ownership"
    options = (
        f"-Dpegasus.catalog.workflow.bp.url=file://{run}/events.bp",
        f"-Dpegasus.catalog.workflow.amqp.url={amqp}",
        "-Dpegasus.catalog.workflow.amqp.events=*",
        "-Dpegasus.monitord.spool.drain_timeout=1",
        "--no-dashboard",
    )
    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    log = tmp_path / "service.log"
    service = start_service(cfg, env, log)
    try:
        _attach(dagman_out, env, *options)
        jobstate = run / "jobstate.log"
        wait_until(
            lambda: jobstate.exists() and jobstate.read_text().count("\n") > 10,
            60,
            "jobstate.log lines",
            log,
        )
        assert stop_service(service, signal.SIGKILL) == -signal.SIGKILL
        service = start_service(cfg, env, log)
        wait_until(lambda: log.read_text().count("following workflow") >= 2, 60, "resume", log)
        with dagman_out.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[half:]))
        wait_until(lambda: finished(run), 120, "the workflow's end", log)
        time.sleep(0.5)
    finally:
        stop_service(service)
    created = {p.name for p in run.iterdir()} - {
        p.name for p in (CORPUS / sample / "input").iterdir()
    }
    for name in ("jobstate.log", "jobstate.log.000", "events.bp", "monitord.info"):
        assert name in created, (name, sorted(created))
    assert any(n.endswith(".stampede.db.000") for n in created), sorted(created)
    assert any((run / "monitord.amqp-producer").rglob("id"))
    bad = _not_owned(home, nobody)
    assert bad == [], f"not the owner's: {bad}"
    got = diff(
        str(CORPUS / sample / "expected" / "stampede.db"), str(next(run.glob("*.stampede.db")))
    )
    assert got.returncode == 0, got.stdout[-3000:]
    print(f"\n[ownership] {len(created)} files created by the service, all owned by nobody")
