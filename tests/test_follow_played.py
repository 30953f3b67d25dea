"""Live following of *played* workflows: the daemon follows a submit directory being written.

``monitord.tools.player`` re-enacts each finished submit directory (every corpus sample and every
generated case in tests/data/cases) into a fresh directory as DAGMan would: dagman.out
line by line, job outputs appearing just before the line that says the job ended,
sub-workflows played concurrently with their parent, a pause between the DAGMan runs of a
rescue DAG.  A live ``pegasus-monitord`` follows it; like pegasus-run, a new daemon is
started for each new DAGMan run when the previous daemon has ended.  The database, every
jobstate.log and the .bp stream must then equal the reference's (stampede-diff); in
jobstate.log the only allowed difference is the MONITORD_FINISHED/MONITORD_STARTED pair
a daemon handover leaves between two DAGMan runs.

Also here: SIGKILL of the daemon at seeded random moments of a play (job outputs appear
while the daemon runs), including in the middle of a rescue DAG's second run, and live
following in polling-only mode.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from monitord.tools.player import Append, Pause, Player, run_starts
from tests.conftest import (
    CORPUS,
    CORPUS_TZ,
    STAMPEDE_DIFF,
    corpus_samples,
    exact_case,
    require_corpus,
)

CASES = Path(__file__).resolve().parent / "data" / "cases"
BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"
RATE = 2500.0  # dagman.out lines per second
PLAYED_KILL_TRIALS = int(os.environ.get("MONITORD_PLAYED_KILL_TRIALS", "3"))
STOP = "<stop point>"  # the path of the pause a play makes at ``kill_at``


def _followable(case: Path) -> bool:
    """Cases a live daemon follows to the reference's end with equal outputs.

    Not: a fatal end (``expected/returncode``), a DAGMan that never exits (just started, cut
    mid-line: a live daemon rightly keeps waiting), a case with kept differences.
    """
    if not exact_case(case):
        return False
    out = next((case / "input").glob("*.dag.dagman.out"), None)
    return out is not None and b"EXITING WITH STATUS" in out.read_bytes()


def _case_names() -> list[str]:
    if not CASES.is_dir():
        return []
    return sorted(p.name for p in CASES.iterdir() if (p / "input").is_dir() and _followable(p))


def _sources() -> list[object]:
    out: list[object] = [
        pytest.param(CORPUS / s, id=f"corpus-{s}") for s in corpus_samples() or ["absent"]
    ]
    out += [pytest.param(CASES / c, id=f"case-{c}") for c in _case_names()]
    return out


class Following:
    """A player writing ``src/input`` into ``run`` and the daemons following it.

    Daemons are started as pegasus-dagman would: one when the play begins and, when a
    daemon has ended at a DAGMan exit, a new one before the next DAGMan run starts.
    ``kill_at`` (a number of root dagman.out lines) SIGKILLs the running daemon once the
    player has written that many; the supervisor then starts its successor at once.  The play
    waits there, at a pause of no length in its plan (:meth:`_at_stop` runs on the player's
    thread), so the stop comes with exactly those lines written: a busy machine's backlog,
    written in one flush, cannot carry the play past DAGMan's exit line first.
    """

    def __init__(
        self,
        src: Path,
        tmp_path: Path,
        *,
        rate: float = RATE,
        seed: int | None = None,
        kill_at: int | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.run_dir = tmp_path / "run"
        self.bp = tmp_path / "events.bp"
        self.player = Player(
            str(src / "input"),
            str(self.run_dir),
            lines_per_second=rate,
            pause=0.2,
            seed=seed,
            on_pause=self._on_pause,
            on_flush=self._on_flush,
        )
        root_out = next(a.path for a in self.player.actions if getattr(a, "line", None) is not None)
        self.root_out = root_out
        self.root_lines = [
            a.line  # type: ignore[union-attr]
            for a in self.player.actions
            if getattr(a, "path", None) == root_out and hasattr(a, "line")
        ]
        self.starts = run_starts(self.root_lines)
        self.kill_at = kill_at
        if kill_at is not None:
            self._insert_stop(kill_at)
        self.kills = 0
        self.killed = False
        self.written = 0
        self.lock = threading.Lock()
        self.daemon: subprocess.Popen[bytes] | None = None
        self.logs = tmp_path
        self.stderr = tmp_path / "daemon.err"
        self.daemons = 0
        self.handovers = 0
        self.errors: list[str] = []
        self.env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path), **(env or {})}
        db_name = Path(root_out).name.split(".dag.dagman.out")[0] + ".stampede.db"
        self.db = self.run_dir / db_name
        self.cmd = [
            sys.executable,
            "-m",
            "monitord.cli",
            f"-Dpegasus.catalog.workflow.live.url=sqlite:///{self.db}",
            "--no-dashboard",
            *args,
            "-d",
            f"file://{self.bp}",
            Path(root_out).name,
        ]

    # -- daemons
    def _spawn(self) -> subprocess.Popen[bytes]:
        """The next daemon, its stderr in a file of its own, in a session of its own: a crash
        takes its helper processes (sink workers) with it."""
        self.daemons += 1
        self.stderr = self.logs / f"daemon-{self.daemons}.err"
        with self.stderr.open("w") as err:
            self.daemon = subprocess.Popen(
                self.cmd,
                cwd=self.run_dir,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
        return self.daemon

    def _start_daemon(self) -> None:
        recover = self.run_dir / "monitord.recover"
        started = self.run_dir / "monitord.started"
        before = started.stat().st_mtime_ns if started.exists() else None
        daemon = self._spawn()
        # Ready: it has opened the workflow (monitord.started rewritten, monitord.recover made).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and daemon.poll() is None:
            if recover.exists() and started.exists() and started.stat().st_mtime_ns != before:
                return
            time.sleep(0.01)

    def _reap(self, timeout: float) -> int | None:
        assert self.daemon is not None
        try:
            code = self.daemon.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        err = self.stderr.read_text(errors="replace")
        if code not in (0, -signal.SIGKILL):
            self.errors.append(f"daemon exited {code}: {err[-3000:]}")
        if "Traceback" in err:
            self.errors.append(err[-3000:])
        return code

    # -- player hooks (player thread)
    def _insert_stop(self, at: int) -> None:
        """The play pauses right after the ``at``-th root dagman.out line (see the class)."""
        seen = 0
        for i, action in enumerate(self.player.actions):
            if isinstance(action, Append) and action.path == self.root_out:
                seen += 1
                if seen == at:
                    self.player.actions.insert(i + 1, Pause(0.0, STOP))
                    return
        raise ValueError(f"no root dagman.out line {at} to stop at")

    def _on_flush(self, lines: list[tuple[str, str]], _t: float) -> None:
        self.written += sum(1 for path, _ in lines if path == self.root_out)

    def _at_stop(self) -> None:
        """The play waits at ``kill_at``: the daemon is killed, its successor started later."""
        with self.lock:
            assert self.daemon is not None
            if self.daemon.poll() is None:
                _kill_group(self.daemon)
                self.kills += 1
                self.killed = True  # the supervisor starts the successor

    def _supervise(self) -> None:
        """While the player plays: a killed daemon's successor starts at once."""
        while self.player.is_alive():
            with self.lock:
                assert self.daemon is not None
                if self.killed and self.daemon.poll() is not None:
                    self.killed = False
                    self._reap(10)
                    self._start_daemon()
            time.sleep(0.01)

    def _on_pause(self, pause: Pause) -> None:
        """Between two DAGMan runs: if the run ended with an exit line, so does the daemon."""
        if pause.path == STOP:
            self._at_stop()
            return
        if pause.path != self.root_out:
            return
        run = sum(1 for s in self.starts if s < self.written)  # runs written so far
        end = self.starts[run] if run < len(self.starts) else len(self.root_lines)
        exited = any("EXITING WITH STATUS" in line for line in self.root_lines[:end][-20:])
        if not exited:
            return  # DAGMan died without a word: the daemon keeps following
        with self.lock:
            assert self.daemon is not None
            code = self._reap(30)
            if code is None:
                self.errors.append("the daemon did not end after DAGMan's exit line")
                return
            self.handovers += 1
            self._start_daemon()

    # -- the whole thing
    def run(self) -> Following:
        self.player.prepare()
        with self.lock:
            self._start_daemon()
        self.player.start()
        try:
            self._supervise()
            self.player.join(timeout=120)
            for _ in range(5):
                with self.lock:
                    code = self._reap(120)
                assert code is not None, "the daemon did not end after the play"
                if self.errors or self._processed() >= len(self.root_lines):
                    break
                with self.lock:  # it ended at an exit line the pause did not see: restart
                    self.handovers += 1
                    self._start_daemon()
        finally:
            self.player.stop.set()
            if self.daemon is not None and self.daemon.poll() is None:
                _kill_group(self.daemon)
        assert not self.errors, "\n".join(self.errors)
        return self

    def _processed(self) -> int:
        info = self.run_dir / "monitord.info"
        if not info.exists():
            return 0
        pairs = dict(line.split() for line in info.read_text().splitlines() if line.strip())
        return int(pairs.get("monitord_dagman_out_sequence", 0))

    # -- checks
    def compare(self, expected: Path, tmp_path: Path) -> list[str]:
        """stampede-diff of the DB, every jobstate.log and the .bp stream (run side by side)."""
        failures = []
        norm = tmp_path / "jobstate-normalized"
        handovers = normalize_jobstate(self.run_dir, norm)
        if handovers > self.handovers:
            failures.append(f"{handovers} daemon handovers in jobstate.log, {self.handovers} made")
        checks = {
            "stampede.db": [str(expected / "stampede.db"), str(self.db)],
            "jobstate.log": ["--jobstate", str(expected / "jobstate"), str(norm)],
            "events.bp": ["--bp", str(expected / "events.bp"), str(self.bp), "--ignore", BP_IGNORE],
        }
        procs = {
            name: subprocess.Popen(
                [sys.executable, str(STAMPEDE_DIFF), *args], stdout=subprocess.PIPE, text=True
            )
            for name, args in checks.items()
        }
        for name, proc in procs.items():
            out, _ = proc.communicate(timeout=300)
            if proc.returncode != 0 or "TOTAL" not in out:
                failures.append(f"{name}:\n" + out[-4000:])
        return failures


def _kill_group(daemon: subprocess.Popen[bytes]) -> None:
    """SIGKILL the daemon and every process of its session (a crash of the whole daemon)."""
    try:
        os.killpg(daemon.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    daemon.wait()


def normalize_jobstate(run: Path, out: Path) -> int:
    """Copy every jobstate.log below ``run`` to ``out`` without daemon-handover pairs.

    A daemon that ends at a DAGMan exit writes MONITORD_FINISHED 0; its successor (resumed
    from monitord.info for the rescue run) writes MONITORD_STARTED right after.  Returns
    the number of such pairs removed.
    """
    removed = 0
    for path in run.rglob("jobstate.log"):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept: list[str] = []
        i = 0
        while i < len(lines):
            if (
                i + 1 < len(lines)
                and "INTERNAL *** MONITORD_FINISHED 0 ***" in lines[i]
                and "INTERNAL *** MONITORD_STARTED ***" in lines[i + 1]
                and i + 2 < len(lines)
            ):
                removed += 1
                i += 2
                continue
            kept.append(lines[i])
            i += 1
        target = out / path.relative_to(run)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(kept), encoding="utf-8")
    return removed


def _require(src: Path) -> None:
    if not STAMPEDE_DIFF.exists():
        require_corpus()
    if not (src / "input").is_dir():
        require_corpus()


@pytest.mark.parametrize("src", _sources())
def test_following_a_played_workflow_equals_the_reference(src: Path, tmp_path: Path) -> None:
    _require(src)
    following = Following(src, tmp_path).run()
    assert not (following.run_dir / "monitord.recover").exists()
    if src.name == "rescue_dag_restart":
        # Run 1 ended with an exit line: its daemon stopped, a fresh one resumed run 2.
        assert (following.daemons, following.handovers) == (2, 1)
    elif src.name == "rescue_dag_restart_noexit":
        assert following.daemons == 1  # no exit line: one daemon followed both runs
    failures = following.compare(src / "expected", tmp_path)
    assert not failures, "\n\n".join(failures)


def test_polling_only_mode_follows_a_played_workflow(tmp_path: Path) -> None:
    """MONITORD_FORCE_POLLING=1 (no inotify) for one daemon, --poll for a sub-workflow case."""
    require_corpus()
    src = CORPUS / "process_wf_success"
    following = Following(src, tmp_path, rate=800, env={"MONITORD_FORCE_POLLING": "1"}).run()
    failures = following.compare(src / "expected", tmp_path)
    assert not failures, "\n\n".join(failures)


def test_poll_option_follows_nested_subworkflows(tmp_path: Path) -> None:
    _require(CASES / "nested_subworkflows")
    src = CASES / "nested_subworkflows"
    following = Following(src, tmp_path, rate=1500, args=("--poll",)).run()
    failures = following.compare(src / "expected", tmp_path)
    assert not failures, "\n\n".join(failures)


def test_sigkill_in_the_second_run_of_a_rescue_dag(tmp_path: Path) -> None:
    """The daemon following a rescue DAG's second DAGMan run is killed; its successor recovers."""
    src = CASES / "rescue_dag_restart"
    _require(src)
    rng = random.Random(4242)
    probe = Following(src, tmp_path / "probe")
    second = probe.starts[1]
    kill_at = rng.randint(second + 20, len(probe.root_lines) - 20)
    following = Following(src, tmp_path, rate=400, kill_at=kill_at).run()
    assert following.kills == 1, "the daemon was not running when the kill was due"
    assert following.daemons >= 3  # run 1, run 2 (killed), its successor
    # The successor found monitord.recover: it rotated the database and started over.
    assert (following.run_dir / (following.db.name + ".000")).exists()
    failures = following.compare(src / "expected", tmp_path)
    assert not failures, "\n\n".join(failures)


KILL_SOURCES = [
    CORPUS / "process_wf_success",
    CASES / "nested_subworkflows",
    CASES / "pre_scripts_and_recovery",
    CASES / "held_released_aborted",
]


@pytest.mark.parametrize("trial", range(PLAYED_KILL_TRIALS))
def test_sigkill_while_playing_then_restart_equals_reference(trial: int, tmp_path: Path) -> None:
    """SIGKILL at a seeded random point of a play (outputs appear while the daemon runs)."""
    rng = random.Random(7000 + trial)
    src = KILL_SOURCES[trial % len(KILL_SOURCES)]
    _require(src)
    probe = Following(src, tmp_path / "probe")
    kill_at = rng.randint(15, len(probe.root_lines) - 15)
    following = Following(src, tmp_path, rate=600, seed=trial, kill_at=kill_at).run()
    assert following.kills == 1, "the daemon was not running when the kill was due"
    failures = following.compare(src / "expected", tmp_path)
    assert not failures, "\n\n".join(failures)
