"""Micro-benchmark: synthetic job life cycles through the SQL sink into SQLite.

    .venv/bin/python bench/sql_loader_bench.py [-n 10000] [--batch 1000] [--db PATH]

A real replay's events instead (the SQL thread's work alone, CPU seconds, medians):

    .venv/bin/python bench/sql_loader_bench.py --capture DIR --events /tmp/ev.pickle
    .venv/bin/python bench/sql_loader_bench.py --events /tmp/ev.pickle --rounds 3 [--profile 30]
    .venv/bin/python bench/sql_loader_bench.py --events /tmp/ev.pickle --old /tmp/base

``--capture`` replays the workflow of ``DIR`` (``-r``, into ``DIR``'s own database: it
writes there) and keeps every batch the SQL sink is handed; ``--events`` writes those
batches through a fresh ``SQLSink`` (a replay's: no fsync) into a new SQLite file.
``--old TREE`` alternates rounds of this tree and of the source tree ``TREE`` (each in a
child process, ``PYTHONPATH``), and prints both medians.

Each job contributes job.info plus submit.start/end, main.start/term/end,
post.start/term/end, inv.start/end ×2, host.info and composite (15 events, with
the fixed attributes every real event carries), so N=10 000 is ~150 000 events.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

# --old's child runs another tree (PYTHONPATH): this one goes last then
sys.path.insert(
    len(sys.path) if "MONITORD_BENCH_TREE" in os.environ else 0,
    str(Path(__file__).resolve().parents[1]),
)

from alternate import alternate, medians

from monitord.core.events import StampedeEvent, make_event
from sinks.sql import SQLSink

T0 = 1_700_000_000


def synthetic_events(n_jobs: int) -> list[StampedeEvent]:
    wf = str(uuid.uuid4())
    fixed: dict[str, Any] = {
        "root.xwf.id": wf,
        "dax": "/home/u/wf.yml",
        "dag": "bench-0.dag",
        "wf.ts": T0,
        "submit.dir": "/home/u/submit/run0001",
        "pegasus.version": "5.1.3",
        "submit.hostname": "submit.example.org",
        "wf.user": "u",
    }

    def ev(name: str, **attrs: Any) -> StampedeEvent:
        a: dict[str, Any] = {"xwf.id": wf}
        a.update({k.replace("__", "."): v for k, v in attrs.items()})
        a.update(fixed)
        return make_event(name, a)

    out = [
        ev(
            "wf.plan",
            dax__label="bench",
            dax__version="5.0",
            dax__index="0",
            dax__file="/home/u/wf.yml",
            dag__file__name="bench-0.dag",
            ts=T0,
            argv="--conf pegasus.properties --dir submit",
            user="u",
            planner__version="5.1.3",
        ),
        ev("static.start"),
    ]
    names = [f"job_{i:06d}" for i in range(n_jobs)]
    for name in names:
        out.append(
            ev(
                "job.info",
                job__id=name,
                submit_file=f"00/00/{name}.sub",
                type="1",
                type_desc="compute",
                clustered="0",
                max_retries="3",
                executable=f"/home/u/submit/run0001/00/00/{name}.sh",
                task_count="1",
                ts=T0,
            )
        )
    out.append(ev("static.end"))
    out.append(ev("xwf.start", ts=float(T0 + 10), reason=None, restart_count=0))
    for i, name in enumerate(names):
        t = T0 + 20 + i
        keys = {"job__id": name, "job_inst__id": i + 1}
        brief = {**keys, "reason": None, "sched__id": f"{i + 100}.0"}
        out += [
            ev("job_inst.submit.start", ts=t, js__id=1, site="condorpool", **brief),
            ev("job_inst.submit.end", ts=t, js__id=1, status=0, **brief),
            ev("job_inst.main.start", ts=t + 1, js__id=2, **keys, sched__id=f"{i + 100}.0"),
            ev("job_inst.main.term", ts=t + 5, js__id=3, status=0, **brief),
            ev("job_inst.post.start", ts=t + 6, js__id=5, **brief),
            ev("job_inst.post.term", ts=t + 7, js__id=6, **brief),
            ev("inv.start", **keys, inv__id=1, ts=t + 1),
            ev(
                "inv.end",
                **keys,
                inv__id=1,
                transformation="ls",
                start_time=t + 1,
                dur=3.5,
                remote_cpu_time=0.5,
                avg_cpu=0.142857,
                maxrss=2980,
                ts=t + 4,
                exitcode=0,
                executable="/usr/bin/ls",
                argv="-l /",
            ),
            ev(
                "job_inst.host.info",
                **keys,
                hostname=f"node{i % 50}.example.org",
                ip=f"10.0.0.{i % 50}",
                site="condorpool",
                uname="linux-5.14-x86_64",
                ts=t + 8,
            ),
            ev(
                "job_inst.main.end",
                **keys,
                ts=t + 5,
                js__id=4,
                site="condorpool",
                user="u",
                local__dur=4,
                stdin_file="",
                multiplier_factor="1",
                exitcode="0",
                sched__id=f"{i + 100}.0",
                status=0,
                work_dir="/scratch/dir",
                stdout__file=f"00/00/{name}.out.000",
                stderr__file=f"00/00/{name}.err.000",
                stdout__text="#@ 1 stdout%0Ahello%0A",
                stderr__text="",
            ),
            ev("job_inst.composite", **keys, ts=t + 5, js__id=4, status=0, jobtype="compute"),
            ev("inv.start", **keys, inv__id=-2, ts=t + 6),
            ev(
                "inv.end",
                **keys,
                inv__id=-2,
                transformation="dagman::post",
                start_time=t + 6,
                dur=1,
                remote_cpu_time=1,
                exitcode="0",
                executable="/usr/bin/pegasus-exitcode",
                argv=f"-r $RETURN 00/00/{name}.out",
                ts=t + 7,
            ),
            ev("job_inst.post.end", ts=t + 8, js__id=7, status=0, exitcode="0", **brief),
        ]
    out.append(
        ev("xwf.end", ts=float(T0 + 20 + n_jobs + 10), reason=None, restart_count=0, status=0)
    )
    return out


def capture(workflow: Path, out: Path) -> None:
    """Replay ``workflow`` and pickle every batch the SQL sink writes (a list of lists)."""
    from monitord.cli import pegasus_main

    batches: list[list[StampedeEvent]] = []
    write = SQLSink.write_batch

    def keep(self: SQLSink, events: Any) -> None:
        batches.append(list(events))
        write(self, events)

    SQLSink.write_batch = keep  # type: ignore[method-assign]
    dagman_out = next(workflow.glob("*.dag.dagman.out"))
    try:
        code = pegasus_main(["-r", str(dagman_out)])
    finally:
        SQLSink.write_batch = write  # type: ignore[method-assign]
    with out.open("wb") as f:
        pickle.dump(batches, f, protocol=pickle.HIGHEST_PROTOCOL)
    n = sum(len(b) for b in batches)
    print(f"replay exit {code}: {len(batches)} batches, {n} events -> {out}")


def load_events(path: Path, profile: int, db: str | None = None) -> dict[str, float]:
    """Write the captured batches into a new SQLite file; CPU and wall seconds."""
    with path.open("rb") as f:
        batches = pickle.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        sink = SQLSink(f"sqlite:///{db or tmp + '/x.db'}", restart=True, durable=False)
        sink.open()
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile(time.process_time)
            prof.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        for batch in batches:
            sink.write_batch(batch)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if prof is not None:
            import pstats

            prof.disable()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
        if os.environ.get("MONITORD_BENCH_TREE"):
            import sinks.sql

            print(f"tree: {Path(sinks.sql.__file__).parents[2]}", file=sys.stderr)
        sink.close()
    return {"cpu": cpu, "wall": wall, "events": sum(len(b) for b in batches)}


def compare(events: Path, old: Path, rounds: int) -> None:
    """Alternate child processes of the old tree and of this one; medians per side."""
    envs = {"old": {"MONITORD_BENCH_TREE": str(old), "PYTHONPATH": str(old)}, "new": {}}

    def child(env: dict[str, str]) -> dict[str, float]:
        out = subprocess.run(
            [sys.executable, __file__, "--events", str(events), "--json"],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out.splitlines()[-1])  # type: ignore[no-any-return]

    got = alternate({side: partial(child, env) for side, env in envs.items()}, rounds)
    for side, runs in got.items():
        cpus = ", ".join(f"{r['cpu']:.2f}" for r in runs)
        med = medians(runs)
        print(
            f"{side}: CPU s {cpus}; median CPU {med['cpu']:.2f} s, median wall {med['wall']:.2f} s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--jobs", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--db", help="database file (default: a temporary one)")
    ap.add_argument("--capture", type=Path, help="replay this workflow, keep its SQL batches")
    ap.add_argument("--events", type=Path, help="pickled batches (from --capture) to write")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", type=int, default=0, help="print the top N by own CPU time")
    ap.add_argument("--old", type=Path, help="a source tree to alternate with (--events)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.capture:
        if not args.events:
            ap.error("--capture needs --events FILE")
        capture(args.capture, args.events)
        return
    if args.events and args.old:
        compare(args.events, args.old, args.rounds)
        return
    if args.events:
        runs = [load_events(args.events, args.profile, args.db) for _ in range(args.rounds)]
        if args.json:
            print(json.dumps(runs[-1]))
            return
        for r in runs:
            print(f"{r['events']:.0f} events: CPU {r['cpu']:.2f} s, wall {r['wall']:.2f} s")
        print(f"median CPU {statistics.median(r['cpu'] for r in runs):.2f} s")
        return

    events = synthetic_events(args.jobs)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.stampede.db")
        sink = SQLSink(f"sqlite:///{db}", restart=True)
        sink.open()
        start = time.perf_counter()
        for i in range(0, len(events), args.batch):
            sink.write_batch(events[i : i + args.batch])
        sink.flush()
        sink.close()
        elapsed = time.perf_counter() - start
    print(
        f"{args.jobs} jobs, {len(events)} events, batch {args.batch}: "
        f"{elapsed:.2f} s, {len(events) / elapsed:,.0f} events/s"
    )


if __name__ == "__main__":
    main()
