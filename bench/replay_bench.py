#!/usr/bin/env python3
"""Side-by-side replay benchmark: our pegasus-monitord against the reference 5.1.3.

For each workflow size a synthetic submit directory (``monitord.tools.synthetic``) is
generated afresh for each replay with the same seed, so every daemon replays an
identical, self-contained copy (``-r <wf>.dag.dagman.out``) with
TZ=America/Los_Angeles and a scratch HOME.
Each run happens under a tiny launcher process whose ``RUSAGE_CHILDREN`` covers
exactly that daemon and its descendants, so the peak RSS is per run, not the
maximum over everything this script ever started.

Reported per run: wall time, peak RSS, jobs/s, DB rows/s (rows of the Stampede
tables in the resulting DB), and events/s, where the event count is the number
of lines of a BP stream written by one extra ``-d file://...`` run of ours.

    python bench/replay_bench.py --jobs 1000,5000 --json out.json
    python bench/replay_bench.py --no-reference --jobs 20000
    python bench/replay_bench.py --old main --no-reference --jobs 20000 --rounds 3

``--old REV`` adds a side "old": the daemon of commit REV, checked out in a temporary
``git worktree`` and run with this venv's interpreter and packages (``PYTHONPATH`` puts the
old tree first, so the old code is what is imported, its sink processes included).  The
current tree is then run the same way, so the two differ only in the code.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitord.tools.synthetic import Generated, generate  # noqa: E402

STAMPEDE_TABLES = (
    "workflow", "workflowstate", "workflow_meta", "workflow_files", "job", "job_edge",
    "job_instance", "jobstate", "task", "task_edge", "task_meta", "invocation", "host",
    "integrity", "tag", "rc_lfn", "rc_pfn", "rc_meta",
)  # fmt: skip

# Runs argv, then reports wall time and the peak RSS and CPU of argv's process tree.  The
# launcher is the tree's subreaper: a helper the daemon leaves to exit on its own (the
# forkserver, the resource tracker) is reaped here, so its CPU counts too.
_LAUNCHER = """
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
out_path, argv = sys.argv[1], sys.argv[2:]
with open(out_path + ".log", "wb") as log:
    t0 = time.perf_counter()
    rc = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out_path, "w") as fh:
    json.dump({"rc": rc, "wall": wall, "maxrss_kb": ru.ru_maxrss,
               "user": ru.ru_utime, "sys": ru.ru_stime}, fh)
"""


@dataclass(frozen=True)
class Side:
    """One daemon under test: its label, command line and extra environment."""

    name: str
    cmd: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Run:
    side: str
    jobs: int
    rc: int
    wall_s: float
    peak_rss_mb: float
    cpu_s: float
    db_rows: int
    table_rows: dict[str, int] = field(default_factory=dict)
    events: int | None = None
    log: str = ""

    @property
    def jobs_per_s(self) -> float:
        return self.jobs / self.wall_s if self.wall_s else 0.0

    @property
    def rows_per_s(self) -> float:
        return self.db_rows / self.wall_s if self.wall_s else 0.0


def default_ours_cmd() -> list[str]:
    return [str(ROOT / ".venv" / "bin" / "pegasus-monitord")]


def reference_cmd(python: Path, script: Path | None) -> list[str] | None:
    """The reference daemon's command line, or None when it is not installed."""
    if not python.exists():
        return None
    if script is None:
        found = sorted(
            python.parent.parent.glob("lib/python3*/site-packages/Pegasus/cli/pegasus-monitord.py")
        )
        if not found:
            return None
        script = found[-1]
    return [str(python), str(script)]


def count_rows(run_dir: Path) -> dict[str, int]:
    dbs = sorted(run_dir.glob("*.stampede.db"))
    if not dbs:
        return {}
    con = sqlite3.connect(f"file:{dbs[0]}?mode=ro", uri=True)
    try:
        counts = {}
        for table in STAMPEDE_TABLES:
            try:
                counts[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            except sqlite3.Error:
                pass
        return counts
    finally:
        con.close()


def source_cmd(tree: Path) -> tuple[list[str], dict[str, str]]:
    """pegasus-monitord of the source tree ``tree``, run with this venv's interpreter."""
    code = "import sys; from monitord.cli import pegasus_main; sys.exit(pegasus_main())"
    python = ROOT / ".venv" / "bin" / "python"
    return [str(python), "-c", code], {"PYTHONPATH": str(tree)}


def old_tree(rev: str, work: Path) -> Path:
    """A detached worktree of ``rev`` under ``work`` (removed by :func:`drop_old_tree`)."""
    tree = work / "old-src"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True
    )
    return tree


def compile_tree(tree: Path) -> None:
    """Byte-compile a source tree, as ``pip install`` does: no replay compiles modules."""
    dirs = [str(tree / d) for d in ("monitord", "sinks", "notifications") if (tree / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=False)


def drop_old_tree(tree: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
    )


def launch(
    cmd: list[str],
    run_dir: Path,
    home: Path,
    result: Path,
    timeout: float | None,
    env_extra: dict[str, str] | None = None,
) -> dict:
    env = dict(os.environ, TZ="America/Los_Angeles", HOME=str(home), **(env_extra or {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their .pyc
    home.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", _LAUNCHER, str(result), *cmd],
        cwd=run_dir,
        env=env,
        timeout=timeout,
        check=True,
    )
    return json.loads(result.read_text())


def fresh_copy(args: argparse.Namespace, jobs: int, run_dir: Path) -> Generated:
    """Generate the workflow in place for one replay.

    Same seed, same content; only the paths differ.  Copying one template would
    leave its path in braindump ``submit_dir``, and a daemon that puts its DB
    there (as both may when that directory exists) would write into the template.
    """
    shutil.rmtree(run_dir.parent, ignore_errors=True)
    return generate(
        run_dir, jobs, seed=args.seed, retry_fraction=args.retry_fraction, name=args.name
    )


def replay(
    side: Side, args: argparse.Namespace, jobs: int, work: Path, count_events: bool
) -> tuple[Run, Generated]:
    """Replay a freshly generated copy of the workflow with the side's daemon."""
    run_dir = work / side.name / "run"
    gen = fresh_copy(args, jobs, run_dir)
    dagman_out = gen.dagman_out.name
    res = launch(
        [*side.cmd, "-r", dagman_out],
        run_dir,
        work / side.name / "home",
        work / side.name / "rusage.json",
        args.timeout,
        side.env,
    )
    rows = count_rows(run_dir)
    run = Run(
        side=side.name,
        jobs=gen.expected.jobs,
        rc=res["rc"],
        wall_s=res["wall"],
        peak_rss_mb=res["maxrss_kb"] / 1024,
        cpu_s=res["user"] + res["sys"],
        db_rows=sum(rows.values()),
        table_rows=rows,
        log=str(work / side.name / "rusage.json.log"),
    )
    if count_events:
        bp_dir = work / "ours-bp" / "run"
        fresh_copy(args, jobs, bp_dir)
        bp = bp_dir.parent / "events.bp"
        launch(
            [*side.cmd, "-r", dagman_out, "-d", f"file://{bp}"],
            bp_dir,
            bp_dir.parent / "home",
            bp_dir.parent / "rusage.json",
            args.timeout,
            side.env,
        )
        if bp.exists():
            with bp.open("rb") as fh:
                run.events = sum(1 for _ in fh)
        if not args.keep:
            shutil.rmtree(bp_dir.parent, ignore_errors=True)
    return run, gen


def check_counts(run: Run, gen: Generated) -> list[str]:
    """Differences between a run's DB and what the generator knows it must contain."""
    want = {
        "job": gen.expected.jobs,
        "job_instance": gen.expected.job_instances,
        "jobstate": gen.expected.jobstates,
        "invocation": gen.expected.invocations,
        "workflowstate": gen.expected.workflowstates,
        "task": gen.expected.tasks,
    }
    return [
        f"{table}: {run.table_rows.get(table)} rows, expected {n}"
        for table, n in want.items()
        if run.table_rows.get(table) != n
    ]


def print_table(results: list[dict]) -> None:
    head = (
        f"{'jobs':>7} {'side':<14} {'rc':>3} {'wall s':>9} {'peak MB':>8} {'cpu s':>8} "
        f"{'jobs/s':>9} {'rows/s':>10} {'events/s':>10} {'speed-up':>9}"
    )
    print(head)
    print("-" * len(head))
    for entry in results:
        for run in entry["runs"]:
            ev = run["events_per_s"]
            print(
                f"{entry['jobs']:>7} {run['side']:<14} {run['rc']:>3} {run['wall_s']:>9.2f} "
                f"{run['peak_rss_mb']:>8.1f} {run['cpu_s']:>8.2f} {run['jobs_per_s']:>9.1f} "
                f"{run['rows_per_s']:>10.1f} {'-' if ev is None else f'{ev:.1f}':>10}"
            )
        for side, med in entry["medians"].items():
            speed = entry["speedup"].get(side)
            print(
                f"{entry['jobs']:>7} {side + ' median':<14} {'':>3} {med['wall_s']:>9.2f} "
                f"{med['peak_rss_mb']:>8.1f} {med['cpu_s']:>8.2f} {'':>9} {'':>10} {'':>10} "
                f"{'-' if speed is None else f'{speed:.1f}x':>9}"
            )
        for note in entry["notes"]:
            print(f"        note: {note}")


def medians(runs: list[Run]) -> dict[str, dict[str, float]]:
    """Per side: the median wall, CPU and peak RSS of its rounds."""
    out: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(r.side for r in runs):
        mine = [r for r in runs if r.side == name]
        out[name] = {
            key: statistics.median(getattr(r, key) for r in mine)
            for key in ("wall_s", "cpu_s", "peak_rss_mb")
        }
    return out


def bench_one(jobs: int, args: argparse.Namespace, sides: list[Side], work: Path) -> dict:
    """``args.rounds`` rounds; in each, every side replays its own fresh copy, in turn."""
    runs: list[Run] = []
    notes: list[str] = []
    events: int | None = None
    for round_no in range(args.rounds):
        for side in sides:
            print(f"  round {round_no + 1}: replaying with {side.name} ...", file=sys.stderr)
            count = args.events and events is None and side.name == "ours"
            run, gen = replay(side, args, jobs, work / f"n{jobs}", count)
            events = run.events if count else events
            print(
                f"    {jobs} jobs ({gen.expected.job_instances} instances) generated in "
                f"{gen.seconds:.1f}s, replayed in {run.wall_s:.1f}s",
                file=sys.stderr,
            )
            runs.append(run)
            if run.rc != 0:
                notes.append(f"{side.name} exited {run.rc}; log: {run.log}")
            notes += [f"{side.name} {diff}" for diff in check_counts(run, gen)]
    for run in runs:
        run.events = events
    med = medians(runs)
    entry: dict = {
        "jobs": jobs,
        "seed": args.seed,
        "job_instances": gen.expected.job_instances,
        "generate_s": round(gen.seconds, 3),
        "runs": [
            {
                **{k: v for k, v in asdict(r).items() if k != "table_rows"},
                "jobs_per_s": r.jobs_per_s,
                "rows_per_s": r.rows_per_s,
                "events_per_s": (events / r.wall_s) if events and r.wall_s else None,
                "table_rows": r.table_rows,
            }
            for r in runs
        ],
        "medians": med,
        # Median wall of the slower sides over ours: the reference's and the old commit's.
        "speedup": {
            side: med[side]["wall_s"] / med["ours"]["wall_s"]
            for side in med
            if side != "ours" and "ours" in med and med["ours"]["wall_s"] > 0
        },
        "notes": notes,
    }
    if not args.keep:
        shutil.rmtree(work / f"n{jobs}", ignore_errors=True)
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--jobs", default="2000", help="workflow size(s), comma-separated (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retry-fraction", type=float, default=0.05)
    parser.add_argument("--name", default="synthetic", help="workflow label")
    parser.add_argument(
        "--ours-cmd",
        default=None,
        help="our daemon's command (shell-split; default <project>/.venv/bin/pegasus-monitord)",
    )
    parser.add_argument(
        "--old",
        metavar="REV",
        default=None,
        help="also replay with the daemon of commit REV (a temporary git worktree)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="replays per side, alternating (medians shown)"
    )
    parser.add_argument(
        "--reference-python",
        type=Path,
        default=Path(os.environ.get("MONITORD_ORACLE_VENV", "/work/oracle-venv")) / "bin/python",
    )
    parser.add_argument(
        "--reference-script",
        type=Path,
        default=None,
        help="pegasus-monitord.py of the reference (default: found in its venv)",
    )
    parser.add_argument("--no-reference", action="store_true", help="benchmark ours only")
    parser.add_argument(
        "--no-events",
        dest="events",
        action="store_false",
        help="skip the extra BP run that counts events",
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per replay")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="scratch dir (default: a temp dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated and replayed dirs")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = parser.parse_args(argv)  # fmt: skip

    try:
        sizes = [int(s) for s in args.jobs.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--jobs wants integers, got {args.jobs!r}")
    if args.ours_cmd:
        ours = Side("ours", shlex.split(args.ours_cmd))
    elif args.old:
        ours = Side("ours", *source_cmd(ROOT))  # run as the old side is, for a fair comparison
    else:
        ours = Side("ours", default_ours_cmd())
    if not shutil.which(ours.cmd[0]) and not Path(ours.cmd[0]).exists():
        parser.error(f"our daemon not found: {ours.cmd[0]} (use --ours-cmd)")
    sides = [ours]
    if not args.no_reference:
        ref = reference_cmd(args.reference_python, args.reference_script)
        if ref is None:
            print(f"reference not found at {args.reference_python}: skipping it", file=sys.stderr)
        else:
            sides.append(Side("reference", ref))

    work = args.workdir or Path(tempfile.mkdtemp(prefix="replay-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = None
    results = []
    compile_tree(ROOT)
    try:
        if args.old:
            tree = old_tree(args.old, work)
            compile_tree(tree)
            sides.insert(0, Side("old", *source_cmd(tree)))
        for jobs in sizes:
            results.append(bench_one(jobs, args, sides, work))
    finally:
        if tree is not None:
            drop_old_tree(tree)
        if args.workdir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps({"results": results}, indent=2) + "\n")
    ok = all(r["rc"] == 0 for e in results for r in e["runs"]) and not any(
        e["notes"] for e in results
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
