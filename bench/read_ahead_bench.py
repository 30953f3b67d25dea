"""``--read-ahead`` against the replay without it (issue 30, jobpar30): wall, CPU, peak RSS.

Each round replays the workflow once per side, in turn (``bench/alternate.py``); a side's
figure is the median of its rounds.  CPU is every process's: the daemon's rusage as its
parent sees it (``os.wait4``: its own and its children's that it waited for, the read-ahead
worker and any ``--sql-process`` child), and the worker's own, which it reports in the
daemon's ``read-ahead`` log line; the daemon's process is the difference.

    .venv/bin/python bench/read_ahead_bench.py --dir /tmp/w20k --rounds 3
    .venv/bin/python bench/read_ahead_bench.py --dir /tmp/w20k --sql-process
    .venv/bin/python bench/read_ahead_bench.py --dir /tmp/w20k --pickle-cost
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from alternate import alternate, options

ROOT = Path(__file__).resolve().parent.parent


def replay(wf: Path, extra: list[str], db: Path) -> dict[str, Any]:
    """One replay into ``db``: wall, CPU of every process, peak RSS (MiB)."""
    db.unlink(missing_ok=True)
    dagman_out = next(wf.glob("*.dag.dagman.out"))
    cmd = [str(ROOT / ".venv/bin/monitord"), "replay", str(dagman_out)]
    cmd += ["-d", f"sqlite:///{db}", "--no-dashboard", "-v", *extra]
    env = {**os.environ, "TZ": "America/Los_Angeles"}
    began = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - began
    if proc.returncode != 0:
        sys.exit(f"{cmd}: exit {proc.returncode}\n{err[-2000:]}")
    total = usage.ru_utime + usage.ru_stime
    worker = re.search(r"worker_cpu=([\d.]+)", err)
    worker_rss = re.search(r"worker_rss=(\d+)", err)
    return {
        "wall": wall,
        "cpu": total,
        "worker_cpu": float(worker[1]) if worker else 0.0,
        "daemon_cpu": total - (float(worker[1]) if worker else 0.0),
        "rss_mib": usage.ru_maxrss / 1024,
        "worker_rss_mib": int(worker_rss[1]) / 1024 if worker_rss else 0.0,
    }


def pickle_cost(wf: Path) -> None:
    """In this process: the worker's reading and parsing, and its results' pickling."""
    import pickle

    from monitord.daemon.readahead import Plan, _messages

    plan = Plan(str(next(wf.glob("*.dag.dagman.out"))), store_stdout=True)
    t0 = time.process_time()
    batches = [m for m in _messages(plan) if type(m) is list]  # the job files' (no zone: no lines)
    t1 = time.process_time()
    blobs = [pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL) for b in batches]
    t2 = time.process_time()
    for blob in blobs:
        pickle.loads(blob)
    t3 = time.process_time()
    files = sum(len(b) for b in batches)
    size = sum(map(len, blobs)) / 1e6
    print(f"{files} files: read+parse {t1 - t0:.2f} s, dumps {t2 - t1:.2f} s, "
          f"loads {t3 - t2:.2f} s, {size:.1f} MB")  # fmt: skip


def main() -> None:
    p = options(__doc__, "unused", rounds=3)
    p.add_argument("--sql-process", action="store_true", help="both sides with --sql-process")
    p.add_argument("--pickle-cost", action="store_true", help="time the results' pickling only")
    args = p.parse_args()
    if args.pickle_cost:
        pickle_cost(args.dir)
        return
    base = ["--sql-process"] if args.sql_process else []
    db = Path(f"/tmp/read-ahead-bench-{os.getpid()}.db")
    sides = {
        "off": lambda: replay(args.dir, base, db),
        "on": lambda: replay(args.dir, [*base, "--read-ahead"], db),
    }
    got = alternate(sides, args.rounds)
    db.unlink(missing_ok=True)
    keys = ("wall", "cpu", "daemon_cpu", "worker_cpu", "rss_mib", "worker_rss_mib")
    print(f"{'side':6}" + "".join(f"{k:>16}" for k in keys))
    for side, runs in got.items():
        row = "".join(f"{statistics.median(r[k] for r in runs):16.2f}" for k in keys)
        print(f"{side + (' +sql' if base else ''):6}{row}")
        for r in runs:
            print("      " + "".join(f"{r[k]:16.2f}" for k in keys))


if __name__ == "__main__":
    main()
