"""Service benchmark: one ``monitord serve`` following 1,000 idle workflows.

Generates N small workflows (``monitord/tools/synthetic/``), cuts each dagman.out in the
middle of the run (DAGMan "paused": its pid line names this benchmark process, so the
liveness check finds it alive), starts the service, attaches every workflow over the
socket and waits until all are caught up.  Then it measures:

* the RSS of the service process (VmRSS, and VmHWM = its peak);
* its CPU use while everything is idle, over ``--idle`` seconds (utime+stime from /proc);
* the pickup delay: ``--samples`` times, a random workflow gets its next dagman.out lines
  appended up to the next job event (a ``ULOG_*`` line, which makes a jobstate.log row),
  and the time until its jobstate.log has grown is taken; p50/p99/max are reported.

Targets (issue 7): RSS < 1 GiB, idle CPU < 1 % of a core, p99 pickup < 1 s.

    .venv/bin/python bench/service_bench.py                 # 1000 workflows, 60 s idle
    .venv/bin/python bench/service_bench.py --workflows 200 --idle 20 --samples 100
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from monitord.tools.synthetic import generate  # noqa: E402

PID_LINE = re.compile(r"\*\* PID = \d+")


def prepare(workdir: Path, count: int, jobs: int) -> list[tuple[Path, list[str]]]:
    """Generated workflows cut mid-run; returns (dagman.out, held-back lines) per workflow."""
    out = []
    me = os.getpid()
    for i in range(count):
        staging = workdir / f"wf{i:04d}.gen"
        gen = generate(staging, jobs, seed=i, name=f"b{i}")
        final = workdir / f"wf{i:04d}"
        staging.rename(final)
        dagman_out = final / gen.dagman_out.name
        lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
        cut = len(lines) // 3
        head = [PID_LINE.sub(f"** PID = {me}", line) for line in lines[:cut]]
        dagman_out.write_text("".join(head), encoding="utf-8")
        out.append((dagman_out, lines[cut:]))
    return out


def attach_all(sock_path: str, dagman_outs: list[Path]) -> None:
    from monitord.daemon.monitor import MonitorConfig
    from monitord.service.protocol import config_to_dict, decode, encode

    for path in dagman_outs:
        config = MonitorConfig(str(path), replay=False, dashboard=False)
        request = {"op": "attach", "config": config_to_dict(config), "wait": False}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(sock_path)
            s.sendall(encode(request))
            reply = decode(s.makefile("rb").readline())
        if reply.get("event") != "accepted":
            raise SystemExit(f"attach refused: {reply}")


def status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=30) as resp:
        return json.loads(resp.read())


def proc_stat(pid: int) -> tuple[float, int, int]:
    """(cpu seconds, rss KiB, peak rss KiB) of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = hwm = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return cpu, rss, hwm


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the service exited")
        try:
            status(port)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the service did not come up")


def pickup(dagman_out: Path, held: list[str], timeout: float = 30.0) -> float | None:
    """Append lines up to the next job event; seconds until jobstate.log has grown."""
    take = 0
    while take < len(held) and "Event: ULOG_" not in held[take]:
        take += 1
    if take >= len(held):
        return None
    chunk, rest = held[: take + 1], held[take + 1 :]
    held[:] = rest
    jobstate = dagman_out.parent / "jobstate.log"
    before = jobstate.stat().st_size
    t0 = time.perf_counter()
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write("".join(chunk))
    deadline = t0 + timeout
    while time.perf_counter() < deadline:
        if jobstate.stat().st_size > before:
            return time.perf_counter() - t0
        time.sleep(0.002)
    return timeout


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workflows", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=8, help="DAG jobs per generated workflow")
    p.add_argument("--idle", type=float, default=60.0, help="seconds of idle CPU measurement")
    p.add_argument("--samples", type=int, default=200, help="pickup-delay samples")
    p.add_argument("--port", type=int, default=19176)
    p.add_argument("--workdir", help="where to generate (default: a temporary directory)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--json", help="write the figures to this file")
    args = p.parse_args(argv)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="service-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    service = None
    try:
        t0 = time.time()
        workflows = prepare(workdir / "wfs", args.workflows, args.jobs)
        print(f"generated {len(workflows)} workflows in {time.time() - t0:.1f} s", flush=True)
        cfg = workdir / "service.toml"
        cfg.write_text(
            f'[service]\nsocket = "{workdir / "sock"}"\nstate_dir = "{workdir / "state"}"\n'
            f'log_level = "warning"\n[http]\nlisten = "127.0.0.1:{args.port}"\n'
        )
        env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(workdir)}
        log = (workdir / "service.log").open("wb")
        service = subprocess.Popen(
            [sys.executable, "-m", "monitord.cli", "serve", "--config", str(cfg)],
            env=env,
            stdout=log,
            stderr=log,
            cwd=PROJECT,
        )
        wait_port(args.port, service)
        t0 = time.time()
        attach_all(str(workdir / "sock"), [w[0] for w in workflows])
        while True:
            snap = status(args.port)
            roots = [w for w in snap["workflows"] if w["lag_bytes"] == 0 and w["jobs"]]
            if len(roots) >= len(workflows):
                break
            time.sleep(1)
        caught_up = time.time() - t0
        print(f"attached and caught up with {len(workflows)} workflows in {caught_up:.1f} s")
        time.sleep(5)  # let start-up work settle
        cpu0, _, _ = proc_stat(service.pid)
        time.sleep(args.idle)
        cpu1, rss, hwm = proc_stat(service.pid)
        idle_pct = 100.0 * (cpu1 - cpu0) / args.idle
        rng = random.Random(1)
        delays = []
        for _ in range(args.samples):
            dagman_out, held = rng.choice(workflows)
            delay = pickup(dagman_out, held)
            if delay is not None:
                delays.append(delay)
            time.sleep(rng.uniform(0.05, 0.25))
        delays.sort()

        def pct(q: float) -> float:
            return delays[min(len(delays) - 1, int(q * len(delays)))]

        figures = {
            "workflows": len(workflows),
            "jobs_per_workflow": args.jobs,
            "rss_mib": round(rss / 1024, 1),
            "peak_rss_mib": round(hwm / 1024, 1),
            "idle_cpu_percent": round(idle_pct, 3),
            "idle_seconds": args.idle,
            "pickup_samples": len(delays),
            "pickup_p50_ms": round(1000 * pct(0.50), 1),
            "pickup_p99_ms": round(1000 * pct(0.99), 1),
            "pickup_max_ms": round(1000 * delays[-1], 1),
            "catch_up_seconds": round(caught_up, 1),
        }
        ok = rss < 1 << 20 and idle_pct < 1.0 and pct(0.99) < 1.0
        print(json.dumps(figures, indent=2))
        print("targets (RSS < 1 GiB, idle CPU < 1 %, p99 < 1 s):", "met" if ok else "NOT met")
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2))
        return 0 if ok else 1
    finally:
        if service is not None and service.poll() is None:
            service.terminate()
            try:
                service.wait(timeout=120)
            except subprocess.TimeoutExpired:
                service.kill()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
