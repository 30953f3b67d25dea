"""Live-following latency and idle CPU of ``pegasus-monitord``.

For each rate (default 100 and 5,000 dagman.out lines/s) a synthetic workflow
(``monitord/tools/synthetic/``) is played into a fresh directory with
``monitord/tools/player/`` while a live daemon follows it into its default SQLite database.
Every ``ULOG_SUBMIT`` and ``ULOG_JOB_TERMINATED`` line is time-stamped when the player's
write of it reaches the OS; a poller thread watches the database's ``jobstate`` table and
time-stamps each matching row (same job, same state, n-th occurrence) when it becomes
visible.  Latency = visible - written.  The poller reads every ``--poll-ms`` ms, which bounds
the measurement's own error.

Idle CPU: halfway through the slowest rate's play the player stops writing for
``--idle-seconds``; the CPU time of every process of the daemon's session (the daemon and
its sink worker processes) over that window, read from /proc, divided by the wall time.
The played dagman.out names the benchmark's own pid as DAGMan's, so the daemon's DAGMan
liveness check sees a live DAGMan and keeps following a sleeping workflow.

    .venv/bin/python bench/latency_bench.py [--rates 100,5000] [--seconds 30,15]
        [--idle-seconds 30] [--poll] [--json FILE] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from monitord.tools.player import Append, Copy, Player, plan, scan  # noqa: E402
from monitord.tools.synthetic import generate  # noqa: E402

LINES_PER_JOB = 21  # about, for the synthetic workflows
MARK = re.compile(r"Event: ULOG_(SUBMIT|JOB_TERMINATED) for HTCondor Node (\S+) \((\d+\.\d+)")
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class RateResult:
    rate: float
    lines: int
    play_seconds: float
    samples: int
    missing: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    cpu_percent: float  # daemon session while following
    startup_seconds: float  # daemon spawned -> following with DB and static events stored
    idle_seconds: float | None = None
    idle_cpu_seconds: float | None = None
    idle_cpu_percent: float | None = None
    latencies_ms: list[float] = field(default_factory=list, repr=False)


def session_cpu(sid: int) -> float:
    """User + system CPU seconds of every live process of session ``sid``."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid:  # field 6: session
            total += int(fields[11]) + int(fields[12])  # fields 14, 15: utime, stime
    return total / CLK_TCK


class RowWatcher(threading.Thread):
    """Polls the jobstate table; first-seen time per (job, state, condor id)."""

    QUERY = (
        "SELECT js.rowid, j.exec_job_id, js.state, ji.sched_id FROM jobstate js "
        "JOIN job_instance ji ON ji.job_instance_id = js.job_instance_id "
        "JOIN job j ON j.job_id = ji.job_id "
        "WHERE js.rowid > ? AND js.state IN ('SUBMIT', 'JOB_TERMINATED') ORDER BY js.rowid"
    )

    def __init__(self, db: Path, poll: float, sid: int) -> None:
        super().__init__(name="rows", daemon=True)
        self.db, self.poll, self.sid = db, poll, sid
        self.cpu = 0.0  # the daemon session's CPU seconds, sampled every 0.25 s
        self.seen: dict[tuple[str, str, str], float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        last = 0
        con: sqlite3.Connection | None = None
        next_cpu = 0.0
        while not self.stop.is_set():
            if time.monotonic() >= next_cpu:
                self.cpu = max(self.cpu, session_cpu(self.sid))
                next_cpu = time.monotonic() + 0.25
            if con is None and self.db.exists():
                con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=1.0)
            if con is not None:
                try:
                    rows = con.execute(self.QUERY, (last,)).fetchall()
                except sqlite3.Error:
                    rows = []
                now = time.time()
                for rowid, job, state, sched_id in rows:
                    last = max(last, rowid)
                    self.seen.setdefault((job, state, str(sched_id)), now)
            self.stop.wait(self.poll)
        if con is not None:
            con.close()


class Appends:
    """Player hook: write time per (job, state, condor id) of the marker lines."""

    def __init__(self) -> None:
        self.written: dict[tuple[str, str, str], float] = {}

    def __call__(self, lines: list[tuple[str, str]], when: float) -> None:
        for _path, line in lines:
            if "Event: ULOG_" not in line:
                continue
            m = MARK.search(line)
            if m is None:
                continue
            self.written.setdefault((m.group(2), m.group(1), m.group(3)), when)


def make_workflow(where: Path, rate: float, seconds: float, seed: int) -> tuple[Path, int]:
    jobs = max(10, int(rate * seconds / LINES_PER_JOB))
    gen = generate(where, jobs, retry_fraction=0.05, seed=seed, name="lat")
    text = gen.dagman_out.read_text(encoding="utf-8")
    # DAGMan's pid: ours, so that the daemon's liveness check finds DAGMan alive.
    gen.dagman_out.write_text(
        re.sub(r"\*\* PID = \d+", f"** PID = {os.getpid()}", text, count=1), encoding="utf-8"
    )
    return gen.submit_dir, gen.expected.jobs


def db_jobs(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM job").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_rate(
    rate: float, seconds: float, work: Path, args: argparse.Namespace, idle: float
) -> RateResult:
    src, jobs = make_workflow(work / f"src-{int(rate)}", rate, seconds, seed=args.seed)
    dest = work / f"run-{int(rate)}"
    actions = plan(scan(str(src)))
    appends = Appends()
    copies = [a for a in actions if isinstance(a, Copy)]
    rest = actions[len(copies) :]
    lines = sum(1 for a in rest if isinstance(a, Append))
    # Where the idle window goes: after half of the lines.
    split = len(rest)
    if idle > 0:
        seen = 0
        for i, a in enumerate(rest):
            seen += isinstance(a, Append)
            if seen >= lines // 2:
                split = i + 1
                break
    first = Player(
        str(src), str(dest), actions=copies + rest[:split], on_flush=appends, lines_per_second=rate
    )
    first.prepare()
    dagman_out = next(p for p in os.listdir(src) if p.endswith(".dag.dagman.out"))
    env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(work / "home")}
    if args.poll:
        env["MONITORD_FORCE_POLLING"] = "1"
    db = dest / "lat-0.stampede.db"
    err = (work / f"daemon-{int(rate)}.err").open("w")
    daemon = subprocess.Popen(
        # The braindump's submit_dir is the (existing) source: name the DB in the copy.
        [
            args.monitord,
            "--no-dashboard",
            *args.daemon_args.split(),
            "-d",
            f"sqlite:///{db}",
            dagman_out,
        ],
        cwd=dest,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
        start_new_session=True,
    )
    spawned = time.monotonic()
    try:
        # Ready: following, with the database created and the static events (every job of
        # the DAG) stored.  What comes before is start-up, reported apart.
        deadline = spawned + 120
        while not (dest / "monitord.recover").exists() or db_jobs(db) < jobs:
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit(f"the daemon did not start (see {err.name})")
            time.sleep(0.02)
        startup = time.monotonic() - spawned
        rows = RowWatcher(db, args.poll_ms / 1000, daemon.pid)
        rows.start()
        t0 = time.monotonic()
        played = first.run().seconds
        result_idle: tuple[float, float] | None = None
        if split < len(rest):
            time.sleep(2.0)  # let it catch up, then measure a quiet daemon
            c0, w0 = session_cpu(daemon.pid), time.monotonic()
            time.sleep(idle)
            c1, w1 = session_cpu(daemon.pid), time.monotonic()
            result_idle = (w1 - w0, c1 - c0)
            second = Player(
                str(src), str(dest), actions=rest[split:], on_flush=appends, lines_per_second=rate
            )
            played += second.run().seconds
        code = daemon.wait(timeout=max(120.0, seconds * 4))
        busy_wall = time.monotonic() - t0 - (result_idle[0] + 2.0 if result_idle else 0.0)
        time.sleep(3 * args.poll_ms / 1000)
        rows.stop.set()
        rows.join()
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
        err.close()
    if code != 0:
        raise SystemExit(f"the daemon exited {code} (see {err.name})")
    total_cpu = rows.cpu  # last sample before the daemon exited
    idle_cpu = result_idle[1] if result_idle else 0.0
    latencies = [
        (rows.seen[key] - t) * 1000 for key, t in appends.written.items() if key in rows.seen
    ]
    missing = sum(1 for key in appends.written if key not in rows.seen)
    res = RateResult(
        rate=rate,
        lines=lines,
        play_seconds=round(played, 2),
        samples=len(latencies),
        missing=missing,
        p50_ms=round(percentile(latencies, 0.50), 1),
        p90_ms=round(percentile(latencies, 0.90), 1),
        p99_ms=round(percentile(latencies, 0.99), 1),
        max_ms=round(max(latencies) if latencies else float("nan"), 1),
        cpu_percent=round(100 * (total_cpu - idle_cpu) / max(busy_wall, 1e-9), 1),
        startup_seconds=round(startup, 2),
        latencies_ms=[round(x, 2) for x in latencies],
    )
    if result_idle:
        res.idle_seconds = round(result_idle[0], 1)
        res.idle_cpu_seconds = round(result_idle[1], 3)
        res.idle_cpu_percent = round(100 * result_idle[1] / result_idle[0], 3)
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rates", default="100,5000", help="dagman.out lines per second")
    p.add_argument("--seconds", default="30,15", help="play time per rate (about)")
    p.add_argument("--idle-seconds", type=float, default=30.0)
    p.add_argument("--poll-ms", type=float, default=5.0, help="database poll period")
    p.add_argument("--poll", action="store_true", help="daemon in polling mode (no inotify)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--monitord", default=str(PROJECT / ".venv" / "bin" / "pegasus-monitord"))
    p.add_argument("--daemon-args", default="", help="extra daemon options, e.g. -v")
    p.add_argument("--workdir")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--json")
    args = p.parse_args(argv)
    rates = [float(x) for x in args.rates.split(",")]
    secs = [float(x) for x in args.seconds.split(",")]
    secs += [secs[-1]] * (len(rates) - len(secs))
    work = Path(args.workdir or tempfile.mkdtemp(prefix="latency-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "home").mkdir(exist_ok=True)
    slowest = min(rates)
    results = []
    try:
        for rate, seconds in zip(rates, secs, strict=True):
            idle = args.idle_seconds if rate == slowest else 0.0
            results.append(run_rate(rate, seconds, work, args, idle))
            print(f"rate {rate:g} lines/s done", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    mode = "polling" if args.poll else "inotify"
    print(
        f"\nlatency: line appended to dagman.out -> jobstate row queryable ({mode}, "
        f"DB polled every {args.poll_ms:g} ms)"
    )
    print(
        "| lines/s | achieved | lines | samples | p50 ms | p90 ms | p99 ms | max ms "
        "| daemon CPU % | start-up s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.rate:,.0f} | {r.lines / r.play_seconds:,.0f} | {r.lines:,} | {r.samples:,} | {r.p50_ms} | {r.p90_ms} | "
            f"{r.p99_ms} | {r.max_ms} | {r.cpu_percent} | {r.startup_seconds} |"
        )
    for r in results:
        if r.missing:
            print(f"WARNING: {r.missing} marker lines at {r.rate:g} lines/s never reached the DB")
        if r.idle_seconds:
            print(
                f"\nidle: {r.idle_cpu_seconds} CPU s over {r.idle_seconds} s of a sleeping "
                f"workflow = {r.idle_cpu_percent} % of one core (daemon + sink processes)"
            )
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 1 if any(r.missing for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
