"""One replay: wall, CPU and peak RSS of the daemon and of its loader child (issue 30, proc30b).

    TZ=UTC .venv/bin/python bench/loader_measure.py DIR/synthetic-0.dag.dagman.out --sql-thread
    TZ=UTC .venv/bin/python bench/loader_measure.py DIR/synthetic-0.dag.dagman.out --sql-process

Removes DIR's stampede databases first, then runs ``monitord replay -q --no-dashboard`` with the
options given.  CPU of the daemon: its own utime + stime, read from ``/proc/<pid>/stat`` once it
is a zombie (ended, not yet reaped); of its child: the zombie's cutime + cstime (the daemon
waits for its child, so the kernel has added the child's CPU there; the child's last sample
is printed beside it as a check).  Peak RSS: VmHWM of each process, sampled every 50 ms.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid: int) -> tuple[str, list[float]]:
    """The process's state letter and its utime, stime, cutime, cstime in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        text = fh.read()
    rest = text[text.rindex(")") + 2 :].split()
    return rest[0], [int(x) / TICK for x in rest[11:15]]


def peak_mb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    try:
        return [
            int(c)
            for task in os.listdir(f"/proc/{pid}/task")
            for c in open(f"/proc/{pid}/task/{task}/children").read().split()
        ]
    except OSError:
        return []


def main(argv: list[str]) -> int:
    dagman_out, options = argv[0], argv[1:]
    for path in glob.glob(os.path.join(os.path.dirname(dagman_out), "*.stampede.db*")):
        os.remove(path)
    load = os.getloadavg()[0]
    cmd = [sys.executable, "-m", "monitord.cli", "replay", "-q", "--no-dashboard", *options]
    began = time.monotonic()
    proc = subprocess.Popen([*cmd, dagman_out], env={**os.environ, "TZ": "UTC"})
    peak: dict[int, int] = {}
    child_cpu: dict[int, float] = {}
    while stat(proc.pid)[0] != "Z":
        for pid in (proc.pid, *children(proc.pid)):
            peak[pid] = max(peak.get(pid, 0), peak_mb(pid))
            if pid != proc.pid:
                try:
                    child_cpu[pid] = sum(stat(pid)[1][:2])
                except OSError:
                    pass
        time.sleep(0.05)
    wall = time.monotonic() - began
    times = stat(proc.pid)[1]
    rc = proc.wait()
    own, kids = times[0] + times[1], times[2] + times[3]
    child_rss = max((v for k, v in peak.items() if k != proc.pid), default=0)
    print(
        f"{' '.join(options) or 'default'} rc={rc} load={load:.2f} wall={wall:.2f} "
        f"cpu_total={own + kids:.2f} daemon_cpu={own:.2f} child_cpu={kids:.2f} "
        f"(sampled {sum(child_cpu.values()):.2f}) daemon_rss={peak.get(proc.pid, 0)}MB "
        f"child_rss={child_rss}MB",
        flush=True,
    )
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
