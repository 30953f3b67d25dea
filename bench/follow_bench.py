"""The live daemon following a whole workflow played at a steady rate (issue 30).

Generates a workflow (``--jobs``), plays its dagman.out into a fresh directory at
``--rate`` lines per second (``monitord/tools/player``) while ``pegasus-monitord`` follows it
into SQLite (no dashboard), and reports what the issue asks of it: the daemon's CPU over
the play (CPU seconds / play seconds, i.e. cores; the player's own CPU apart), its peak RSS (VmHWM of the whole run,
and VmRSS sampled every 0.2 s during start-up and during the play) and how long after the last line was
written the daemon ended (it ends on DAGMan's exit line).  The player starts once the
daemon is following with the static events stored (start-up is reported apart).  Whether a
lag is the machine's: the load average and the seconds the daemon's threads waited for a
CPU (``runqueue_wait_s``); ``--course`` keeps VmRSS every 0.2 s in the ``--json``.

    .venv/bin/python bench/follow_bench.py --jobs 20000 --rate 5000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from latency_bench import db_jobs  # noqa: E402  (bench/ is the script's directory)

from monitord.tools.player import Player  # noqa: E402
from monitord.tools.synthetic import generate  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def vm_mb(pid: int, field: str = "VmRSS") -> float | None:
    """``/proc/PID/status``'s ``field`` in MB (VmHWM: the process's peak RSS so far; the
    wait4 figure would be the launcher's, this bench's own, carried over the exec)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_delays(pid: int) -> dict[str, float]:
    """Per thread of ``pid``: seconds it was ready to run but waited for a CPU (schedstat's
    second field): how much a lag owes to the machine's load rather than to the daemon."""
    out: dict[str, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                out[tid] = int(fh.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
    return out


class Sampler(threading.Thread):
    """VmRSS of the daemon every ``period`` s until stopped: the highest and its moment."""

    def __init__(self, pid: int, period: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.peak, self.samples, self.hwm = 0.0, 0, 0.0
        self.course: list[tuple[float, float]] = []  # (seconds since the spawn, VmRSS MB)
        self.waits: dict[str, float] = {}  # thread id -> run-queue wait so far (s)
        self.stop = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(self.period):
            rss, hwm = vm_mb(self.pid), vm_mb(self.pid, "VmHWM")
            if rss is not None and hwm is not None:
                self.course.append((round(time.monotonic() - t0, 1), round(rss, 1)))
                self.waits.update(run_delays(self.pid))
                self.samples += 1
                self.peak, self.hwm = max(self.peak, rss), hwm


def run(args: argparse.Namespace, work: Path) -> dict[str, object]:
    gen = generate(work / "src", args.jobs, seed=args.seed)
    text = gen.dagman_out.read_text(encoding="utf-8")
    # DAGMan's pid: ours, so that the daemon's liveness check finds DAGMan alive.
    gen.dagman_out.write_text(
        re.sub(r"\*\* PID = \d+", f"** PID = {os.getpid()}", text, count=1), encoding="utf-8"
    )
    lines = text.count("\n")
    dest = work / "run"
    player = Player(str(gen.submit_dir), str(dest), lines_per_second=args.rate)
    player.prepare()
    db = work / "follow.db"
    env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(work / "home")}
    err = (work / "daemon.err").open("w")
    daemon = subprocess.Popen(
        [
            args.monitord,
            "--no-dashboard",
            *args.daemon_args.split(),
            "-d",
            f"sqlite:///{db}",
            gen.dagman_out.name,
        ],
        cwd=dest,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    spawned = time.monotonic()
    sampler = Sampler(daemon.pid)
    sampler.start()
    try:
        while not (dest / "monitord.recover").exists() or db_jobs(db) < gen.expected.jobs:
            if time.monotonic() - spawned > 600 or daemon.poll() is not None:
                raise SystemExit(f"the daemon did not start (see {err.name})")
            time.sleep(0.05)
        startup = time.monotonic() - spawned
        startup_peak, sampler.peak = sampler.peak, 0.0
        cpu0 = cpu_seconds(daemon.pid)
        wait0 = sum(sampler.waits.values())
        load0 = os.getloadavg()[0]
        t0 = time.monotonic()
        player0 = resource.getrusage(resource.RUSAGE_THREAD)  # the player runs on this thread
        stats = player.run()
        last_line = time.monotonic()
        player1 = resource.getrusage(resource.RUSAGE_THREAD)
        _, status, usage = os.wait4(daemon.pid, 0)
        ended = time.monotonic()
        daemon.returncode = os.waitstatus_to_exitcode(status)
        sampler.stop.set()
        sampler.join()
    finally:
        sampler.stop.set()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        err.close()
    if daemon.returncode != 0:
        raise SystemExit(f"the daemon exited {daemon.returncode} (see {err.name})")
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    player_cpu = sum(getattr(player1, f) - getattr(player0, f) for f in ("ru_utime", "ru_stime"))
    return {
        "jobs": args.jobs,
        "rate": args.rate,
        "lines": lines,
        "startup_s": round(startup, 2),
        "play_s": round(stats.seconds, 1),
        "cpu_s": round(cpu, 1),
        "cores": round(cpu / (last_line - t0), 3),
        # the player's own CPU (this bench's main thread), not the daemon's
        "player_cpu_s": round(player_cpu, 1),
        "peak_rss_mb": round(sampler.hwm, 1),  # VmHWM at the last sample
        "startup_peak_rss_mb": round(startup_peak, 1),
        "play_peak_rss_mb": round(sampler.peak, 1),
        "lag_after_last_line_s": round(ended - last_line, 2),
        "jobs_in_db": db_jobs(db),
        # threads ready to run but without a CPU, summed (the machine's load, not the daemon)
        "runqueue_wait_s": round(sum(sampler.waits.values()) - wait0, 1),
        "load_avg": [round(load0, 1), round(os.getloadavg()[0], 1)],  # at the play's start, end
        "play_started_s": round(t0 - spawned, 1),
        "course": sampler.course if args.course else None,
    }


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--jobs", type=int, default=20000)
    p.add_argument("--rate", type=float, default=5000.0, help="dagman.out lines per second")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--monitord", default=str(PROJECT / ".venv" / "bin" / "pegasus-monitord"))
    p.add_argument("--daemon-args", default="", help="e.g. --state-dir /dev/null/x: no snapshots")
    p.add_argument("--workdir", help="kept; default: a temporary directory, removed")
    p.add_argument("--json")
    p.add_argument("--course", action="store_true", help="VmRSS every 0.2 s in the --json")
    args = p.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="monitord-follow-"))
    (work / "home").mkdir(parents=True, exist_ok=True)
    try:
        result = run(args, work)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({k: v for k, v in result.items() if k != "course"}))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
