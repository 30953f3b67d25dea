"""CPU seconds of each thread (and child process) of one ``monitord replay`` (issue 30).

Samples ``/proc/<pid>/task/*/stat`` of the replay, and ``/proc/<child>/stat`` of each of its
child processes (``--sql-process``), every 50 ms; prints what each had used at its last sample
(a thread's last 50 ms may be missed).  Python 3.11 gives its threads no OS names: the
parser thread is the busiest, then ``sink-sql``, the main thread, ``sink-dashboard``.  Run it on a copy of a generated workflow:

    TZ=UTC .venv/bin/python bench/replay_threads.py DIR/synthetic-0.dag.dagman.out [--sql-process]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _cpu(stat: str) -> float:
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def sample(pid: int, seen: dict[str, tuple[str, float]]) -> None:
    """By task or process id: its name (the last non-empty one seen) and CPU seconds."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            name = (task / "comm").read_text().strip()
            seen[task.name] = (f"thread {name} ({task.name})", _cpu((task / "stat").read_text()))
        except OSError:
            continue
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
                name = f"process {title[:60]} ({proc.name})" if title else seen[proc.name][0]
                seen[proc.name] = (name, _cpu(stat))
        except (OSError, ValueError, IndexError, KeyError):
            continue


def main() -> int:
    dagman_out, *extra = sys.argv[1:]
    cmd = [sys.executable, "-m", "monitord.cli", "replay", "-q", *extra, dagman_out]
    began = time.monotonic()
    proc = subprocess.Popen(cmd)
    seen: dict[str, tuple[str, float]] = {}
    while proc.poll() is None:
        sample(proc.pid, seen)
        time.sleep(0.05)
    wall = time.monotonic() - began
    print(
        f"{' '.join(extra) or 'thread'}: exit {proc.returncode}, {wall:.1f} s wall, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for name, cpu in sorted(seen.values(), key=lambda kv: -kv[1]):
        if cpu >= 0.05:
            print(f"  {cpu:7.2f} s  {name}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
