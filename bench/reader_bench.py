"""What a reader of the SQLite workflow database waits for while the live daemon writes.

A synthetic workflow (default 20,000 jobs, ``monitord/tools/synthetic``) is played into a fresh
directory at ``--rate`` dagman.out lines/s (default 5,000) with ``monitord/tools/player``
while a live ``pegasus-monitord`` (crash resume on: snapshots in a scratch state dir, delivery
marks in the database) follows it into its SQLite database.  Every ``--every-ms`` ms (200) a
reader runs, in ONE read transaction, what a status display asks: the job instance counts per
latest state, the latest state of every job instance, and every workflow's latest state.

Printed: the reader's wait per read (BEGIN to COMMIT: lock waits included) as p50/p95/max,
the reads that failed with ``database is locked`` (the reader's busy timeout is
``--busy-ms``), and the daemon's lag behind the last line written: the lines written but not
yet checkpointed (``monitord.recover``'s line: every event of those lines is committed),
sampled at each read, and the catch-up time from the last line written to the daemon's exit.

    .venv/bin/python bench/reader_bench.py [--jobs 20000] [--rate 5000] [--every-ms 200]
        [--busy-ms 5000] [--seed 1] [--no-resume] [--workdir DIR] [--keep] [--json FILE]
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
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from monitord.tools.player import Player  # noqa: E402
from monitord.tools.synthetic import generate  # noqa: E402

LATEST = (
    "SELECT js.job_instance_id, js.state FROM jobstate js JOIN ("
    " SELECT job_instance_id, MAX(jobstate_submit_seq) AS seq FROM jobstate"
    " GROUP BY job_instance_id) last"
    " ON js.job_instance_id = last.job_instance_id AND js.jobstate_submit_seq = last.seq"
)
QUERIES = (
    f"SELECT state, COUNT(*) FROM ({LATEST}) GROUP BY state",  # state counts
    LATEST,  # the latest state of every job instance
    "SELECT ws.wf_id, ws.state, ws.timestamp FROM workflowstate ws JOIN ("
    " SELECT wf_id, MAX(timestamp) AS ts FROM workflowstate GROUP BY wf_id) last"
    " ON ws.wf_id = last.wf_id AND ws.timestamp = last.ts",  # the workflow state
)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Reader(threading.Thread):
    """One read transaction every ``every`` seconds; its wait, locked errors, the lag."""

    def __init__(self, db: Path, every: float, busy: float, lag: object) -> None:
        super().__init__(name="reader", daemon=True)
        self.db, self.every, self.busy, self.lag_of = db, every, busy, lag
        self.waits: list[float] = []
        self.locked = 0
        self.other_errors: list[str] = []
        self.lags: list[int] = []
        self.rows = 0
        self.stop = threading.Event()

    def run(self) -> None:
        con: sqlite3.Connection | None = None
        while not self.stop.wait(self.every):
            if con is None:
                if not self.db.exists():
                    continue
                con = sqlite3.connect(str(self.db), timeout=self.busy, isolation_level=None)
            started = time.perf_counter()
            try:
                con.execute("BEGIN")
                rows = [con.execute(q).fetchall() for q in QUERIES]
                con.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                if "locked" in str(exc) or "busy" in str(exc):
                    self.locked += 1
                elif "no such table" not in str(exc):  # the schema is being created
                    self.other_errors.append(str(exc))
                continue
            self.waits.append((time.perf_counter() - started) * 1000)
            self.rows = len(rows[1])
            lag = self.lag_of()  # type: ignore[operator]
            if lag is not None:
                self.lags.append(lag)
        if con is not None:
            con.close()


def checkpoint_line(run_dir: Path) -> int | None:
    """The dagman.out line up to which every event is committed (monitord.recover; None once
    the daemon has ended)."""
    try:
        text = (run_dir / "monitord.recover").read_text()
    except OSError:
        return None
    m = re.search(r"line_processed (\d+)", text)
    return int(m.group(1)) if m else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--jobs", type=int, default=20000)
    p.add_argument("--rate", type=float, default=5000.0, help="dagman.out lines per second")
    p.add_argument("--every-ms", type=float, default=200.0, help="one read every ... ms")
    p.add_argument("--busy-ms", type=float, default=5000.0, help="the reader's busy timeout")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--no-resume",
        action="store_true",
        help="the daemon without crash resume (no snapshots, no delivery marks): for comparison",
    )
    p.add_argument("--monitord", default=str(PROJECT / ".venv" / "bin" / "pegasus-monitord"))
    p.add_argument("--workdir")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--json")
    args = p.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="reader-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, work: Path) -> int:
    t = time.monotonic()
    gen = generate(work / "src", args.jobs, retry_fraction=0.05, seed=args.seed, name="rd")
    text = gen.dagman_out.read_text(encoding="utf-8")  # DAGMan's pid: ours (liveness check)
    gen.dagman_out.write_text(
        re.sub(r"\*\* PID = \d+", f"** PID = {os.getpid()}", text, count=1), encoding="utf-8"
    )
    print(f"generated {args.jobs} jobs in {time.monotonic() - t:.0f} s", file=sys.stderr)
    dest = work / "run"
    written = [0]
    last_write = [0.0]

    def on_flush(lines: list[tuple[str, str]], _t: float) -> None:
        written[0] += sum(1 for path, _ in lines if path.endswith(gen.dagman_out.name))
        last_write[0] = time.monotonic()

    player = Player(str(gen.submit_dir), str(dest), lines_per_second=args.rate, on_flush=on_flush)
    player.prepare()
    db = dest / "rd-0.stampede.db"
    env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(work / "home")}
    state = work / "state"
    if args.no_resume:  # a state dir others may write: the daemon keeps no snapshots there
        state.mkdir(mode=0o777)
        state.chmod(0o777)
    cmd = [args.monitord, "--no-dashboard", "--state-dir", str(state)]
    err = (work / "daemon.err").open("w")
    daemon = subprocess.Popen(
        [*cmd, "-d", f"sqlite:///{db}", gen.dagman_out.name],
        cwd=dest,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
        start_new_session=True,
    )

    def lag() -> int | None:
        line = checkpoint_line(dest)
        return None if line is None else written[0] - line

    reader = Reader(db, args.every_ms / 1000, args.busy_ms / 1000, lag)
    try:
        deadline = time.monotonic() + 600
        while not (dest / "monitord.recover").exists():  # following (the static events stored)
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit(f"the daemon did not start (see {err.name})")
            time.sleep(0.05)
        reader.start()
        played = player.run().seconds
        code = daemon.wait(timeout=3600)
        catch_up = time.monotonic() - last_write[0]
        reader.stop.set()
        reader.join()
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
        err.close()
    if code != 0:
        raise SystemExit(f"the daemon exited {code} (see {err.name})")
    lags = reader.lags
    result = {
        "jobs": args.jobs,
        "lines": written[0],
        "rate_asked": args.rate,
        "rate_achieved": round(written[0] / played, 0),
        "reads": len(reader.waits),
        "wait_p50_ms": round(percentile(reader.waits, 0.50), 1),
        "wait_p95_ms": round(percentile(reader.waits, 0.95), 1),
        "wait_max_ms": round(max(reader.waits, default=float("nan")), 1),
        "locked_errors": reader.locked,
        "other_errors": reader.other_errors[:5],
        "lag_lines_p50": percentile([float(x) for x in lags], 0.50),
        "lag_lines_p95": percentile([float(x) for x in lags], 0.95),
        "lag_lines_max": max(lags, default=0),
        "catch_up_seconds": round(catch_up, 2),
        "job_instances_last_read": reader.rows,
    }
    print(
        f"\nreader of the SQLite DB while the live daemon "
        f"({'crash resume off' if args.no_resume else 'crash resume on'}) follows {args.jobs:,} jobs "
        f"({written[0]:,} dagman.out lines at {result['rate_achieved']:,.0f} lines/s, "
        f"one read transaction every {args.every_ms:g} ms):"
    )
    print(
        f"  wait p50 {result['wait_p50_ms']} ms, p95 {result['wait_p95_ms']} ms, "
        f"max {result['wait_max_ms']} ms over {result['reads']} reads; "
        f"locked errors: {reader.locked}"
    )
    print(
        f"  daemon lag behind the last line written: p50 {result['lag_lines_p50']:.0f}, "
        f"p95 {result['lag_lines_p95']:.0f}, max {result['lag_lines_max']} lines "
        f"(p95 {result['lag_lines_p95'] / args.rate:.2f} s at the asked rate); "
        f"catch-up after the last line: {result['catch_up_seconds']} s"
    )
    if reader.other_errors:
        print(f"  other errors: {reader.other_errors[:3]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
