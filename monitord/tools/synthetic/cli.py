"""``python -m monitord.tools.synthetic OUTDIR --jobs N``: the generator's command line."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from monitord.tools.synthetic.generator import generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m monitord.tools.synthetic",
        description="Write a synthetic, finished Pegasus 5.x submit directory.",
    )
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--jobs", type=int, required=True, help="number of DAG jobs")
    parser.add_argument(
        "--retry-fraction",
        type=float,
        default=0.05,
        help="fraction of compute jobs that fail once, then succeed (default 0.05)",
    )
    parser.add_argument(
        "--fail-fraction",
        type=float,
        default=0.0,
        help="fraction of compute jobs that fail permanently (DAGMan exits 1)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="synthetic", help="workflow label (default synthetic)")
    parser.add_argument("--slots", type=int, default=None, help="simulated condor pool size")
    parser.add_argument("--force", action="store_true", help="write into a non-empty OUTDIR")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if args.outdir.exists() and any(args.outdir.iterdir()) and not args.force:
        parser.error(f"{args.outdir} is not empty (use --force)")
    try:
        result = generate(
            args.outdir,
            args.jobs,
            retry_fraction=args.retry_fraction,
            fail_fraction=args.fail_fraction,
            seed=args.seed,
            name=args.name,
            slots=args.slots,
        )
    except ValueError as exc:
        parser.error(str(exc))
    summary = {
        "submit_dir": str(result.submit_dir),
        "dagman_out": str(result.dagman_out),
        "wf_uuid": result.wf_uuid,
        "seconds": round(result.seconds, 3),
        **asdict(result.expected),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        e = result.expected
        print(f"{result.dagman_out}")
        print(
            f"  {e.jobs} jobs, {e.job_instances} job instances ({e.retried_jobs} retried, "
            f"{e.failed_jobs} failed, {e.futile_jobs} never run), DAGMan exit {e.dagman_exit}, "
            f"written in {result.seconds:.2f}s"
        )
    return 0
