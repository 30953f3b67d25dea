"""What a crash-resume snapshot costs, and what it saves, for a large workflow.

Generates a synthetic workflow (default 20,000 jobs), feeds its dagman.out to the state
machine (what the daemon does, without outputs), and at 25 %, 50 % and 100 % of the file takes
the snapshot the service would (monitord/daemon/resume.py): its size, the time to take it
(pickle), the time to restore it; against the time a recovery needs to re-read the file from
line 1 up to that point.  The service takes one snapshot every 2 s at most, and never more
often than 20 times what the last one took, so snapshots cost at most 5 % of its time.

    .venv/bin/python bench/resume_bench.py [--jobs 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monitord.daemon.resume import (  # noqa: E402
    COST_FACTOR,
    MIN_INTERVAL,
    ResumePoint,
    SnapshotCache,
    TrackedPoint,
    dumps,
)
from monitord.tools.synthetic import generate  # noqa: E402
from tests.status_fixtures import open_workflow  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("TZ", "America/Los_Angeles")
    time.tzset()
    with tempfile.TemporaryDirectory(prefix="resume-bench-") as tmp:
        t0 = time.perf_counter()
        gen = generate(Path(tmp) / "run", args.jobs, seed=args.seed)
        print(f"generated {args.jobs} jobs in {time.perf_counter() - t0:.1f} s")
        dagman_out = Path(gen.dagman_out)
        lines = dagman_out.read_text(errors="replace").splitlines()
        wf = open_workflow(dagman_out)
        print(f"dagman.out: {len(lines)} lines, {dagman_out.stat().st_size / 1e6:.1f} MB")
        header = (
            f"{'at':>5} {'lines':>9} {'re-read s':>10} {'snapshot MB':>12} "
            f"{'take ms':>8} {'restore ms':>11} {'saved':>7}"
            f" {'pieces MB':>10} {'first ms':>9} {'again ms':>9}"
        )
        print(header)
        fed = 0
        feed_time = 0.0
        cache = SnapshotCache()  # what the daemon keeps between its snapshots
        for share in (0.25, 0.5, 1.0):
            stop = int(len(lines) * share)
            t0 = time.perf_counter()
            for line in lines[fed:stop]:
                wf.feed(line)
            feed_time += time.perf_counter() - t0
            wf.events.clear()
            wf.jobstate_lines.clear()
            fed = stop
            t0 = time.perf_counter()
            point = ResumePoint(
                wf.uuid, str(dagman_out), "bench", {wf.uuid: 0},
                [TrackedPoint(wf, wf.run_dir, str(dagman_out), {}, 0.0, 0, 0, None, 0, False)],
                set(), {},
            )  # fmt: skip
            data = pickle.dumps(point, protocol=pickle.HIGHEST_PROTOCOL)  # whole, as before pieces
            take = time.perf_counter() - t0
            t0 = time.perf_counter()
            pickle.loads(data)
            restore = time.perf_counter() - t0
            t0 = time.process_time()
            pieces = dumps(point, cache)  # the pieces that changed since the last share
            first = time.process_time() - t0
            t0 = time.process_time()
            dumps(point, cache)  # nothing changed: every finished piece reused
            again = time.process_time() - t0
            print(
                f"{share:>5.0%} {stop:>9} {feed_time:>10.2f} {len(data) / 1e6:>12.2f} "
                f"{take * 1e3:>8.0f} {restore * 1e3:>11.0f} {feed_time / max(restore, 1e-9):>6.0f}x"
                f" {len(pieces) / 1e6:>10.2f} {first * 1e3:>9.0f} {again * 1e3:>9.0f}"
            )
        print(
            f"snapshots: one every max({MIN_INTERVAL:.0f} s, {COST_FACTOR:.0f} x the last one's "
            f"time): at the largest above, one every {max(MIN_INTERVAL, COST_FACTOR * take):.1f} s"
        )
        print(
            "take ms: the whole state pickled (wall); pieces: SnapshotCache (CPU ms), first: "
            "after the feed since the last share, again: at once after it (2 s later, as a rule)"
        )
        print(
            "re-read s: the machine's time to re-read dagman.out from line 1 to that point "
            "(job files included, outputs not: a recovery also rewrites every row)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
