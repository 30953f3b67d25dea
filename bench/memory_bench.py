"""Peak memory against the length of dagman.out, for a fixed workflow.

Generates one synthetic workflow, then a copy whose dagman.out carries the
same events diluted in K times more of the noise DAGMan prints (progress
tables, runtime statistics, "Currently monitoring" lines), and replays both
with our daemon. A flat peak RSS means memory is bounded by the workflow's
jobs, not by how long its log is.

    .venv/bin/python bench/memory_bench.py --jobs 2000 --factors 1,10,40
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from monitord.tools.synthetic import generate  # noqa: E402

NOISE = (
    "{t} Currently monitoring 1 HTCondor log file(s)\n"
    "{t} DAG status: 0 (DAG_STATUS_OK)\n"
    "{t} Of 2000 nodes total:\n"
    "{t}  Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile\n"
    "{t}   ===     ===      ===     ===     ===        ===      ===      ===\n"
    "{t}   100       0       10       0       0       1890        0        0\n"
    "{t} 0 job proc(s) currently held\n"
    "{t} DAGMan Runtime Statistics: [ EventCycleTimeAvg = 0.004; EventCycleTimeCount = 3.0; ]\n"
)


def dilute(src: Path, dst: Path, factor: int) -> int:
    """Copy dagman.out, adding ``factor - 1`` noise blocks after each line; returns the line count."""
    lines = 0
    with src.open(encoding="utf-8") as fin, dst.open("w", encoding="utf-8") as fout:
        for line in fin:
            fout.write(line)
            lines += 1
            stamp = line[:17]
            if factor > 1 and stamp[2:3] == "/":
                block = NOISE.format(t=stamp)
                fout.write(block * (factor - 1))
                lines += block.count("\n") * (factor - 1)
    return lines


def replay(run: Path, dagman_out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one replay, measured in a launcher process."""
    launcher = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.call(sys.argv[1:])\n"
        "w = time.perf_counter() - t\n"
        "print(rc, w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(run.parent / "home")}
    cmd = [
        sys.executable,
        "-c",
        launcher,
        str(PROJECT / ".venv" / "bin" / "pegasus-monitord"),
        "-r",
        "-f",
        "-d",
        f"sqlite:///{run}/bench.db",
        str(dagman_out),
    ]
    out = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, check=True).stdout
    rc, wall, rss = out.split()[-3:]
    if rc != "0":
        raise SystemExit(f"replay failed in {run}")
    return float(wall), int(rss) / 1024


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--factors", default="1,10,40", help="dilution factors of dagman.out")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--json")
    args = p.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="monitord-mem-") as tmp:
        for factor in (int(f) for f in args.factors.split(",")):
            base = Path(tmp) / f"x{factor}"
            (base / "home").mkdir(parents=True)
            gen = generate(base / "run", args.jobs, seed=args.seed)
            dagman_out = Path(gen.dagman_out)
            original = dagman_out.with_suffix(".orig")
            shutil.move(dagman_out, original)
            lines = dilute(original, dagman_out, factor)
            original.unlink()
            size = dagman_out.stat().st_size / 1e6
            wall, rss = replay(Path(gen.submit_dir), dagman_out)
            results.append(
                {
                    "jobs": args.jobs,
                    "factor": factor,
                    "lines": lines,
                    "mb": size,
                    "wall_s": wall,
                    "peak_rss_mb": rss,
                }
            )
            print(
                f"jobs={args.jobs} dilution={factor:>3}x dagman.out={lines:>9} lines {size:8.1f} MB  "
                f"wall={wall:6.2f} s  peak RSS={rss:6.1f} MB",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(
        f"({time.perf_counter() - started:.0f} s; RUSAGE_SELF {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)"
    )
    raise SystemExit(status)
