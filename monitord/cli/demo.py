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


def demo(argv: Sequence[str], replay: Callable[[list[str], bool], int]) -> int:
    """Generate an example workflow, replay it into SQLite, print what was recorded.

    ``replay(argv, progress)``: ``monitord replay`` (passed in: no cycle); with ``progress``,
    its bar on a terminal but no log lines nor summary.  Each step shows on a terminal unless
    ``-q``: a big example takes minutes.
    """
    import sqlite3

    from monitord.cli.progress import working
    from monitord.tools.synthetic import generate_example

    p = argparse.ArgumentParser(prog="monitord demo", description=DESCRIPTION)
    p.add_argument(
        "--jobs",
        type=_positive,
        default=50,
        help=f"jobs in the example (default 50, at most {MAX_JOBS:,})",
    )
    p.add_argument("--dir", help="where to create the example (default: a new temporary directory)")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress display (shown on a terminal)"
    )
    args = p.parse_args(list(argv))
    configure_logging(0)
    show = not args.quiet and sys.stderr.isatty()
    dest = args.dir or tempfile.mkdtemp(prefix="monitord-demo-")
    try:
        with working(f"generating an example of {args.jobs:,} jobs", sys.stderr, show=show):
            dagman_out = generate_example(__import__("pathlib").Path(dest), jobs=args.jobs)
    except OSError as exc:
        print(f"monitord demo: error: cannot create the example in {dest}: {exc}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    status = replay(["-q", "--no-dashboard", str(dagman_out)], show)
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
