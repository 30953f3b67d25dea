"""Peak memory against the length of dagman.out, for a fixed workflow.

Generates one synthetic workflow, then a copy whose dagman.out carries the
same events diluted in K times more of the noise DAGMan prints (progress
tables, runtime statistics, "Currently monitoring" lines), and replays both
with our daemon. A flat peak RSS means memory is bounded by the workflow's
jobs, not by how long its log is.

    .venv/bin/python bench/memory_bench.py --jobs 2000 --factors 1,10,40

Two tools for memory against the job count, on a workflow you generated (replay a copy):

    # peak RSS (VmHWM) of the command and of each process it starts (the SQL child)
    TZ=UTC .venv/bin/python bench/memory_bench.py --peaks -- .venv/bin/python -m monitord.cli \\
        replay -q --no-dashboard DIR/synthetic-0.dag.dagman.out
    # Python's allocations at the end of the feed (one process: --sql-thread), then what grew
    TZ=UTC .venv/bin/python bench/memory_bench.py --trace t20k.snap -- \\
        replay -q --no-dashboard --sql-thread DIR/synthetic-0.dag.dagman.out
    .venv/bin/python bench/memory_bench.py --compare t20k.snap t100k.snap
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
from typing import Any

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


def _hwm_mb(pid: int) -> tuple[str, float] | None:
    """A process's title (its ``comm``) and peak RSS so far (VmHWM, MB), or None once gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            status = fh.read()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if "VmHWM" not in fields:
        return None
    return fields["Name"].strip(), int(fields["VmHWM"].split()[0]) / 1024


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (``/proc/<pid>/task/*/children``)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
    return found


def peaks(cmd: list[str]) -> int:
    """Run ``cmd``; print each of its processes' peak RSS (VmHWM sampled every 0.1 s: a
    child's last sample may be up to 0.1 s before it ends), wall and CPU of all of them."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd)
    seen: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        for pid in _descendants(proc.pid):
            got = _hwm_mb(pid)
            if got is not None:
                seen[pid] = got
        time.sleep(0.1)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = {
        "rc": proc.returncode,
        "wall": round(wall, 2),
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
    }
    line["maxrss_mb"] = round(usage.ru_maxrss / 1024, 1)
    line["peaks_mb"] = {f"{name}:{pid}": round(mb, 1) for pid, (name, mb) in seen.items()}
    print(json.dumps(line), flush=True)
    return proc.returncode


def trace(out: str, argv: list[str]) -> int:
    """``monitord`` with ``argv`` in this process, tracemalloc on; at the end of the feed
    (``Monitor.replay_all`` returned, before the sinks close) its snapshot goes to ``out``."""
    import tracemalloc

    tracemalloc.start()
    from monitord.cli import main as monitord_main
    from monitord.daemon.monitor import Monitor

    replay_all = Monitor.replay_all

    async def then_snapshot(self: Any, stop: Any = None) -> None:
        await replay_all(self, stop)
        tracemalloc.take_snapshot().dump(out)
        now, peak = tracemalloc.get_traced_memory()
        print(
            f"traced at the feed's end {now / 1e6:.1f} MB (peak {peak / 1e6:.1f} MB)",
            file=sys.stderr,
        )

    Monitor.replay_all = then_snapshot  # type: ignore[method-assign]
    return monitord_main(argv)


def compare(old: str, new: str, top: int = 30) -> int:
    """What grew from snapshot ``old`` to ``new``, by the line that allocated it."""
    import tracemalloc

    a, b = tracemalloc.Snapshot.load(old), tracemalloc.Snapshot.load(new)
    total = [sum(t.size for t in snap.traces) / 1e6 for snap in (a, b)]
    print(f"traced {total[0]:.1f} -> {total[1]:.1f} MB")
    for stat in b.compare_to(a, "lineno")[:top]:
        frame = stat.traceback[0]
        print(
            f"{stat.size_diff / 1e6:+8.2f} MB {stat.count_diff:+9d} blocks "
            f"(now {stat.size / 1e6:6.2f} MB)  {frame.filename}:{frame.lineno}"
        )
    return 0


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--peaks"]:
        return peaks(argv[2:] if argv[1:2] == ["--"] else argv[1:])
    if argv[:1] == ["--trace"]:
        return trace(argv[1], argv[3:] if argv[2:3] == ["--"] else argv[2:])
    if argv[:1] == ["--compare"]:
        return compare(argv[1], argv[2])
    return growth()


def growth() -> int:
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
