"""CPU of the synthetic generator, and of its kickstart records (``kickstart_record``) alone.

    .venv/bin/python bench/synthetic_bench.py --jobs 3000
    # an older tree: git archive REV monitord | tar -x -C /tmp/old, then
    PYTHONPATH=/tmp/old .venv/bin/python bench/synthetic_bench.py --jobs 3000

Prints the generator's process CPU seconds and the records' (count, microseconds each).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import monitord.tools.synthetic.dagman as dagman
from monitord.tools.synthetic import generate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--jobs", type=int, default=3000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    spent, count = 0.0, 0
    record = dagman.kickstart_record

    def timed(ctx: Any, attempt: Any) -> str:
        nonlocal spent, count
        start = time.process_time()
        text = record(ctx, attempt)
        spent += time.process_time() - start
        count += 1
        return text

    dagman.kickstart_record = timed  # type: ignore[assignment]
    out = Path(tempfile.mkdtemp(prefix="synthetic-bench-"))
    try:
        start = time.process_time()
        generate(out / "wf", args.jobs, seed=args.seed)
        total = time.process_time() - start
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(
        f"{args.jobs} jobs: generator {total:.2f} CPU s; kickstart records {spent:.3f} s "
        f"({count}, {spent / max(count, 1) * 1e6:.1f} us each)"
    )


if __name__ == "__main__":
    main()
