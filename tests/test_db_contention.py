"""Many daemons, one database (issue 21): started at the same instant, none refused, nothing lost.

Every daemon is held at a barrier (a file) once its imports are done, so that all of them open
their outputs together: on a fresh server database (the schema is created once, under a lock held
until it is committed) and on one shared dashboard database (``~/.pegasus/workflow.db``, SQLite:
writers queue for its lock instead of failing).  Rows are compared, not log lines: each workflow
with its own SQLite replay, the dashboard with what each workflow's own database says.
``MONITORD_CONTENTION_ROUNDS`` (default 5) sets the rounds, e.g. 50 on demand.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import STAMPEDE_DIFF
from tests.dbcopy import copy_to_sqlite
from tests.servers import require_server
from tests.test_sql_servers import (
    KINDS,
    Generated,
    _generate_and_replay,
    _only_workflow,
    drop,
    fresh_db,
    replay_env,
    row_counts,
)

ROUNDS = int(os.environ.get("MONITORD_CONTENTION_ROUNDS", "5"))
SERVER_DAEMONS = 16
DASHBOARD_DAEMONS = 20
JOBS = 12  # small workflows: the contention is at open, the rows only have to be compared
LIVE_RATE = 150.0  # dagman.out lines per second of each played workflow

#: the daemon, once imported, says so (its "ready" file, argv[2]) and blocks on the pipe whose
#: read end is argv[1] until the test closes the write end: all are released at once, and none
#: spends CPU waiting (a 2 ms poll of a file in every daemon did, beside the others' imports)
BARRIER = (
    "import os, sys\n"
    "from monitord.cli import main\n"
    "open(sys.argv[2], 'w').close()\n"
    "os.read(int(sys.argv[1]), 1)\n"
    "os.close(int(sys.argv[1]))\n"
    "raise SystemExit(main(sys.argv[3:]))\n"
)


def start_together(
    runs: Sequence[tuple[Path, list[str]]],
    env: dict[str, str],
    gate: Path,
    released: threading.Event | None = None,
) -> list[tuple[int, str]]:
    """Start one daemon per (cwd, monitord arguments), release them at once (and set
    ``released``); (exit code, stderr)."""
    gate.mkdir(parents=True, exist_ok=True)
    logs = [gate / f"daemon{i}.log" for i in range(len(runs))]
    procs = []
    hold, go = os.pipe()
    try:
        for i, (cwd, args) in enumerate(runs):
            with logs[i].open("w") as err:  # a file, not a pipe: a daemon never blocks on its log
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", BARRIER, str(hold), str(gate / f"ready{i}"), *args],
                        cwd=cwd,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=err,
                        pass_fds=(hold,),
                    )
                )
        deadline = time.monotonic() + 300
        while len(list(gate.glob("ready*"))) < len(procs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.01)
    finally:
        os.close(hold)
        os.close(go)  # every daemon's read returns (end of file): the release
    if released is not None:
        released.set()
    codes = [p.wait(timeout=900) for p in procs]
    return [(code, log.read_text(errors="replace")) for code, log in zip(codes, logs, strict=True)]


def assert_clean(results: list[tuple[int, str]]) -> None:
    """Every daemon exited 0 without an error line or a traceback."""
    for code, err in results:
        assert code == 0, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        assert "[error" not in err, err[-3000:]


def assert_all_same(pairs: Sequence[tuple[Path, Path]], *args: str) -> None:
    """stampede-diff of every (expected, actual) pair, run side by side."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(STAMPEDE_DIFF), *args, str(expected), str(actual)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for expected, actual in pairs
    ]
    outputs = [(p.communicate(timeout=600)[0], p.returncode) for p in procs]
    for (_, actual), (out, code) in zip(pairs, outputs, strict=True):
        assert code == 0, f"{actual}:\n{out[-6000:]}"


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    """20 small generated workflows, each replayed alone into its own SQLite database."""
    base = tmp_path_factory.mktemp("contention")
    return _generate_and_replay(base, DASHBOARD_DAEMONS, JOBS, 2100)


# ------------------------------------------------------------------ a fresh server database


@pytest.mark.parametrize("kind", KINDS)
def test_daemons_started_together_on_a_fresh_server_database(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """16 daemons at one instant on a fresh database, every round: all exit 0, and every workflow
    equals its own replay (the second daemon to open never sees a half-created schema)."""
    require_server(kind)  # skips without the server before the workflows are made
    made: list[Generated] = request.getfixturevalue("workflows")[:SERVER_DAEMONS]
    started = time.perf_counter()
    for rnd in range(ROUNDS):
        url = fresh_db(kind, f"together{os.getpid()}")  # other runs share the server
        try:
            runs = [
                (m.dagman_out.parent, ["--no-dashboard", "-d", url, "-r", m.dagman_out.name])
                for m in made
            ]
            assert_clean(start_together(runs, replay_env(tmp_path / "home"), tmp_path / f"r{rnd}"))
            copy = tmp_path / f"server{rnd}.db"
            copy_to_sqlite(url, copy, made[0].expected)
            with sqlite3.connect(copy) as con:
                assert con.execute("SELECT COUNT(*) FROM dbversion").fetchone()[0] == 1
            tables = ",".join(
                t for t in row_counts(copy) if t not in ("rc_lfn", "rc_pfn", "rc_meta")
            )
            pairs = [
                (m.expected, _only_workflow(copy, m.wf_uuid, tmp_path / f"wf{i}.db"))
                for i, m in enumerate(made)
            ]
            assert_all_same(pairs, "--tables", tables)
        finally:
            drop(kind, url)
    print(
        f"\n{kind}: {ROUNDS} rounds of {SERVER_DAEMONS} daemons started together "
        f"in {time.perf_counter() - started:.1f} s"
    )


# ------------------------------------------------------------- one shared dashboard database

DASHBOARD_COLUMNS = (
    "dax_label, dax_version, dax_file, dag_file_name, timestamp, submit_hostname, submit_dir"
)


def expected_dashboard(
    dbs: Sequence[tuple[str, Path]],
) -> dict[str, tuple[tuple[object, ...], ...]]:
    """Per root workflow uuid, what its own database (``dbs``: uuid, path) says the dashboard
    must hold: the root workflow's row and its states."""
    expected: dict[str, tuple[tuple[object, ...], ...]] = {}
    for uuid, path in dbs:
        con = sqlite3.connect(path)
        try:
            wf_id, *row = con.execute(
                f"SELECT wf_id, {DASHBOARD_COLUMNS} FROM workflow WHERE wf_uuid = ?", (uuid,)
            ).fetchone()
            states = con.execute(
                "SELECT state, timestamp, restart_count, status FROM workflowstate "
                "WHERE wf_id = ? ORDER BY timestamp, state",
                (wf_id,),
            ).fetchall()
        finally:
            con.close()
        assert len(states) >= 2, f"{path}: {states}"  # started and terminated
        expected[uuid] = (tuple(row), *states)
    return expected


def dashboard_rows(db: Path) -> dict[str, tuple[tuple[object, ...], ...]]:
    cols = DASHBOARD_COLUMNS
    con = sqlite3.connect(db)
    try:
        found: dict[str, tuple[tuple[object, ...], ...]] = {}
        for wf_id, uuid, *row in con.execute(f"SELECT wf_id, wf_uuid, {cols} FROM master_workflow"):
            assert uuid not in found, f"{uuid} twice in the dashboard"
            states = con.execute(
                "SELECT state, timestamp, restart_count, status FROM master_workflowstate "
                "WHERE wf_id = ? ORDER BY timestamp, state",
                (wf_id,),
            ).fetchall()
            found[uuid] = (tuple(row), *states)
        return found
    finally:
        con.close()


def test_daemons_started_together_share_one_dashboard(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """20 replays at one instant with one HOME: the dashboard holds every workflow and every
    state, each as the workflow's own database has it; all exit 0, no error line."""
    made: list[Generated] = request.getfixturevalue("workflows")
    expected = expected_dashboard([(m.wf_uuid, m.expected) for m in made])
    started = time.perf_counter()
    for rnd in range(ROUNDS):
        home = tmp_path / f"home{rnd}"  # a fresh dashboard: its creation is contended too
        runs = [(m.dagman_out.parent, ["-r", m.dagman_out.name]) for m in made]
        results = start_together(runs, replay_env(home), tmp_path / f"r{rnd}")
        got = dashboard_rows(home / ".pegasus" / "workflow.db")
        assert sorted(got) == sorted(expected), f"round {rnd}: {len(got)} of {len(expected)}"
        assert got == expected
        assert_clean(results)
    print(
        f"\ndashboard: {ROUNDS} rounds of {DASHBOARD_DAEMONS} daemons started together "
        f"in {time.perf_counter() - started:.1f} s"
    )
