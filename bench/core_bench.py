#!/usr/bin/env python3
"""CPU seconds of the core's per-line stages on a generated workflow (issue 30): classifying
every dagman.out line, and parsing the .dag (with its bytes per node, tracemalloc).

Runs this tree, or the tree on ``--tree`` (e.g. ``git archive REV monitord | tar -x -C DIR``),
in a child process per round so both load their own modules; with ``--old DIR`` rounds
alternate between the two and medians are printed (``time.process_time``: the machine's load
does not count).

    TZ=America/Los_Angeles .venv/bin/python bench/core_bench.py --dir /tmp/w20k --old /tmp/old
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from alternate import alternate, medians, options, run_child

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import gc, json, sys, time, tracemalloc
from monitord.core import dagman
from monitord.core.readers.dagfile import parse_dag

out_path, dag_path = sys.argv[1], sys.argv[2]
lines = open(out_path, encoding="utf-8").read().split("\n")
dag_text = open(dag_path, encoding="utf-8").read()
start = time.process_time()
for line in lines:
    dagman.classify(line.rstrip())
classify = time.process_time() - start
start = time.process_time()
info = parse_dag(dag_text)
parse = time.process_time() - start
del info
gc.collect()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
info = parse_dag(dag_text)
gc.collect()
per_node = (tracemalloc.get_traced_memory()[0] - before) / max(1, len(info.nodes))
print(json.dumps({"classify": classify, "parse_dag": parse, "dag_bytes_per_node": per_node}))
"""


def run(tree: Path, dagman_out: Path, dag: Path) -> dict[str, float]:
    return run_child(tree, CHILD, str(dagman_out), str(dag))


def main() -> None:
    args = options(
        __doc__, "another tree (holding monitord/) to compare with", rounds=3
    ).parse_args()
    run_dir = Path(args.dir)
    dagman_out = next(run_dir.glob("*.dag.dagman.out"))
    dag = dagman_out.with_name(dagman_out.name.removesuffix(".dagman.out"))
    trees = {"new": ROOT} | ({"old": Path(args.old)} if args.old else {})
    sides = {name: partial(run, trees[name], dagman_out, dag) for name in reversed(trees)}
    for name, rounds in alternate(sides, args.rounds).items():  # old first, then new
        print(name, " ".join(f"{k}={v:.2f}" for k, v in medians(rounds).items()))


if __name__ == "__main__":
    main()
