"""What an ingest process's threads wait on, sampled from ``/proc`` (issue 30, ingest30n).

``bench/timeline.py`` says when a thread used CPU (10 ms ticks); this says what the event
loop and the database writers were doing at each moment: running (or runnable), or the
system call each sleeps in (``epoll_pwait``: the loop waits for the broker or a timer;
``poll``: a writer waits for PostgreSQL; ``futex``: a thread waits for the GIL or for work),
and each thread's run-queue wait (``schedstat``: the host's load, not the process).  The
share of moments at which no thread runs is the process's idle time, by what it waits on.

    .venv/bin/python bench/ingest_threads.py sample MARK OUT &   # MARK: in the environ,
    PYTHONPATH=TREE .venv/bin/python bench/ingest_bench.py ...   # e.g. PYTHONPATH=TREE
    .venv/bin/python bench/ingest_threads.py summary OUT.PID [--bin 0.25]

``sample`` follows each ``monitord.cli ingest`` process whose environment holds MARK (the
bench starts one for the topology, then the timed one) until none starts for 150 s; one
file each (``OUT.PID``).  The sampler reads every 2 ms (~30 % of a core at ~10 threads: run
it on the quietest host there is, and read the idle shares, not the CPU, from it).
"""

from __future__ import annotations

import argparse
import collections
import os
import time
from pathlib import Path

STEP = 0.002
#: x86-64 system call numbers the threads are seen waiting in
SYSCALLS = {"202": "futex", "232": "epoll_wait", "281": "epoll_pwait", "7": "poll", "0": "read"}
Sample = tuple[float, int, str, int, int]  # (time, thread, state, CPU ns, run-queue wait ns)


def _ingest(mark: bytes, seen: set[int]) -> int | None:
    for name in filter(str.isdigit, os.listdir("/proc")):
        pid = int(name)
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if pid not in seen and b"monitord.cli\0ingest" in cmd:
                if mark in Path(f"/proc/{pid}/environ").read_bytes():
                    return pid
        except OSError:
            continue
    return None


def _follow(pid: int) -> list[Sample]:
    rows: list[Sample] = []
    start = time.monotonic()
    while True:
        now = time.monotonic() - start
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return rows
        for tid in tids:
            try:
                call = Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[0]
                cpu, wait, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
            except (OSError, ValueError, IndexError):
                continue
            rows.append((now, int(tid), SYSCALLS.get(call, call), int(cpu), int(wait)))
        time.sleep(STEP)


def sample(mark: str, out: str) -> None:
    seen: set[int] = set()
    while True:
        pid, deadline = None, time.monotonic() + 150
        while pid is None and time.monotonic() < deadline:
            pid = _ingest(mark.encode(), seen)
            time.sleep(0.02)
        if pid is None:
            return
        seen.add(pid)
        rows = _follow(pid)
        lines = [f"pid {pid}", *(" ".join(map(str, r)) for r in rows)]
        Path(f"{out}.{pid}").write_text("\n".join(lines) + "\n")
        print(f"{out}.{pid}: {len(rows)} samples")


def _load(
    path: str,
) -> tuple[int, dict[float, dict[int, str]], dict[int, list[tuple[float, int, int]]]]:
    lines = Path(path).read_text().splitlines()
    pid = int(lines[0].split()[1])
    states: dict[float, dict[int, str]] = collections.defaultdict(dict)
    cpu: dict[int, list[tuple[float, int, int]]] = collections.defaultdict(list)
    for line in lines[1:]:
        t, tid, state, ns, wait = line.split()
        states[float(t)][int(tid)] = state
        cpu[int(tid)].append((float(t), int(ns), int(wait)))
    return pid, states, cpu


def _window(loop: list[tuple[float, int, int]]) -> tuple[float, float]:
    """From the first to the last 0.1 s in which the loop used more than half a core."""
    first = last = None
    j = 0
    for t, ns, _ in loop:
        while j < len(loop) and loop[j][0] < t + 0.1:
            j += 1
        if j == len(loop):
            break
        if (loop[j][1] - ns) / 1e9 / (loop[j][0] - t) > 0.5:
            first = t if first is None else first
            last = loop[j][0]
    assert first is not None and last is not None, "the loop never ran"
    return first, last


def summary(path: str, width: float) -> None:
    pid, states, cpu = _load(path)
    start, end = _window(cpu[pid])
    used = {tid: (s[-1][1] - s[0][1]) / 1e9 for tid, s in cpu.items()}
    threads = sorted((t for t in used if used[t] > 0.05), key=lambda t: -used[t])
    writers = [t for t in threads if t != pid]
    moments = [t for t in sorted(states) if start <= t <= end]
    kinds: collections.Counter[str] = collections.Counter()
    idle: collections.Counter[tuple[str, str]] = collections.Counter()
    bins: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for t in moments:
        at = states[t]
        loop, writing = at.get(pid) == "running", [at.get(w) == "running" for w in writers]
        kind = {(True, True): "loop+writer", (True, False): "loop", (False, True): "writer"}
        name = kind.get((loop, any(writing)), "none running")
        kinds[name] += 1
        if name == "none running":
            waits = collections.Counter(at.get(w, "-") for w in writers)
            idle[(at.get(pid, "-"), ", ".join(f"{n} {s}" for s, n in sorted(waits.items())))] += 1
        cell = bins[int((t - start) / width)]
        cell[0], cell[1], cell[2] = cell[0] + 1, cell[1] + loop, cell[2] + (name == "none running")
    n = len(moments)
    print(f"window {start:.2f}-{end:.2f} s, {n} moments; threads' CPU s (loop = {pid}):")
    for tid in threads:
        first = min(cpu[tid], key=lambda r: abs(r[0] - start))
        last = min(cpu[tid], key=lambda r: abs(r[0] - end))
        print(
            f"  {tid}{' (loop)' if tid == pid else ''}: CPU {(last[1] - first[1]) / 1e9:.2f} s,"
            f" run-queue wait {(last[2] - first[2]) / 1e9:.2f} s of {end - start:.2f} s"
        )
    for name, k in kinds.most_common():
        print(f"  {name}: {100 * k / n:.1f} %")
    for (loop_state, held), k in idle.most_common(8):
        print(f"    none running {100 * k / n:.1f} %: loop {loop_state}; writers {held}")
    cells = (f"{100 * c[1] // c[0]}/{100 * c[2] // c[0]}" for _, c in sorted(bins.items()))
    print(f"  by {width} s (loop running % / none running %): " + " ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sample")
    s.add_argument("mark")
    s.add_argument("out")
    m = sub.add_parser("summary")
    m.add_argument("file")
    m.add_argument("--bin", type=float, default=0.25)
    args = ap.parse_args()
    if args.what == "sample":
        sample(args.mark, args.out)
    else:
        summary(args.file, args.bin)


if __name__ == "__main__":
    main()
