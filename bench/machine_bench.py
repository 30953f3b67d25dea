#!/usr/bin/env python3
"""CPU seconds of the parser thread's two stages on a generated workflow (issue 30), no sink:
the static.bp into typed events, and dagman.out through the workflow machine into events and
jobstate.log lines (classify, the job state table, .sub and job-file parses, event build);
``--skip-job-output`` leaves the finished jobs' files unread (the events counted are then fewer).

Each round runs in a child process of this tree, or of the tree on ``--old DIR`` (e.g. ``git
archive REV | tar -x -C DIR``), alternating; medians of ``time.process_time`` are printed (the
machine's load does not count). Job files are read from disk as a replay reads them (run
once first so the page cache is warm; both sides read the same files). Each side's event
and jobstate.log line counts are printed: they must be equal.

    TZ=America/Los_Angeles .venv/bin/python bench/machine_bench.py --dir /tmp/w20k --old /tmp/old
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from alternate import run_child

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import glob, json, os, sys, time
from monitord.core.events import make_event
from monitord.core.readers.braindump import read_braindump
from monitord.core.readers.dagfile import parse_dag
from monitord.core.readers.staticbp import parse_static_bp
from monitord.core.workflow import Workflow, WorkflowContext, WorkflowOptions
from monitord.daemon.jobfiles import read_text

run_dir = sys.argv[1]
bd = read_braindump(run_dir)
dag = parse_dag(read_text(os.path.join(run_dir, bd.dag)) or "")
events = []
ctx = WorkflowContext(read_text=read_text, events=events, options=WorkflowOptions())
wf = Workflow(ctx, run_dir=run_dir, braindump=bd, dag=dag, root_uuid=bd.wf_uuid, wf_ts=1)
static = glob.glob(os.path.join(run_dir, "*.static.bp"))[0]
out = glob.glob(os.path.join(run_dir, "*.dag.dagman.out"))[0]
lines = open(out, encoding="utf-8", errors="replace").read().split("\n")
if sys.argv[2] in ("skip", "only"):  # --skip-job-output: no job-output parse
    wf.read_job_output = lambda inst, ts: None
if sys.argv[2] == "only":  # --machine-only: each line classified and each .sub parsed first
    from monitord.core.jobreader import ParsingReader
    parsed = {}
    class Cached(ParsingReader):
        __slots__ = ()
        def submit_file(self, path, *args):
            if path not in parsed:
                parsed[path] = ParsingReader.submit_file(self, path, *args)
            return parsed[path]
    ctx.reader = Cached(read_text)
    warm = Workflow(ctx, run_dir=run_dir, braindump=bd, dag=dag, root_uuid=bd.wf_uuid, wf_ts=1)
    warm.read_job_output = wf.read_job_output
    warm.feed_lines(lines)
    events.clear()
    from monitord.core.dagman import classify_line
    recs = [r for r in (classify_line(x.rstrip(), 0.0) for x in lines) if r is not None]
    handlers = Workflow._handlers
    n_events = 0
    del warm
    import gc
    gc.collect()
    gc.freeze()  # what was made before the clock is not the collector's work in it
    start = time.process_time()
    for i in range(0, len(recs), 5000):
        for rec in recs[i : i + 5000]:
            handler = handlers.get(rec.kind)
            if handler is not None:
                handler(wf, rec)
        n_events += len(events)
        events.clear()
    machine_s = time.process_time() - start
    print(json.dumps({"static": 0.0, "machine": machine_s,
                      "counts": [0, n_events, len(wf.jobstate_lines)]}))
    sys.exit(0)

n_static = 0
start = time.process_time()
with open(static, encoding="utf-8", errors="replace") as fh:
    for name, attrs in parse_static_bp(fh, path=static):
        make_event(name, attrs, fixed=wf.fixed)
        n_static += 1
static_s = time.process_time() - start

n_events = n_js = 0
start = time.process_time()
for i in range(0, len(lines), 5000):
    wf.feed_lines(lines[i : i + 5000])
    n_events += len(events)
    n_js += len(wf.jobstate_lines)
    events.clear()
    wf.jobstate_lines.clear()
machine_s = time.process_time() - start
print(json.dumps({"static": static_s, "machine": machine_s,
                  "counts": [n_static, n_events, n_js]}))
"""


def run(tree: Path, run_dir: Path, mode: str) -> dict[str, object]:
    return run_child(tree, CHILD, str(run_dir), mode)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, type=Path, help="a generated workflow")
    ap.add_argument("--old", type=Path, help="another tree (holding monitord/) to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--skip-job-output",
        action="store_true",
        help="leave the finished jobs' files unread (dagman lines, job machine, .sub, events)",
    )
    ap.add_argument(
        "--machine-only",
        action="store_true",
        help="the job machine and event build alone: lines classified and .sub files parsed "
        "before the clock starts, job files unread (static.bp not timed)",
    )
    args = ap.parse_args()
    sides = {"this tree": ROOT}
    if args.old:
        sides = {"old": args.old.resolve(), **sides}
    got: dict[str, list[dict[str, object]]] = {side: [] for side in sides}
    mode = "only" if args.machine_only else "skip" if args.skip_job_output else "parse"
    for _ in range(args.rounds):
        for side, tree in sides.items():
            got[side].append(run(tree, args.dir.resolve(), mode))
    for side, runs in got.items():
        line = [f"{side:10s}"]
        for stage in ("static", "machine"):
            values = [float(r[stage]) for r in runs]  # type: ignore[arg-type]
            rounds = ", ".join(f"{v:.2f}" for v in values)
            line.append(f"{stage} {statistics.median(values):.2f} s ({rounds})")
        line.append(f"counts (static, events, jobstate) {runs[0]['counts']}")
        print("  ".join(line))


if __name__ == "__main__":
    main()
