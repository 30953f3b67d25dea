"""Seeded ``kill -9`` of a live ``pegasus-monitord`` that resumes from its snapshots.

A :class:`ResumingFollowing` plays a finished submit directory (a corpus sample, a generated
case, a synthetic workflow) while the daemon follows it into its own SQLite database (no
events file: every output can resume), SIGKILLs the daemon at seeded numbers of root
dagman.out lines (every other kill takes the daemon alone, as the OOM killer does: its sink
process is orphaned for a moment), and starts its successor at once.  Afterwards the database
and every jobstate.log must equal the replay's (stampede-diff), the database must not have
been rotated (no ``.000``), the marks table must be gone, and no daemon may log an error.  At
each kill the bytes the successor will read again are measured from the snapshot: dagman.out
sizes at the kill minus the offsets the snapshot recorded.

``python -m tests.kills --trials 100`` runs that many seeded kills (5 per play) and prints
the figure; tests/test_daemon_resume.py runs 5 per case in CI.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from monitord.daemon.resume import ResumePoint, ResumeStore
from monitord.daemon.statedir import RESUME_DIR
from tests.conftest import CORPUS, CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir
from tests.test_follow_played import CASES, Following, normalize_jobstate

KILLS_PER_PLAY = 5
STOP_TIMEOUT = 60  # seconds a clean stop may take (the chunk in hand, a flush, a snapshot)
PLAY_SECONDS = 15.0  # a play lasts about this long (each daemon lives a few seconds)
SOURCES = [
    CORPUS / "process_wf_success",
    CORPUS / "hierarchical_wf_success",
    CASES / "nested_subworkflows",
    CASES / "pre_scripts_and_recovery",
    CASES / "held_released_aborted",
    CASES / "rescue_dag_restart",
]


@dataclass
class Kill:
    at_line: int
    whole_group: bool
    # dagman.out bytes the successor reads again: from the snapshot's offsets to the crashed
    # daemon's last checkpoints (committed lines), and to the end of the files (an upper bound:
    # it may not have read them all).  None: no snapshot to resume from.
    reread: int | None
    reread_max: int | None
    total: int  # dagman.out bytes on disk at the kill


#: how the daemon is started: ``monitord <dagman.out>`` (the form these tests began with),
#: ``monitord follow``, and the drop-in as pegasus-dagman starts it
FORMS = {
    "monitord": [sys.executable, "-m", "monitord.cli"],
    "follow": [sys.executable, "-m", "monitord.cli", "follow"],
    "dropin": [str(Path(sys.executable).parent / "pegasus-monitord"), "-N"],
}


class ResumingFollowing(Following):
    """:class:`Following` with the daemon's own database, a state dir, and several stops.

    ``signals``: the signal of each stop in turn (cycled; default SIGKILL); ``form``: how the
    daemon is started (:data:`FORMS`).  A stop by SIGKILL is a crash; any other signal is a
    clean stop: the daemon must exit by itself with 128 + the signal's number and one line
    saying where it stopped.
    """

    def __init__(
        self,
        src: Path,
        tmp_path: Path,
        *,
        kills: list[int],
        rate: float,
        seed: int = 0,
        signals: tuple[signal.Signals, ...] = (signal.SIGKILL,),
        form: str = "monitord",
    ) -> None:
        super().__init__(src, tmp_path, rate=rate, seed=seed)
        self.state_dir = tmp_path / "state"
        self.signals = signals
        self.cmd = [
            *FORMS[form],
            "--no-dashboard",
            "--state-dir",
            str(self.state_dir),
            "-d",
            f"sqlite:///{self.db}",
            Path(self.root_out).name,
        ]
        self.kill_points = sorted(kills)
        self.done_kills: list[Kill] = []
        self.await_fresh = False
        self.store = ResumeStore(str(self.state_dir / RESUME_DIR))

    def _start_daemon(self) -> None:
        """Ready once it has written its pid: a resumed daemon rewrites no monitord.started."""
        pid_file = self.run_dir / "monitord.pid"
        self.started_at = time.time()
        daemon = self._spawn()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and daemon.poll() is None:
            try:
                if f"pid {daemon.pid}\n" in pid_file.read_text():
                    return
            except OSError:
                pass
            time.sleep(0.01)

    def _reap(self, timeout: float) -> int | None:
        """A daemon stopped cleanly by the harness exited 128 + its signal: not an error here
        (:meth:`_wait_stopped` judged it)."""
        assert self.daemon is not None
        code = self.daemon.poll()
        if code is not None and code in {128 + s for s in self.signals if s != signal.SIGKILL}:
            return code
        return super()._reap(timeout)

    def _wait_stopped(self, sig: signal.Signals) -> None:
        """A crash is over at once; a clean stop must end by itself, with its exit status
        and its one line (the harness counts what is wrong, and kills a daemon that hangs)."""
        assert self.daemon is not None
        if sig == signal.SIGKILL:
            self.daemon.wait()
            return
        try:
            code = self.daemon.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.errors.append(f"{sig.name}: still running {STOP_TIMEOUT} s later")
            os.killpg(self.daemon.pid, signal.SIGKILL)
            self.daemon.wait()
            return
        log = self.stderr.read_text(errors="replace")
        if code != 128 + sig:
            self.errors.append(f"{sig.name}: exit status {code}, not {128 + sig}: {log[-2000:]}")
        elif "stopped; the next start goes on from here" not in log:
            self.errors.append(f"{sig.name}: no line saying where it stopped: {log[-2000:]}")
        if "Traceback" in log:
            self.errors.append(f"{sig.name}: a traceback: {log[-3000:]}")
        if "followed 0 workflows" in log:  # a restarted follow's summary names what it followed
            self.errors.append(f"{sig.name}: a summary of no workflow: {log[-2000:]}")

    def _snapshot(self) -> ResumePoint | None:
        try:
            with open(self.store.path(os.path.join(self.run_dir, self.root_out)), "rb") as fh:
                point = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError):
            return None
        return point if isinstance(point, ResumePoint) else None

    def _fresh(self) -> bool:
        """The running daemon has written a snapshot (it has started and followed a while)."""
        try:
            st = os.stat(self.store.path(os.path.join(self.run_dir, self.root_out)))
        except OSError:
            return False
        return st.st_mtime >= self.started_at

    def _wait_fresh(self, timeout: float = 20.0) -> None:
        """Until the running daemon has a snapshot (or has ended: nothing to wait for)."""
        deadline = time.monotonic() + timeout
        while not self._fresh() and time.monotonic() < deadline:
            if self.daemon is not None and self.daemon.poll() is not None:
                return
            time.sleep(0.01)

    def _ready_to_kill(self) -> bool:
        """Whether the kill that is due is made now, or put off to a later flush (a subclass
        waiting for the daemon to reach a state worth killing in): now, here."""
        return True

    def _on_flush(self, lines: list[tuple[str, str]], _t: float) -> None:
        """At a kill point, a kill; a killed daemon's successor gets the time to start and take
        its first snapshot first (the play waits: the player does not count a hook's wait)."""
        self.written += sum(1 for path, _ in lines if path == self.root_out)
        if self.await_fresh and not self.killed:
            self._wait_fresh()
            self.await_fresh = False
        if not self.kill_points or self.written < self.kill_points[0]:
            return
        deadline = time.monotonic() + 30
        while self.killed and time.monotonic() < deadline:  # the last kill's successor starts
            time.sleep(0.01)
        self._wait_fresh()  # the first daemon (or a rescue run's) has a snapshot to resume from
        if not self._ready_to_kill():
            return  # at a later flush: the play goes on meanwhile
        with self.lock:
            assert self.daemon is not None
            if self.daemon.poll() is not None:
                # ended at an exit line (a rescue DAG's first run): the kill is made once the
                # next run's daemon follows, at a later flush, not dropped
                return
            self.kill_points.pop(0)
            whole = len(self.done_kills) % 2 == 0
            sig = self.signals[len(self.done_kills) % len(self.signals)]
            if whole:  # a crash of the whole daemon; Ctrl-C on a terminal, a logout
                os.killpg(self.daemon.pid, sig)
            else:  # the OOM killer (its child stays a moment); `kill PID`, systemd's stop
                os.kill(self.daemon.pid, sig)
            self._wait_stopped(sig)
            point = self._snapshot()
            total = sum(_size(p) for p in self.run_dir.rglob("*.dagman.out"))
            reread = unread = None
            if point is not None:
                following = [t for t in point.tracked if not t.ended]
                reread = sum(max(0, _checkpointed(t) - t.offset) for t in following)
                unread = sum(max(0, _size(Path(t.dagman_out)) - t.offset) for t in following)
            self.done_kills.append(Kill(self.written, whole, reread, unread, total))
            self.kills += 1
            self.killed = self.await_fresh = True

    def check(self, expected: Path, tmp_path: Path, known: set[str] | None = None) -> list[str]:
        """Rows equal the replay's; no rotated database; no marks table left; no daemon logged
        an error a replay of the same input does not (``known``): a successor that writes
        again what the database holds has its batches rejected, "written row by row" (the
        rows may still be equal, the delivery was not)."""
        failures = []
        for log in sorted(self.logs.glob("daemon-*.err")):
            errors = error_messages(log.read_text(errors="replace")) - (known or set())
            if errors:
                failures.append(f"{log.name}: " + "\n".join(sorted(errors)[:3]))
        if (self.run_dir / (self.db.name + ".000")).exists():
            failures.append("the database was rotated: a successor recovered from line 1")
        with sqlite3.connect(self.db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "monitord_delivery_marks" in tables:
            failures.append("monitord_delivery_marks left in the database")
        norm = tmp_path / "jobstate-normalized"
        normalize_jobstate(self.run_dir, norm)
        for args in (
            [str(expected / "stampede.db"), str(self.db)],
            ["--jobstate", str(expected / "jobstate"), str(norm)],
        ):
            proc = subprocess.run(
                [sys.executable, str(STAMPEDE_DIFF), *args], capture_output=True, text=True
            )
            if proc.returncode != 0 or "TOTAL" not in proc.stdout:
                failures.append(f"{args[-1]}:\n" + proc.stdout[-4000:] + proc.stderr[-2000:])
        return failures


def error_messages(log: str) -> set[str]:
    """The messages (not their paths and values) of a daemon log's error lines."""
    found = set()
    for line in log.splitlines():
        if "[error" in line:
            message = line.split("]", 1)[-1].strip()
            found.add(re.split(r"\s+[\w.]+=", message, maxsplit=1)[0].strip())
    return found


def replay_errors(src: Path, where: Path) -> set[str]:
    """The error messages a replay of ``src``'s input logs (e.g. a job output the sample
    lacks): the input's own, not a crash's."""
    dagman_out = copy_submit_dir(src / "input", where)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(where)}
    cmd = [sys.executable, "-m", "monitord.cli", "-r", "--no-dashboard"]
    proc = subprocess.run(
        [*cmd, "-d", f"sqlite:///{where / 'replay.db'}", dagman_out.name],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return error_messages(proc.stderr)


def _checkpointed(point: object) -> int:
    """The byte offset of the line the (sub-)workflow's monitord.recover names."""
    try:
        text = Path(point.files["recover"]).read_text()  # type: ignore[attr-defined]
        line = int(text.split("line_processed", 1)[1].split()[0])
        with open(point.dagman_out, "rb") as fh:  # type: ignore[attr-defined]
            return sum(len(fh.readline()) for _ in range(line))
    except (OSError, IndexError, ValueError, KeyError):
        return 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def generated_source(where: Path, jobs: int, seed: int) -> Path:
    """A synthetic workflow as a source (``input``), with its replay as ``expected``."""
    from monitord.tools.synthetic import generate

    gen = generate(where / "input", jobs, retry_fraction=0.1, seed=seed, name=f"kill{seed}")
    replay = where / "replay"
    shutil.copytree(where / "input", replay)
    db = where / "expected" / "stampede.db"
    db.parent.mkdir(parents=True)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(where)}
    cmd = [sys.executable, "-m", "monitord.cli", "-r", "--no-dashboard", "-d", f"sqlite:///{db}"]
    subprocess.run([*cmd, str(replay / gen.dagman_out.name)], check=True, env=env)
    for log in replay.rglob("jobstate.log"):
        target = where / "expected" / "jobstate" / log.relative_to(replay)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, target)
    return where


@dataclass
class PlayResult:
    source: str
    kills: list[Kill]
    failures: list[str] = field(default_factory=list)


def play_with_kills(
    src: Path,
    tmp: Path,
    seed: int,
    kills: int = KILLS_PER_PLAY,
    *,
    signals: tuple[signal.Signals, ...] = (signal.SIGKILL,),
    form: str = "monitord",
) -> PlayResult:
    """One play of ``src`` with ``kills`` seeded stops (``signals`` in turn, the daemon started
    as ``form``); the checks' failures (none: equal)."""
    rng = random.Random(seed)
    probe = Following(src, tmp / "probe")
    lines = len(probe.root_lines)
    points = kill_points(rng, lines, kills)
    rate = min(200.0, max(20.0, lines / PLAY_SECONDS))
    following = ResumingFollowing(
        src, tmp / "play", kills=points, rate=rate, seed=seed, signals=signals, form=form
    )
    following.run()
    result = PlayResult(src.name, following.done_kills)
    known = replay_errors(src, tmp / "replay")
    result.failures = following.check(src / "expected", tmp / "play", known)
    if len(following.done_kills) < len(points) - 1:  # the last may come after DAGMan's end
        result.failures.append(f"{len(following.done_kills)} kills made, {len(points)} planned")
    return result


def kill_points(rng: random.Random, lines: int, kills: int) -> list[int]:
    """``kills`` seeded line numbers, one in the middle half of each of as many equal spans
    (each daemon lives a while: a successor is not always killed while it starts)."""
    span = (lines - 40) / kills
    return [10 + int(span * i + rng.uniform(span / 4, span * 3 / 4)) for i in range(kills)]


def describe(results: list[PlayResult]) -> str:
    kills = [k for r in results for k in r.kills]
    rereads = sorted(k.reread for k in kills if k.reread is not None)
    uppers = sorted(k.reread_max for k in kills if k.reread_max is not None)
    bad = [r for r in results if r.failures]
    lines = [
        f"plays: {len(results)}, kills: {len(kills)} "
        f"({sum(k.whole_group for k in kills)} of the whole daemon, the rest its main process)",
        f"plays whose outputs equal the replay: {len(results) - len(bad)}/{len(results)}",
        f"kills without a snapshot to resume from: {sum(k.reread is None for k in kills)}",
    ]
    if rereads:
        p50 = rereads[len(rereads) // 2]
        totals = sum(k.total for k in kills if k.reread is not None)
        lines.append(
            f"dagman.out bytes read again per kill: min {rereads[0]}, p50 {p50}, max {rereads[-1]}, "
            f"mean {sum(rereads) / len(rereads):.0f} "
            f"({100 * sum(rereads) / max(1, totals):.1f} % of the bytes on disk at the kills); "
            f"to the end of the files: p50 {uppers[len(uppers) // 2]}, max {uppers[-1]}"
        )
    for r in bad:
        lines.append(f"FAILED {r.source}: " + "\n".join(r.failures)[:2000])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.kills", description=__doc__)
    p.add_argument("--trials", type=int, default=100, help="kills in all (default 100)")
    p.add_argument("--kills-per-play", type=int, default=KILLS_PER_PLAY)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--generated-jobs", type=int, default=80)
    p.add_argument(
        "--signals",
        default="SIGKILL",
        help="comma-separated signals of the stops, in turn (e.g. SIGINT,SIGTERM,SIGHUP,SIGKILL)",
    )
    p.add_argument(
        "--forms",
        default="monitord",
        help=f"comma-separated daemon forms, in turn ({', '.join(FORMS)})",
    )
    args = p.parse_args(argv)
    signals = tuple(signal.Signals[name.strip()] for name in args.signals.split(","))
    forms = [f.strip() for f in args.forms.split(",")]
    sources = [s for s in SOURCES if (s / "input").is_dir()]
    with tempfile.TemporaryDirectory(prefix="kills-") as tmp_dir:
        tmp = Path(tmp_dir)
        sources.append(generated_source(tmp / "generated", args.generated_jobs, args.seed))
        results: list[PlayResult] = []
        plays = max(1, -(-args.trials // args.kills_per_play))
        for n in range(plays):
            src = sources[n % len(sources)]
            result = play_with_kills(
                src,
                tmp / f"play-{n}",
                args.seed * 1000 + n,
                args.kills_per_play,
                signals=signals[n % len(signals) :] + signals[: n % len(signals)],
                form=forms[n % len(forms)],
            )
            results.append(result)
            status = "ok" if not result.failures else "FAILED"
            reread = [k.reread for k in result.kills]
            print(
                f"play {n + 1}/{plays} {src.name} ({forms[n % len(forms)]}): {status}, "
                f"bytes read again {reread}",
                flush=True,
            )
        print(describe(results))
        return 1 if any(r.failures for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
