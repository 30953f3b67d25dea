"""When each process and thread of a command is busy: a CPU timeline from ``/proc`` (issue 30).

A replay's wall sits above its CPU floor (its CPU seconds over the cores) by the time a core is
idle: a process waiting on a pipe, a queue or its own start-up while the other has nothing to
do.  This runs a command, reads every ``/proc/PID/task/TID/stat`` of it and its descendants
every ``--every`` seconds (utime + stime: the kernel's clock ticks, 10 ms), and prints each
process's and thread's first and last seen moment and CPU, then a table of bins (``--bin``):
the CPU each process spent in it and the core-time left idle (cores × bin − CPU).  Nothing is
changed in the command: it may be any tree (``PYTHONPATH``), any options.

    .venv/bin/python bench/timeline.py --bin 0.25 -- python -m monitord.cli replay -q ...
    .venv/bin/python bench/timeline.py --json F -- ...    # the samples, for another look

The sampler takes ~2 % of a core at 10 ms (its own CPU is printed); ticks are 10 ms, so a bin
shorter than 0.1 s is mostly rounding.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

TICK = 1 / os.sysconf("SC_CLK_TCK")


@dataclass
class Seen:
    """One thread: its name, its process's title, when it was first and last seen, its CPU."""

    pid: int
    name: str
    title: str = ""
    first: float = 0.0
    last: float = 0.0
    #: (moment, seconds on a core so far, seconds runnable but waiting for a core so far)
    cpu: list[tuple[float, float, float]] = field(default_factory=list)


def _stat(path: str) -> tuple[str, int, float] | None:
    """(comm, ppid, CPU seconds) of a /proc stat file, None when it is gone."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode(errors="replace")
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    return head.partition("(")[2], int(fields[1]), (int(fields[11]) + int(fields[12])) * TICK


def _schedstat(path: str) -> tuple[float, float] | None:
    """(seconds on a core, seconds waiting for one) of a thread, ns-exact (None: gone)."""
    try:
        with open(path, "rb") as fh:
            run, wait, _ = fh.read().split()
    except (OSError, ValueError):
        return None
    return int(run) / 1e9, int(wait) / 1e9


def _title(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:60]
    except OSError:
        return ""


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (by parent pid)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(f"/proc/{entry}/stat")
            if got is not None:
                parents[int(entry)] = got[1]
    found, todo = [root], [root]
    while todo:
        pid = todo.pop()
        kids = [p for p, pp in parents.items() if pp == pid]
        found += kids
        todo += kids
    return found


def sample(argv: list[str], every: float) -> tuple[dict[int, Seen], float, int, float]:
    """Run ``argv``, sampling its tree; (threads by tid, wall, exit status, sampler CPU)."""
    began = time.monotonic()
    proc = subprocess.Popen(argv)
    seen: dict[int, Seen] = {}
    pids: list[int] = []
    rounds = 0
    while proc.poll() is None:
        now = time.monotonic() - began
        if rounds % 10 == 0:  # the tree's processes every tenth sample: /proc's listing costs
            pids = _tree(proc.pid)
        rounds += 1
        for pid in pids:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                got = _stat(f"/proc/{pid}/task/{tid}/stat")
                times = _schedstat(f"/proc/{pid}/task/{tid}/schedstat")
                if got is None or times is None:
                    continue
                one = seen.get(int(tid))
                if one is None:
                    one = seen[int(tid)] = Seen(pid, got[0], _title(pid), now, now)
                one.name, one.last = got[0], now
                one.cpu.append((now, *times))
        time.sleep(every)
    wall = time.monotonic() - began
    own = os.times()
    return seen, wall, proc.returncode, own.user + own.system


def _labels(seen: dict[int, Seen]) -> dict[int, str]:
    """Each thread's label: its process (``daemon``, ``sql`` for ``monitord sink-sql``,
    ``worker`` for ``monitord read-ahead``) and its place among the process's threads."""
    labels: dict[int, str] = {}
    count: dict[int, int] = defaultdict(int)
    for tid, one in sorted(seen.items()):
        main = seen.get(one.pid, one)
        process = "daemon"
        if main.name.startswith("monitord sink-"):
            process = "sql"
        elif main.name.startswith("monitord read-"):
            process = "worker"
        labels[tid] = f"{process}.{count[one.pid]}"
        count[one.pid] += 1
    return labels


def _deltas(one: Seen, bin_s: float) -> dict[int, list[float]]:
    """Per bin: seconds on a core, seconds waiting for one."""
    out: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    run0 = wait0 = 0.0
    for moment, run, wait in one.cpu:
        out[int(moment / bin_s)][0] += run - run0
        out[int(moment / bin_s)][1] += wait - wait0
        run0, wait0 = run, wait
    return out


def report(seen: dict[int, Seen], wall: float, bin_s: float, cores: int) -> list[str]:
    """The threads, then per bin each busy thread's time on a core and asleep (blocked: not
    runnable), then the whole's idle core-time."""
    labels = _labels(seen)
    lines = [f"wall {wall:.2f} s"]
    head = f"{'thread':<10} {'tid':>7} {'first':>6} {'last':>6} {'on core':>8} {'runnable':>8} {'asleep':>7}"
    lines.append(head)
    busy = []
    for tid, one in sorted(seen.items()):
        _, run, wait = one.cpu[-1]
        asleep = max(0.0, one.last - one.first - run - wait)
        lines.append(
            f"{labels[tid]:<10} {tid:>7} {one.first:>6.2f} {one.last:>6.2f}"
            f" {run:>8.2f} {wait:>8.2f} {asleep:>7.2f}"
        )
        if run >= 0.05:
            busy.append(tid)
    per = {tid: _deltas(seen[tid], bin_s) for tid in busy}
    lines += ["", "per bin, each thread: on a core / asleep (s); idle: the cores' unused time"]
    lines.append(f"{'from s':>6} " + " ".join(f"{labels[t]:>11}" for t in busy) + f" {'idle':>6}")
    idle_total = 0.0
    for b in range(int(wall / bin_s) + 1):
        span = min(bin_s, wall - b * bin_s)
        cells, used = [], 0.0
        for tid in busy:
            one = seen[tid]
            run, wait = per[tid].get(b, [0.0, 0.0])
            alive = max(0.0, min(one.last, (b + 1) * bin_s) - max(one.first, b * bin_s))
            used += run
            cells.append(f"{run:>5.2f}/{max(0.0, alive - run - wait):<5.2f}")
        idle = max(0.0, cores * span - used)
        idle_total += idle
        lines.append(f"{b * bin_s:>6.2f} " + " ".join(cells) + f" {idle:>6.2f}")
    total = sum(seen[t].cpu[-1][1] for t in seen)
    lines.append(
        f"on a core {total:.2f} s in all; floor {total / cores:.2f} s on {cores} cores;"
        f" idle core-time {idle_total:.2f} s"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.01, help="seconds between samples")
    parser.add_argument("--bin", type=float, default=0.25, help="seconds a row of the table")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="write the samples here")
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    seen, wall, status, own = sample(argv, args.every)
    print("\n".join(report(seen, wall, args.bin, args.cores)), file=sys.stderr)
    print(f"exit status {status}; the sampler's CPU {own:.2f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({str(t): vars(s) for t, s in seen.items()} | {"wall": wall}, fh)
    return status


if __name__ == "__main__":
    sys.exit(main())
