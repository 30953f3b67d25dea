#!/usr/bin/env python3
"""CPU microseconds per console log line (the daemon's ``configure_logging``), this tree against
another (issue 27: every line's values are masked for URL passwords).

Each round runs a child process per tree (``--old DIR`` holding monitord/, e.g. from
``git archive REV monitord sinks | tar -x -C DIR``) that logs ``--lines`` warning lines to
/dev/null, once without a URL and once with a (masked) database URL among its values; rounds
alternate and medians are printed (``time.process_time``).

    .venv/bin/python bench/log_line_bench.py --old /tmp/old --rounds 3
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from alternate import alternate, medians, run_child

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import structlog
from monitord.system.logs import configure_logging

configure_logging(0)
sys.stderr = open("/dev/null", "w")
log = structlog.get_logger("bench")
lines = int(sys.argv[1])
out = {}
for name, extra in (("plain", {}), ("url", {"destination": "postgresql://u:***@h/db"})):
    start = time.process_time()
    for i in range(lines):
        log.warning("sink is down, retrying", sink="sql", attempt=i, error="refused", **extra)
    out[name] = (time.process_time() - start) / lines * 1e6
print(json.dumps(out))
"""


def run(tree: Path, lines: int) -> dict[str, float]:
    return run_child(tree, CHILD, str(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="another tree (holding monitord/) to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lines", type=int, default=20_000)
    args = ap.parse_args()
    trees = ({"old": args.old} if args.old else {}) | {"new": ROOT}
    sides = {name: partial(run, tree, args.lines) for name, tree in trees.items()}
    for name, rounds in alternate(sides, args.rounds).items():
        med = medians(rounds)
        print(f"{name}: " + ", ".join(f"{k} {v:.1f} us a line" for k, v in med.items()))


if __name__ == "__main__":
    main()
