"""A command's RSS course: VmRSS sampled every 0.2 s, its peak and when, CPU seconds.

    TZ=UTC .venv/bin/python bench/rss_course.py out.json .venv/bin/monitord replay -q DIR/synthetic-0.dag.dagman.out

Prints one JSON line (exit status, wall, user and system CPU of the command, ``ru_maxrss``
of the command, the highest VmRSS sample and its second); ``out.json`` also holds every
sample ``[second, MB]``.  Prefix ``PYTHONPATH=/tmp/old`` (a ``git archive`` of another
commit) to run an older tree with the same venv.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def vm_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main() -> int:
    out, cmd = sys.argv[1], sys.argv[2:]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd)
    samples: list[tuple[float, float]] = []
    while proc.poll() is None:
        rss = vm_rss_mb(proc.pid)
        if rss is not None:
            samples.append((round(time.perf_counter() - started, 2), rss))
        time.sleep(0.2)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = max(samples, key=lambda s: s[1]) if samples else (0.0, 0.0)
    result = {
        "rc": proc.returncode,
        "wall": round(wall, 1),
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "maxrss": round(usage.ru_maxrss / 1024, 1),
        "sampled_peak": peak[1],
        "peak_at": peak[0],
    }
    print(json.dumps(result))
    with open(out, "w") as fh:
        json.dump({**result, "samples": samples}, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
