#!/usr/bin/env python3
"""Where a replay's CPU goes, by stage: read, classify, job machine, kickstart, .sub, ...

Generates a synthetic workflow (or takes ``--dir``), replays it once with
``pegasus-monitord -r`` in a child process under a profiler, and prints the share of the
profile each stage of the line's path takes (docs/architecture.md, "The path of one line").

``--profiler py-spy`` (default when ``py-spy`` is installed next to this interpreter)
samples every thread of the daemon; a sample goes to the innermost frame whose file names
a stage, so a job file read from the output parse counts as "read", not "job output".
``--profiler cprofile`` profiles every thread of the daemon with cProfile (one profiler
per thread, merged, each timing its thread's CPU time: waits cost nothing): a function's own time goes to its file's stage; the own time of a
function of no stage (stdlib, builtins such as ``re.Pattern.match`` or ``posix.read``)
is shared among its callers' stages as its callers' shares of it. cProfile's per-call
cost inflates the stages made of many small calls; the sampler does not.

    .venv/bin/python bench/profile_replay.py --jobs 20000
    .venv/bin/python bench/profile_replay.py --dir /tmp/w20k --profiler cprofile --top 25
"""

from __future__ import annotations

import argparse
import collections
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# File (path fragment) -> stage; the first fragment a file's path contains wins. Files of no
# stage (stdlib, monitord/core/timeparse.py, ...) are charged to the stage that called them.
STAGES: tuple[tuple[str, str], ...] = (
    ("monitord/daemon/jobfiles.py", "read job files"),
    ("monitord/core/dagman.py", "classify dagman.out lines"),
    ("monitord/core/readers/subfile.py", ".sub parse"),
    ("monitord/core/readers/kickstart/", "kickstart parse"),
    ("monitord/core/readers/staticbp.py", "static.bp"),
    ("monitord/daemon/plan_events.py", "static.bp"),
    ("monitord/core/readers/bp.py", "static.bp"),
    ("monitord/core/jobout", "job output (events from the files)"),
    ("monitord/core/jobtext.py", "job output (events from the files)"),
    ("monitord/core/readers/errfile.py", "job output (events from the files)"),
    ("monitord/core/readers/integrity.py", "job output (events from the files)"),
    ("monitord/core/readers/payloads.py", "job output (events from the files)"),
    ("monitord/core/event", "event build"),  # events, eventbase, event_classes
    ("monitord/core/catalogue.py", "event build"),
    ("monitord/core/workflow.py", "job machine"),
    ("monitord/core/jobmachine.py", "job machine"),
    ("monitord/core/jobactions.py", "job machine"),
    ("monitord/core/jobinstance.py", "job machine"),
    ("sinks/sql/rawsql.py", "SQL (sqlite3 execute, commit)"),
    ("sinks/sql/", "SQL loader (rows from events)"),
    ("sinks/runtime/", "delivery runtime"),
    ("monitord/daemon/", "daemon (chunks, jobstate.log)"),
    ("<frozen importlib", "imports"),
    # SQLAlchemy's DBAPI calls (py-spy's, then cProfile's spelling): sqlite3 runs under them
    ("DefaultDialect.do_", "SQL (sqlite3 execute, commit)"),
    ("sqlalchemy/engine/default.py do_", "SQL (sqlite3 execute, commit)"),
    ("sqlalchemy/", "SQLAlchemy (schema, engine)"),
)
# Innermost frames of a thread that waits (py-spy's own idle test misses these): not CPU.
IDLE = ("Condition.wait (", "EpollSelector.select (", "_worker (", "Event.wait (")

_CHILD = """
import cProfile, sys, threading, time
profiles = []
def start(frame, event, arg):
    prof = cProfile.Profile(time.thread_time)
    profiles.append(prof)
    prof.enable()  # replaces this hook in the thread
threading.setprofile(start)
main = cProfile.Profile(time.thread_time)
profiles.append(main)
out = sys.argv[1]
sys.argv = ["pegasus-monitord", *sys.argv[2:]]
from monitord.cli import pegasus_main
main.enable()
try:
    rc = pegasus_main(sys.argv[1:])  # in-process: the program's immediate exit would skip the dump
finally:
    main.disable()
    for prof in profiles:
        prof.disable()
    import pstats
    stats = pstats.Stats(profiles[0])
    for prof in profiles[1:]:
        try:
            stats.add(prof)
        except TypeError:  # a profiler that never ran
            pass
    stats.dump_stats(out)
sys.exit(rc)
"""


def stage_of(path: str) -> str | None:
    for fragment, stage in STAGES:
        if fragment in path:
            return stage
    return None


def replay_env(home: Path) -> dict[str, str]:
    env = dict(os.environ, TZ="America/Los_Angeles", HOME=str(home))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def by_stage_pyspy(raw: Path) -> collections.Counter[str]:
    """Samples per stage from py-spy's collapsed stacks (innermost stage frame wins)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if frames[-1].startswith(IDLE):
            continue
        stage = "other"
        for frame in reversed(frames):
            found = stage_of(frame)
            if found is not None:
                stage = found
                break
        counts[stage] += int(n)
    return counts


def by_stage_cprofile(stats: pstats.Stats) -> collections.Counter[str]:
    """Own seconds per stage; the own time of a function of no stage goes to its callers."""
    table = stats.stats  # type: ignore[attr-defined]
    memo: dict[tuple, dict[str, float]] = {}

    def shares(func: tuple, seen: frozenset) -> dict[str, float]:
        """How ``func``'s time splits among stages (fractions summing to 1)."""
        if func in memo:
            return memo[func]
        stage = stage_of(f"{func[0]} {func[2]}")
        if stage is not None:
            return {stage: 1.0}
        callers = table.get(func, (0, 0, 0, 0, {}))[4]
        total = sum(c[2] for c in callers.values()) or 0.0
        out: dict[str, float] = collections.defaultdict(float)
        if not callers or total <= 0 or func in seen:
            out["other"] = 1.0
        else:
            for caller, c in callers.items():
                for st, frac in shares(caller, seen | {func}).items():
                    out[st] += frac * c[2] / total
        memo[func] = dict(out)
        return memo[func]

    result: collections.Counter[str] = collections.Counter()  # type: ignore[assignment]
    for func, (_cc, _nc, tt, _ct, _callers) in table.items():
        for st, frac in shares(func, frozenset()).items():
            result[st] += tt * frac
    return result


def print_breakdown(counts: collections.Counter[str], unit: str) -> None:
    total = sum(counts.values()) or 1
    print(f"{'stage':<40} {unit:>10} {'share':>7}")
    for stage, n in counts.most_common():
        value = f"{n:.2f}" if isinstance(n, float) else str(n)
        print(f"{stage:<40} {value:>10} {100 * n / total:>6.1f}%")
    print(f"{'total':<40} {total if isinstance(total, int) else round(total, 2):>10}")


def report(raw: Path, profiler: str, top: int) -> None:
    if profiler == "py-spy":
        print_breakdown(by_stage_pyspy(raw), "samples")
        return
    stats = pstats.Stats(str(raw))
    print_breakdown(by_stage_cprofile(stats), "seconds")
    if top:
        stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="an already generated workflow")
    spy = Path(sys.executable).parent / "py-spy"
    parser.add_argument(
        "--profiler",
        choices=("py-spy", "cprofile"),
        default="py-spy" if spy.exists() else "cprofile",
    )
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=0, help="also print the top N functions")
    parser.add_argument("--keep", type=Path, default=None, help="keep the raw profile here")
    parser.add_argument(
        "--from", dest="source", type=Path, default=None, help="only analyse a kept profile"
    )
    args = parser.parse_args(argv)
    if args.source is not None:
        report(args.source, args.profiler, args.top)
        return 0

    work = Path(tempfile.mkdtemp(prefix="profile-replay-"))
    try:
        run_dir = args.dir
        if run_dir is None:
            from monitord.tools.synthetic import generate

            run_dir = work / "wf"
            gen = generate(run_dir, args.jobs, seed=args.seed)
            dagman_out = gen.dagman_out.name
        else:
            dagman_out = next(run_dir.glob("*.dag.dagman.out")).name
        env = replay_env(work / "home")
        # as installed: modules load from their .pyc (replay_bench.py does the same)
        dirs = [str(ROOT / d) for d in ("monitord", "sinks", "notifications")]
        subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=False)
        raw = args.keep or work / ("profile.txt" if args.profiler == "py-spy" else "profile.pstats")
        if args.profiler == "py-spy":
            daemon = [sys.executable, "-c", "import sys; from monitord.cli import pegasus_main; "
                      "sys.exit(pegasus_main())", "-r", "--sql-thread", dagman_out]  # fmt: skip
            # --nonblocking: a blocking sampler stops the daemon at each sample, which
            # inflates the stages that make system calls (reading job files) several times
            cmd = [str(spy), "record", "--nonblocking", "-f", "raw", "-r", str(args.rate),
                   "-o", str(raw), "--", *daemon]  # fmt: skip
        else:
            cmd = [sys.executable, "-c", _CHILD, str(raw), "-r", "--sql-thread", dagman_out]
        subprocess.run(cmd, cwd=run_dir, env=env, check=True, capture_output=True)
        report(raw, args.profiler, args.top)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
