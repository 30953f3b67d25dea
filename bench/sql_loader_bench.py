"""Micro-benchmark: synthetic job life cycles through the SQL sink into SQLite.

    .venv/bin/python bench/sql_loader_bench.py [-n 10000] [--batch 1000] [--db PATH]

Each job contributes job.info plus submit.start/end, main.start/term/end,
post.start/term/end, inv.start/end ×2, host.info and composite (15 events, with
the fixed attributes every real event carries), so N=10 000 is ~150 000 events.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitord.events import StampedeEvent, make_event
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--jobs", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--db", help="database file (default: a temporary one)")
    args = ap.parse_args()

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
