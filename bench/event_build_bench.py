#!/usr/bin/env python3
"""CPU per event of the event build: a static.bp relay (``make_event`` with the workflow's
fixed attributes), a keyword-built brief event, and its ``wire_items`` (what each encoder
reads), and a PRE/POST script's ``inv.end`` (built, then ``sent_last``); the brief event and
the inv.end again by the positional ``of`` where the tree has it.  Best of ``--rounds`` runs of ``--n`` calls, CPU time (``time.process_time``).

Run it against another tree by putting that tree first on ``PYTHONPATH``, from outside
this one (the current directory comes first on ``sys.path``)::

    cd /tmp && python /path/to/bench/event_build_bench.py
    git archive 1ab06fb | tar -x -C /tmp/old && cd /tmp && \\
        PYTHONPATH=/tmp/old python /path/to/bench/event_build_bench.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import monitord.core.events as events
from monitord.core.events import Fixed, make_event


def best_us(fn: Callable[[], Any], n: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, time.process_time() - start)
    return best / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    fixed = Fixed(
        xwf_id="x", root_xwf_id="r", dax="d.yml", dag="d.dag", wf_ts=1, submit_dir="/s",
        pegasus_version="5.1.3", submit_hostname="h", wf_user="u",
    )  # fmt: skip
    relay = {
        "xwf.id": "x", "job.id": "j1", "ts": "2026-01-01T00:00:00", "submit_file": "j1.sub",
        "type": "1", "type_desc": "compute", "clustered": "0", "max_retries": "3",
        "executable": "/bin/x", "argv": "-a", "task_count": "1",
    }  # fmt: skip
    brief = events.EVENT_CLASSES["job_inst.submit.start"]

    def keyword() -> Any:
        return brief(  # type: ignore[call-arg]
            xwf_id="x", job_id="j", job_inst_id=1, ts=5, js_id=1, reason=None,
            sched_id="1.0", site="local", fixed=fixed,
        )  # fmt: skip

    inv_end = events.EVENT_CLASSES["inv.end"]

    def script_end() -> Any:  # a PRE/POST script's inv.end, reordered as the reference sends it
        return inv_end(  # type: ignore[call-arg]
            xwf_id="x", job_id="j", job_inst_id=1, inv_id=-1, transformation="dagman::pre",
            start_time=1, dur=0, ts=5, exitcode="0", executable="/bin/x", argv="a",
            level="Info", fixed=fixed,
        ).sent_last("ts", "level")  # fmt: skip

    def positional() -> Any:  # the same event by the daemon's positional ``of`` (if any)
        return brief.of(  # type: ignore[attr-defined]
            "x", "j", 1, 5, 1, None, "1.0", "local", fixed,
        )  # fmt: skip

    def script_end_of() -> Any:  # that inv.end by ``of``
        return inv_end.of(  # type: ignore[attr-defined]
            "x", "j", 1, -1, "dagman::pre", events.UNSET, 1, 0, events.UNSET, events.UNSET,
            events.UNSET, 5, "0", "/bin/x", "a", "Info", fixed,
        ).sent_last("ts", "level")  # fmt: skip

    built = keyword()
    cases: dict[str, Callable[[], Any]] = {
        "make_event (static.bp relay, with fixed)": lambda: make_event(
            "job.info", dict(relay), fixed=fixed
        ),
        "keyword build (job_inst.submit.start)": keyword,
        "wire_items of that event": built.wire_items,
        "inv.end built, then sent_last": script_end,
    }
    if hasattr(brief, "of"):
        cases["positional build (job_inst.submit.start, of)"] = positional
        cases["inv.end built by of, then sent_last"] = script_end_of
    print(f"events from {events.__file__}")
    for label, fn in cases.items():
        print(f"{label:45s} {best_us(fn, args.n, args.rounds):6.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
