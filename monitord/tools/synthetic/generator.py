"""``generate``: one seed in, one finished submit directory out, with the rows it must give.

The order of the steps is part of the contract: every draw comes from one random
stream, so reordering two writers would change every byte after them.
"""

from __future__ import annotations

import calendar
import random
import time
from dataclasses import dataclass
from pathlib import Path

from monitord.tools.synthetic.clock import UTC_OFFSET
from monitord.tools.synthetic.context import FastRandom, make_ctx
from monitord.tools.synthetic.dag import COMPUTE, assign_fates, plan_dag
from monitord.tools.synthetic.dagman import DagmanSim
from monitord.tools.synthetic.filewriter import WRITER_CHILDREN, FileWriter
from monitord.tools.synthetic.planner_files import (
    write_aux,
    write_braindump,
    write_dag,
    write_in,
    write_static_bp,
    write_sub,
)


@dataclass(frozen=True)
class Expected:
    """Row counts a correct monitord replay must produce for the generated directory."""

    jobs: int
    job_instances: int
    jobstates: int
    invocations: int
    workflowstates: int
    tasks: int
    retried_jobs: int
    failed_jobs: int
    futile_jobs: int
    dagman_exit: int


@dataclass(frozen=True)
class Generated:
    """Where the directory is and what it contains."""

    submit_dir: Path
    dagman_out: Path
    wf_uuid: str
    dag_lines: int
    expected: Expected
    seconds: float


def _pick_start(rng: random.Random) -> int:
    """A local (PST) start time in January/February, away from any DST change."""
    year = rng.choice((2023, 2024, 2025))
    day = rng.randint(0, 40)  # Jan 1 + day, at most Feb 10
    local_midnight = calendar.timegm((year, 1, 1, 0, 0, 0, 0, 1, 0)) - UTC_OFFSET
    return local_midnight + day * 86400 + rng.randint(0, 86399)


def generate(
    outdir: Path | str,
    jobs: int,
    *,
    retry_fraction: float = 0.05,
    fail_fraction: float = 0.0,
    seed: int = 0,
    name: str = "synthetic",
    slots: int | None = None,
) -> Generated:
    """Write a finished workflow's submit directory into ``outdir`` (created if missing).

    ``retry_fraction`` of the compute jobs fail once and succeed on their retry;
    ``fail_fraction`` fail both attempts, which makes DAGMan exit 1.  ``slots``
    is the size of the simulated condor pool (default scales with ``jobs``).
    """
    if not 0 <= retry_fraction <= 1 or not 0 <= fail_fraction <= 1:
        raise ValueError("fractions must be within [0, 1]")
    if not name or any(c in name for c in " /\"'"):
        raise ValueError(f"bad workflow name {name!r}")
    began = time.perf_counter()
    out = Path(outdir).absolute()
    out.mkdir(parents=True, exist_ok=True)
    rng = FastRandom(seed)
    start = _pick_start(rng)
    ctx = make_ctx(rng, str(out), name, start)
    nodes = plan_dag(rng, jobs, name)
    for subdir in dict.fromkeys(node.subdir for node in nodes):
        (out / subdir).mkdir(parents=True, exist_ok=True)
    assign_fates(rng, nodes, retry_fraction, fail_fraction)
    write_braindump(ctx)
    dag_lines = write_dag(ctx, nodes)
    write_static_bp(ctx, nodes)
    write_aux(ctx)
    dagman_out = out / f"{ctx.dag}.dagman.out"
    pool = slots if slots is not None else max(8, min(400, jobs // 20))
    writer = FileWriter(0 if jobs < 2000 else WRITER_CHILDREN)
    ctx.sink = writer.write
    try:
        for node in nodes:
            write_sub(ctx, node)
            write_in(ctx, node)
        with open(dagman_out, "w", encoding="utf-8", buffering=1 << 20) as fh:
            sim = DagmanSim(ctx, nodes, start, pool, fh)
            exit_code = sim.run()
    finally:
        writer.close()
    expected = Expected(
        jobs=len(nodes),
        job_instances=sim.attempts,
        jobstates=7 * sim.attempts,
        invocations=2 * sim.attempts,
        workflowstates=2,
        tasks=sum(1 for n in nodes if n.kind == COMPUTE),
        retried_jobs=sim.retried,
        failed_jobs=len(sim.failed_nodes),
        futile_jobs=sim.counts["futile"],
        dagman_exit=exit_code,
    )
    return Generated(out, dagman_out, ctx.wf_uuid, dag_lines, expected, time.perf_counter() - began)


def generate_example(dest: Path, jobs: int = 50) -> Path:
    """A small, fixed example workflow (with a retry) for ``monitord demo``; returns its dagman.out."""
    return generate(dest, jobs, retry_fraction=0.05, seed=2023, name="example").dagman_out
