"""What stays fixed for one generated workflow: its people, hosts, paths and random stream.

Every writer gets one Ctx; everything in it, as every later draw, comes from the one
seeded FastRandom, which is what makes a seed give the same directory byte for byte.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from monitord.tools.synthetic.clock import UTC_OFFSET, iso_s
from monitord.tools.synthetic.filewriter import write_text

PEGASUS_VERSION = "5.0.5"

_USERS = ("alice", "bruno", "chen", "dana", "emeka", "farah")
_CPU_MODELS = (
    ("GenuineIntel", "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 2500),
    ("GenuineIntel", "Intel(R) Xeon(R) CPU E5-2650 v4 @ 2.20GHz", 2200),
    ("AuthenticAMD", "AMD EPYC 7302 16-Core Processor", 3000),
    ("AuthenticAMD", "AMD EPYC 7543 32-Core Processor", 2800),
)


class FastRandom(random.Random):
    """``random.Random`` with the pure-Python helpers replaced by one ``random()`` call each.

    The generator draws millions of numbers; ``randint``/``uniform``/``choice`` of the
    stdlib cost several times more than the draw itself.  Still fully seed-deterministic.
    """

    def randint(self, a: int, b: int) -> int:
        return a + int(self.random() * (b - a + 1))

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.random()

    def choice(self, seq):  # type: ignore[no-untyped-def,override]
        return seq[int(self.random() * len(seq))]


@dataclass
class Ctx:
    """Per-workflow constants shared by the writers."""

    rng: FastRandom
    submit_dir: str
    label: str
    wf_name: str
    wf_uuid: str
    user: str
    uid: int
    gid: int
    group: str
    submit_host: str
    submit_ip: str
    bindir: str
    sharedir: str
    scratch: str
    output_dir: str
    properties: str
    wf_stamp: str  # the "-T" DAX timestamp
    wf_time: str  # braindump timestamp (20230303T222333-0800)
    planned_at: int
    submit_machine: str  # rendered machine block of the submit host
    worker_machines: list[tuple[str, str, str]]  # (hostname, ip, machine block)
    sink: Callable[[str, str], None] = write_text  # how per-job files get written

    @property
    def dag(self) -> str:
        return f"{self.wf_name}.dag"


def _machine(host: str, cores: int, ram_kb: int, cpu: tuple[str, str, int]) -> str:
    """A kickstart record's machine section; the %-fields vary per record."""
    vendor, model, speed = cpu
    return (
        "  machine:\n"
        "    page-size: 4096\n"
        "    uname_system: linux\n"
        f"    uname_nodename: {host}\n"
        "    uname_release: 4.18.0-425.10.1.el8_7.x86_64\n"
        "    uname_machine: x86_64\n"
        f"    ram_total: {ram_kb}\n"
        "    ram_free: %(ram_free)d\n"
        "    ram_shared: 221964\n"
        "    ram_buffer: 10616\n"
        "    swap_total: 20971516\n"
        "    swap_free: 18799792\n"
        f"    cpu_count: {cores}\n"
        f"    cpu_speed: {speed}\n"
        f"    cpu_vendor: {vendor}\n"
        f"    cpu_model: {model}\n"
        "    load_min1: %(load1).2f\n"
        "    load_min5: %(load5).2f\n"
        "    load_min15: %(load15).2f\n"
        "    procs_total: %(procs)d\n"
        "    procs_running: %(running)d\n"
        "    procs_sleeping: %(sleeping)d\n"
        "    procs_other: 190\n"
        "    procs_vmsize: 87490216\n"
        "    procs_rss: 9567280\n"
        "    task_total: 1459\n"
        "    task_running: %(running)d\n"
        "    task_sleeping: 1267\n"
        "    task_other: 190\n"
    )


def make_ctx(rng: FastRandom, submit_dir: str, label: str, start: int) -> Ctx:
    user = rng.choice(_USERS)
    wf_uuid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    base = os.path.dirname(submit_dir) or "/"
    planned_at = start - rng.randint(8, 40)
    g = time.gmtime(planned_at + UTC_OFFSET)
    wf_time = (
        f"{g.tm_year:04d}{g.tm_mon:02d}{g.tm_mday:02d}T{g.tm_hour:02d}{g.tm_min:02d}{g.tm_sec:02d}"
        "-0800"
    )
    site_octet = rng.randint(2, 250)
    submit_host = f"submit{rng.randint(1, 9)}.example.edu"
    submit_ip = f"192.0.2.{site_octet}"

    workers = []
    for i in range(rng.randint(8, 32)):
        host = f"node{i + 1:03d}.cluster.example.edu"
        cpu = rng.choice(_CPU_MODELS)
        cores = rng.choice((16, 32, 48, 64))
        workers.append(
            (
                host,
                f"10.{site_octet}.{i // 200}.{i % 200 + 10}",
                _machine(host, cores, cores * 4_000_000, cpu),
            )
        )
    return Ctx(
        rng=rng,
        submit_dir=submit_dir,
        label=label,
        wf_name=f"{label}-0",
        wf_uuid=wf_uuid,
        user=user,
        uid=rng.randint(1000, 9000),
        gid=rng.randint(100, 2000),
        group=rng.choice(("users", "science", "hpc")),
        submit_host=submit_host,
        submit_ip=submit_ip,
        bindir="/usr/bin",
        sharedir="/usr/share/pegasus",
        scratch=f"{base}/scratch/{user}/pegasus/{label}/{os.path.basename(submit_dir)}",
        output_dir=f"{base}/outputs",
        properties=f"pegasus.{rng.randint(10**18, 10**19 - 1)}.properties",
        wf_stamp=iso_s(planned_at - rng.randint(60, 3600)),
        wf_time=wf_time,
        planned_at=planned_at,
        submit_machine=_machine(submit_host, 24, 65_653_728, rng.choice(_CPU_MODELS)),
        worker_machines=workers,
    )
