"""The live ``pegasus-monitord`` resumes after ``kill -9`` from its snapshots (issue 21).

Each source is played while the daemon follows it; it is SIGKILLed at 5 seeded moments
(tests/kills.py) and restarted at once.  The database and every jobstate.log must equal the
replay's, the database must never have been rotated, and the bytes read again are printed.
Where it cannot resume (no snapshot, a damaged one) it recovers from line 1 as the reference
does, saying why in one log line.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from monitord.daemon.config import MonitorConfig
from monitord.daemon.statedir import RESUME_DIR, daemon_resume_store, default_state_dir
from tests.conftest import CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir, require_corpus
from tests.kills import SOURCES, describe, generated_source, play_with_kills
from tests.test_follow_played import CASES

KILL_SEED = int(os.environ.get("MONITORD_KILL_SEED", "21"))


def _sources() -> list[object]:
    out: list[object] = [pytest.param(s, id=s.name) for s in SOURCES]
    return [*out, pytest.param(None, id="generated")]


@pytest.mark.parametrize("src", _sources())
def test_kill_9_while_following_resumes_and_equals_the_replay(
    src: Path | None, tmp_path: Path
) -> None:
    require_corpus()
    if src is None:
        src = generated_source(tmp_path / "generated", 60, seed=KILL_SEED)
    elif not (src / "input").is_dir():
        pytest.skip(f"{src} is absent")
    result = play_with_kills(src, tmp_path, KILL_SEED)
    print(describe([result]))  # the bytes read again after each kill
    assert result.kills, "no kill was made"
    assert all(k.reread is not None for k in result.kills), "a kill found no snapshot"
    assert not result.failures, "\n".join(result.failures)
    # only the last seconds are read again (a snapshot every 2 s): far from a line-1 recovery
    reread, on_disk = sum(k.reread or 0 for k in result.kills), sum(k.total for k in result.kills)
    assert reread < on_disk / 2, describe([result])


def _live(run_dir: Path, dagman_out: str, db: Path, state: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(run_dir.parent)}
    cmd = [sys.executable, "-m", "monitord.cli", "--no-dashboard", "--state-dir", str(state)]
    return subprocess.run(
        [*cmd, "-d", f"sqlite:///{db}", dagman_out],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("damage", ["none", "damaged"])
def test_without_a_usable_snapshot_a_crash_is_recovered_from_line_1(
    damage: str, tmp_path: Path
) -> None:
    """A finished workflow followed live, then a crash left monitord.recover: the successor
    has no snapshot (or a damaged one), rotates the database and re-reads from line 1."""
    require_corpus()
    src = generated_source(tmp_path / "gen", 20, seed=5)
    run = src / "input"
    out = next(run.glob("*.dag.dagman.out")).name
    db, state = tmp_path / "live.db", tmp_path / "state"
    first = _live(run, out, db, state)
    assert first.returncode == 0, first.stderr
    with sqlite3.connect(db) as conn:  # a clean end drops the marks table (as the service)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "workflow" in tables and "monitord_delivery_marks" not in tables
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert not list((state / RESUME_DIR).iterdir()), "a clean end leaves no snapshot"
    (run / "monitord.recover").write_text("monitord_dagman_out_sequence 10\n")
    if damage == "damaged":
        store, _ = daemon_resume_store(MonitorConfig(str(run / out), state_dir=str(state)))
        assert store is not None
        Path(store.path(str(run / out))).write_bytes(b"\x80\x05not a pickle")
    second = _live(run, out, db, state)
    assert second.returncode == 0, second.stderr
    said = [line for line in second.stderr.splitlines() if "recovering from line 1" in line]
    assert len(said) == 1, second.stderr
    assert ("no snapshot yet" if damage == "none" else "damaged snapshot") in said[0]
    assert (tmp_path / "live.db.000").exists(), "recovery rotates the database"
    diff = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(src / "expected" / "stampede.db"), str(db)],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0 and "TOTAL" in diff.stdout, diff.stdout[-3000:]


def test_a_rescue_runs_daemon_that_sees_only_its_banners_first_line_keeps_following(
    tmp_path: Path,
) -> None:
    """pegasus-run's daemon for a rescue DAG may start when the new DAGMan has written only
    the first line of its banner (a rule of asterisks) after the last run's exit line: it must
    follow the new run, not end at once (seeded kills of rescue_dag_restart found it gone)."""
    src = CASES / "rescue_dag_restart"
    run = tmp_path / "run"
    dagman_out = copy_submit_dir(src / "input", run)
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    exit_line = next(i for i, line in enumerate(lines) if "EXITING WITH STATUS" in line)
    assert set(lines[exit_line + 1].split()[-1]) == {"*"}  # the next run's banner opens
    dagman_out.write_text("".join(lines[: exit_line + 1]), encoding="utf-8")
    db, state = tmp_path / "live.db", tmp_path / "state"
    first = _live(run, dagman_out.name, db, state)  # the first run's daemon ends at its exit
    assert first.returncode == 0, first.stderr
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write(lines[exit_line + 1])
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "monitord.cli", "--no-dashboard", "--state-dir", str(state)]
    with (tmp_path / "second.err").open("w") as err:
        second = subprocess.Popen(
            [*cmd, "-d", f"sqlite:///{db}", dagman_out.name], cwd=run, env=env, stderr=err
        )
    try:
        deadline = time.monotonic() + 60
        while not (run / "monitord.recover").exists() and second.poll() is None:
            assert time.monotonic() < deadline, "the second daemon did not start"
            time.sleep(0.05)
        time.sleep(1.0)  # it has read what is there (before: it ended within 0.2 s)
        assert second.poll() is None, (tmp_path / "second.err").read_text()
        with dagman_out.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[exit_line + 2 :]))
        assert second.wait(timeout=120) == 0, (tmp_path / "second.err").read_text()
    finally:
        if second.poll() is None:
            second.kill()
    diff = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(src / "expected" / "stampede.db"), str(db)],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0 and "TOTAL" in diff.stdout, diff.stdout[-3000:]


@pytest.mark.quick
def test_the_state_dir_is_the_users_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == str(tmp_path / "xdg" / "monitord")
    store, why = daemon_resume_store(MonitorConfig("x.dag.dagman.out"))
    assert store is not None and why == ""
    assert stat.S_IMODE(os.stat(tmp_path / "xdg" / "monitord").st_mode) == 0o700
    assert store.directory == str(tmp_path / "xdg" / "monitord" / RESUME_DIR)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    store, why = daemon_resume_store(MonitorConfig("x.dag.dagman.out", state_dir=str(shared)))
    assert store is None and "writable by others" in why  # pickles from a shared dir: never


@pytest.mark.quick
def test_the_state_dir_comes_from_the_option_else_the_property() -> None:
    from monitord.cli import build_parser
    from monitord.daemon.config import Options, monitor_config

    prop = {"pegasus.monitord.state.dir": "/from/property"}
    args = build_parser().parse_args(["--state-dir", "/from/option", "w.dag.dagman.out"])
    assert monitor_config(Options.from_args(args), prop).state_dir == "/from/option"
    args = build_parser().parse_args(["w.dag.dagman.out"])
    assert monitor_config(Options.from_args(args), prop).state_dir == "/from/property"
    assert monitor_config(Options.from_args(args), {}).state_dir is None  # the default
