#!/usr/bin/env python3
"""A replay with mypyc-compiled core modules against the same sources pure (issue 30).

Each side is a copy of the project's packages (``--tree NAME=DIR``, repeated): one as it is,
one with ``scripts/compile.sh`` run in it (extension modules beside the sources, which Python
imports before the ``.py``). Every round replays a fresh copy of ``--dir`` once per side, in
turn, with ``PYTHONPATH`` on the side's tree; per side: the medians of wall and CPU seconds
(the daemon's ``RUSAGE_CHILDREN``), and the table row counts, which must be equal.

    .venv/bin/python bench/mypyc_bench.py --dir /tmp/mypyc30/w20k \\
        --tree pure=/tmp/mypyc30/pure --tree compiled=/tmp/mypyc30/src --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

CODE = "import sys; from monitord.cli import pegasus_main; sys.exit(pegasus_main())"
TABLES = ("job", "job_instance", "jobstate", "invocation", "host", "task", "workflowstate")


def rows(run: Path) -> dict[str, int]:
    """The row count of each table of the replay's stampede database."""
    db = next(run.glob("*.stampede.db"))
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def replay(tree: Path, src: Path, work: Path) -> tuple[float, float, dict[str, int]]:
    """Wall and CPU seconds of one replay of a fresh copy of ``src`` importing from ``tree``."""
    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(src, run, symlinks=True)
    (work / "home").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "TZ": "America/Los_Angeles"}
    env["HOME"] = str(work / "home")
    dagman_out = next(run.glob("*.dag.dagman.out")).name
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CODE, "-r", dagman_out], cwd=run, env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, rows(run)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, required=True, help="a generated workflow's submit dir")
    p.add_argument("--tree", action="append", required=True, help="NAME=DIR, one per side")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", type=Path, default=Path("/tmp/mypyc_bench"))
    args = p.parse_args()
    sides = dict(t.split("=", 1) for t in args.tree)
    got: dict[str, list[tuple[float, float, dict[str, int]]]] = {s: [] for s in sides}
    for n in range(args.rounds):
        for side, tree in sides.items():
            got[side].append(replay(Path(tree), args.dir, args.work / side))
            wall, cpu, _ = got[side][-1]
            print(f"round {n + 1} {side}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
    counts = {side: runs[0][2] for side, runs in got.items()}
    for side, runs in got.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"{side}: median wall {wall:.2f} s, median cpu {cpu:.2f} s, rows {runs[0][2]}")
    same = all(r[2] == counts[side] for side, runs in got.items() for r in runs)
    same = same and len({tuple(c.items()) for c in counts.values()}) == 1
    print("row counts identical" if same else "ROW COUNTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
