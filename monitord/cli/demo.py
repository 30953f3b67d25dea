"""``monitord demo``: make an example workflow, replay it, show what was recorded."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

from monitord.cli.checks import whole_number
from monitord.system.logs import configure_logging

DESCRIPTION = "Generate an example workflow, replay it into SQLite, print what was recorded."
# an example, generated in memory: bench/ makes the big workflows
MAX_JOBS = 100_000


_positive = whole_number(1, MAX_JOBS, " (an example)")


def demo(argv: Sequence[str], main: Callable[[list[str]], int]) -> int:
    """Generate an example workflow, replay it into SQLite, print what was recorded.

    ``main``: ``monitord``'s own entry point, which runs the replay (passed in: no cycle).
    """
    import sqlite3

    from monitord.tools.synthetic import generate_example

    p = argparse.ArgumentParser(prog="monitord demo", description=DESCRIPTION)
    p.add_argument(
        "--jobs",
        type=_positive,
        default=50,
        help=f"jobs in the example (default 50, at most {MAX_JOBS:,})",
    )
    p.add_argument("--dir", help="where to create the example (default: a new temporary directory)")
    args = p.parse_args(list(argv))
    configure_logging(0)
    dest = args.dir or tempfile.mkdtemp(prefix="monitord-demo-")
    try:
        dagman_out = generate_example(__import__("pathlib").Path(dest), jobs=args.jobs)
    except OSError as exc:
        print(f"monitord demo: error: cannot create the example in {dest}: {exc}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    status = main(["replay", "-q", "--no-dashboard", str(dagman_out)])
    elapsed = time.perf_counter() - t0
    if status != 0:
        return status
    run_dir = os.path.dirname(str(dagman_out))
    dbs = [f for f in os.listdir(run_dir) if f.endswith(".stampede.db")]
    print(f"replayed {dagman_out} in {elapsed:.2f} s")
    for db in dbs:
        con = sqlite3.connect(os.path.join(run_dir, db))
        counts = {
            t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("workflow", "job", "job_instance", "jobstate", "invocation")
        }
        con.close()
        print(
            f"database {os.path.join(run_dir, db)}: "
            + ", ".join(f"{k}={v}" for k, v in counts.items())
        )
    print(f"jobstate.log: {os.path.join(run_dir, 'jobstate.log')}")
    return 0
