"""Synthetic submit directories of a *finished* Pegasus 5.x / HTCondor 10 workflow.

Real submit directories are small or private; benchmarks and demos need big,
reproducible ones.  This module plans a DAG of create-dir, stage-in, compute,
stage-out, register and cleanup jobs, then simulates DAGMan 10.2.5 running it
(5-second event cycles, a pool of execute slots, category throttles, retries)
and writes every file pegasus-monitord reads, in the shapes the real tools
write them: braindump, ``.dag``, ``static.bp``, job ``.sub`` files, the
``dagman.out``, kickstart YAML ``.out.NNN`` records, PegasusLite ``.err.NNN``
files and register ``.in`` files.

Everything is derived from one ``random.Random(seed)``, so a seed gives the
same directory byte for byte (apart from the absolute submit-dir path).
Writes stream: per-attempt files are written when the attempt is simulated and
``dagman.out`` goes through a buffered file, so 100k jobs need neither the log
nor the records in memory.

Times are written for America/Los_Angeles in winter (fixed -08:00, start dates
in January/February so no DST change falls inside a run): replay with
``TZ=America/Los_Angeles`` to get the epochs the kickstart records carry.
"""

from __future__ import annotations

import argparse
import calendar
import heapq
import json
import math
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, TextIO

PEGASUS_VERSION = "5.0.5"
CONDOR_VERSION = "$CondorVersion: 10.2.5 2023-02-27 BuildID: 631644 PackageID: 10.2.5-1 $"
UTC_OFFSET = -8 * 3600  # PST; see the module docstring
_TZ_SUFFIX = "-08:00"

# Pegasus job classes (pegasus_job_class / job.info type).
COMPUTE, STAGE_IN, STAGE_OUT, REGISTER, CREATE_DIR, CLEANUP = 1, 2, 3, 4, 6, 8
TYPE_DESC = {
    COMPUTE: "compute",
    STAGE_IN: "stage-in-tx",
    STAGE_OUT: "stage-out-tx",
    REGISTER: "registration",
    CREATE_DIR: "create-dir",
    CLEANUP: "cleanup",
}
# The planner's default category throttles (MAXJOBS lines); honoured by the simulation.
THROTTLES = {"registration": 1, "stagein": 10, "cleanup": 4, "stageout": 10}
SCAN_INTERVAL = 5  # DAGMAN_USER_LOG_SCAN_INTERVAL
MAX_SUBMITS_PER_CYCLE = 100  # DAGMAN_MAX_SUBMITS_PER_INTERVAL
MAX_JOBS_IDLE = 1000  # DAGMAN_MAX_JOBS_IDLE
MIN_GROUP_JOBS = 6  # stage-in, compute, merge, stage-out, register, cleanup
WRITER_CHILDREN = 1  # file-creating child processes for big workflows

_USERS = ("alice", "bruno", "chen", "dana", "emeka", "farah")
_PARALLEL_XFORMS = ("findrange", "preprocess", "keg", "transform", "filter")
_CPU_MODELS = (
    ("GenuineIntel", "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 2500),
    ("GenuineIntel", "Intel(R) Xeon(R) CPU E5-2650 v4 @ 2.20GHz", 2200),
    ("AuthenticAMD", "AMD EPYC 7302 16-Core Processor", 3000),
    ("AuthenticAMD", "AMD EPYC 7543 32-Core Processor", 2800),
)
_MYSIN = "Warning: mysin has length 0 (ignore if produced by DAGMan; see gittrac #4987, #5031)"
_TABLE_HEAD = " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile"
_TABLE_RULE = "  ===     ===      ===     ===     ===        ===      ===      ==="


# --------------------------------------------------------------------------- time formats


@lru_cache(maxsize=8192)
def dagman_time(t: int) -> str:
    """``MM/DD/YY HH:MM:SS`` local time, as DAGMan prints it."""
    g = time.gmtime(t + UTC_OFFSET)
    return f"{g.tm_mon:02d}/{g.tm_mday:02d}/{g.tm_year % 100:02d} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"


@lru_cache(maxsize=8192)
def _iso_s(t: int) -> str:
    g = time.gmtime(t + UTC_OFFSET)
    return (
        f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}T"
        f"{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}{_TZ_SUFFIX}"
    )


def _iso_ms(t: float) -> str:
    sec = math.floor(t)
    ms = min(999, int(round((t - sec) * 1000)))
    return f"{_iso_s(sec)[:19]}.{ms:03d}{_TZ_SUFFIX}"


@lru_cache(maxsize=8192)
def _log_time(t: int) -> str:
    """``YYYY-MM-DD HH:MM:SS`` local time (PegasusLite stderr)."""
    return _iso_s(t)[:19].replace("T", " ")


@lru_cache(maxsize=64)
def _utc_second(sec: int) -> str:
    g = time.gmtime(sec)
    return f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}T{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"


def _planner_ts(t: float) -> str:
    """The planner's static.bp stamp: a monotonic clock rendered as a 1970 UTC date."""
    sec = int(t)
    return f"{_utc_second(sec)}.{int((t - sec) * 1_000_000):06d}Z"


class _FastRandom(random.Random):
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


_WRITER_CHILD = """
import os, sys
src = sys.stdin.buffer
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
while True:
    head = src.readline()
    if not head:
        break
    plen, dlen = map(int, head.split())
    path = src.read(plen)
    data = src.read(dlen)
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
"""


class _FileWriter:
    """Creates the per-job files in child processes fed through pipes.

    File creation is syscall-bound (~100 us per file on a VM disk).  A thread
    cannot overlap it with generation: every syscall return waits for the GIL
    (the convoy effect made a thread slower than writing inline).  Child
    processes use the other cores; each submit subdirectory always goes to the
    same child, and the pipes bound memory whatever the workflow size.  Small
    workflows write inline, where starting children is not worth it.
    """

    def __init__(self, children: int = 0) -> None:
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WRITER_CHILD],
                stdin=subprocess.PIPE,
                bufsize=1 << 20,
            )
            for _ in range(children)
        ]
        self._route: dict[str, IO[bytes]] = {}

    def write(self, path: str, text: str) -> None:
        data = text.encode()
        if not self._procs:
            _write_bytes(path, data)
            return
        folder = path[: path.rfind("/")]
        pipe = self._route.get(folder)
        if pipe is None:
            pipe = self._procs[len(self._route) % len(self._procs)].stdin
            assert pipe is not None
            self._route[folder] = pipe
        raw = path.encode()
        try:
            pipe.write(b"%d %d\n%s%s" % (len(raw), len(data), raw, data))
        except BrokenPipeError:
            raise OSError("synthetic file writer died") from None

    def close(self) -> None:
        failed = []
        for proc in self._procs:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except BrokenPipeError:
                pass
            if proc.wait() != 0:
                failed.append(proc.returncode)
        if failed:
            raise OSError(f"synthetic file writer failed (exit {failed})")


def _write_bytes(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the planned DAG


class _Node:
    """One DAG node plus its simulated run state."""

    __slots__ = (
        "idx",
        "name",
        "kind",
        "xform",
        "task",
        "argv",
        "priority",
        "category",
        "children",
        "parents",
        "waiting",
        "fate",
        "attempt",
        "cluster",
        "inputs",
        "outputs",
        "state",
        "subdir",
    )

    def __init__(self, idx: int, name: str, kind: int, xform: str, priority: int) -> None:
        self.idx = idx
        self.name = name
        self.kind = kind
        self.xform = xform
        self.task = ""  # task id ("ID0000001") for compute jobs
        self.argv = ""  # task argv for compute jobs
        self.priority = priority
        self.category: str | None = None
        self.children: list[_Node] = []
        self.parents: list[_Node] = []
        self.waiting = 0
        self.fate = 0  # 0 succeeds, 1 fails once then succeeds, 2 always fails
        self.attempt = -1  # index of the current attempt (output counter)
        self.cluster = 0  # HTCondor cluster id of the current attempt
        self.inputs: list[tuple[str, int]] = []  # (lfn, size)
        self.outputs: list[tuple[str, int]] = []
        self.state = "unready"
        self.subdir = "00/00"  # submit-dir bucket, see _assign_subdirs


def _edge(parent: _Node, child: _Node) -> None:
    parent.children.append(child)
    child.parents.append(parent)


def _assign_subdirs(nodes: list[_Node]) -> list[_Node]:
    """Bucket jobs like the planner's Hashed submit mapper.

    Its documented defaults are two directory levels, 5 files per job and 256
    files per directory, so 51 jobs share a leaf: ``00/00``, ``00/01``, ...
    Small workflows all land in ``00/00`` like the samples.  (It also matters for
    speed: creating files in one directory of 300k entries is ~8x slower.)
    """
    per_dir = 256 // 5
    for node in nodes:
        bucket = node.idx // per_dir
        node.subdir = f"{bucket // 256:02x}/{bucket % 256:02x}"
    return nodes


def plan_dag(rng: random.Random, jobs: int, label: str) -> list[_Node]:
    """Lay out ``jobs`` nodes: one create-dir, then pipelines of
    stage-in -> k parallel computes -> merge compute -> stage-out -> (register, cleanup).
    """
    if jobs < 1:
        raise ValueError("a workflow needs at least one job")
    nodes: list[_Node] = []
    task_no = 0

    def add(name: str, kind: int, xform: str, priority: int, category: str | None = None) -> _Node:
        node = _Node(len(nodes), name, kind, xform, priority)
        node.category = category
        nodes.append(node)
        return node

    def compute(xform: str, priority: int) -> _Node:
        nonlocal task_no
        task_no += 1
        node = add(f"{xform}_ID{task_no:07d}", COMPUTE, xform, priority)
        node.task = f"ID{task_no:07d}"
        return node

    create = add(f"create_dir_{label}_0_local", CREATE_DIR, "pegasus::dirmanager", 800)
    if jobs <= MIN_GROUP_JOBS:  # too small for a pipeline: a chain of computes
        prev = create
        for i in range(jobs - 1):
            node = compute("keg", 10)
            node.inputs = [(f"f.chain.{i}", rng.randint(200, 50_000))]
            node.outputs = [(f"f.chain.{i + 1}", rng.randint(200, 50_000))]
            node.argv = f"-a keg -T 30 -i f.chain.{i} -o f.chain.{i + 1}"
            _edge(prev, node)
            prev = node
        return _assign_subdirs(nodes)

    remaining, group = jobs - 1, 0
    while remaining > 0:
        k = rng.randint(3, 8)
        if remaining - (k + 5) < MIN_GROUP_JOBS:
            k = remaining - 5
        remaining -= k + 5
        g = group
        group += 1
        xform = rng.choice(_PARALLEL_XFORMS)
        infile = (f"f.{g}.in", rng.randint(10_000, 50_000_000))
        stage_in = add(f"stage_in_local_local_{g}_0", STAGE_IN, "pegasus::transfer", 700, "stagein")
        stage_in.outputs = [infile]
        _edge(create, stage_in)
        merge_inputs = []
        parallel = []
        for j in range(k):
            node = compute(xform, 10)
            out = (f"f.{g}.{j}", rng.randint(1_000, 20_000_000))
            node.inputs, node.outputs = [infile], [out]
            node.argv = f"-a {xform} -T {rng.randint(10, 300)} -i {infile[0]} -o {out[0]}"
            merge_inputs.append(out)
            parallel.append(node)
            _edge(stage_in, node)
        merge = compute("analyze", 20)
        merge.inputs = merge_inputs
        merge.outputs = [(f"f.{g}.out", rng.randint(1_000, 5_000_000))]
        if rng.random() < 0.5:
            merge.outputs.append((f"f.{g}.summary", rng.randint(100, 20_000)))
        outs = " ".join(lfn for lfn, _ in merge.outputs)
        ins = " ".join(lfn for lfn, _ in merge_inputs)
        merge.argv = f"-a analyze -T {rng.randint(10, 300)} -i {ins} -o {outs}"
        for node in parallel:
            _edge(node, merge)
        stage_out = add(
            f"stage_out_local_local_{g}_0", STAGE_OUT, "pegasus::transfer", 900, "stageout"
        )
        stage_out.inputs = list(merge.outputs)
        _edge(merge, stage_out)
        register = add(f"register_local_{g}_0", REGISTER, "pegasus::rc-client", 30, "registration")
        register.inputs = list(merge.outputs)
        _edge(stage_out, register)
        cleanup = add(f"clean_up_local_level_4_{g}", CLEANUP, "pegasus::cleanup", 1000, "cleanup")
        _edge(stage_out, cleanup)
    return _assign_subdirs(nodes)


# --------------------------------------------------------------------------- options and result


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


@dataclass(frozen=True)
class Expected:
    """Row counts a correct monitord replay must produce for the generated directory."""

    jobs: int
    job_instances: int
    jobstates: int
    invocations: int
    workflowstates: int
    tasks: int
    retried_jobs: int
    failed_jobs: int
    futile_jobs: int
    dagman_exit: int


@dataclass(frozen=True)
class Generated:
    """Where the directory is and what it contains."""

    submit_dir: Path
    dagman_out: Path
    wf_uuid: str
    dag_lines: int
    expected: Expected
    seconds: float


@dataclass
class _Ctx:
    """Per-workflow constants shared by the writers."""

    rng: _FastRandom
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
    sink: Callable[[str, str], None] = _write  # how per-job files get written

    @property
    def dag(self) -> str:
        return f"{self.wf_name}.dag"


def _make_ctx(rng: _FastRandom, submit_dir: str, label: str, start: int) -> _Ctx:
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

    def machine(host: str, cores: int, ram_kb: int, cpu: tuple[str, str, int]) -> str:
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

    workers = []
    for i in range(rng.randint(8, 32)):
        host = f"node{i + 1:03d}.cluster.example.edu"
        cpu = rng.choice(_CPU_MODELS)
        cores = rng.choice((16, 32, 48, 64))
        workers.append(
            (
                host,
                f"10.{site_octet}.{i // 200}.{i % 200 + 10}",
                machine(host, cores, cores * 4_000_000, cpu),
            )
        )
    return _Ctx(
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
        wf_stamp=_iso_s(planned_at - rng.randint(60, 3600)),
        wf_time=wf_time,
        planned_at=planned_at,
        submit_machine=machine(submit_host, 24, 65_653_728, rng.choice(_CPU_MODELS)),
        worker_machines=workers,
    )


# --------------------------------------------------------------------------- static files


def _post_cmd(ctx: _Ctx, node: _Node) -> str:
    lite = " -s PegasusLite:+exitcode+0" if node.kind == COMPUTE else ""
    return (
        f"{ctx.bindir}/pegasus-exitcode  -r $RETURN{lite} -l {ctx.wf_name}.exitcode.log "
        f"-M {ctx.wf_name}.cache.meta   .//{node.subdir}/{node.name}.out"
    )


def _job_exec_argv(ctx: _Ctx, node: _Node) -> tuple[str, str | None]:
    """(executable, arguments) as the planner puts them in job.info and the .sub file."""
    ks = f"-N null -i - -R local  -L {ctx.label} -T {ctx.wf_stamp}"
    lite = f"{ctx.sharedir}/sh/pegasus-lite-local.sh"
    kick = f"{ctx.bindir}/../bin/pegasus-kickstart"
    if node.kind == COMPUTE:
        return f"{ctx.submit_dir}/{node.subdir}/{node.name}.sh", None
    if node.kind == CREATE_DIR:
        return lite, f"pegasus-kickstart  -n pegasus::dirmanager {ks} pegasus-transfer "
    if node.kind == CLEANUP:
        return lite, f"pegasus-kickstart  -n pegasus::cleanup {ks} pegasus-transfer "
    if node.kind == STAGE_OUT:
        return lite, (
            f"{kick}  -n pegasus::transfer {ks} {ctx.bindir}/../bin/pegasus-transfer  --threads 2 -m 1"
        )
    if node.kind == STAGE_IN:
        return (
            kick,
            f" -n pegasus::transfer {ks} {ctx.bindir}/../bin/pegasus-transfer  --threads 2 ",
        )
    return kick, (  # REGISTER
        f" -n pegasus::rc-client -N null -R local  -L {ctx.label} -T {ctx.wf_stamp} "
        f"{ctx.bindir}/pegasus-rc-client --prefix pegasus.catalog.replica.output "
        f"--conf {ctx.submit_dir}/{ctx.properties} -v --insert {ctx.submit_dir}/{node.subdir}/{node.name}.in"
    )


def write_braindump(ctx: _Ctx) -> None:
    """All the keys the planner writes, in its order."""
    base = os.path.dirname(ctx.submit_dir)
    _write(
        f"{ctx.submit_dir}/braindump.yml",
        f'user: "{ctx.user}"\n'
        "grid_dn: null\n"
        f'submit_hostname: "{ctx.submit_host}"\n'
        f'root_wf_uuid: "{ctx.wf_uuid}"\n'
        f'wf_uuid: "{ctx.wf_uuid}"\n'
        f'dax: "{base}/workflow.yml"\n'
        f'dax_label: "{ctx.label}"\n'
        'dax_index: "0"\n'
        'dax_version: "5.0.4"\n'
        f'pegasus_wf_name: "{ctx.wf_name}"\n'
        f'timestamp: "{ctx.wf_time}"\n'
        f'basedir: "{base}"\n'
        f'submit_dir: "{ctx.submit_dir}"\n'
        f'planner: "{ctx.bindir}/pegasus-plan"\n'
        f'planner_version: "{PEGASUS_VERSION}"\n'
        'pegasus_build: "20230217201750Z"\n'
        'planner_arguments: "\\"--conf pegasus.properties --dir submit --sites condorpool '
        '--output-sites local --cleanup inplace --force workflow.yml \\""\n'
        'jsd: "jobstate.log"\n'
        f'rundir: "{os.path.basename(ctx.submit_dir)}"\n'
        f'bindir: "{ctx.bindir}"\n'
        'vogroup: "pegasus"\n'
        'uses_pmc: "false"\n'
        f'properties: "{ctx.properties}"\n'
        f'condor_log: "{ctx.wf_name}.log"\n'
        f'dag: "{ctx.dag}"\n'
        'type: "dag"\n'
        f'notify: "{ctx.wf_name}.notify"\n',
    )


def write_dag(ctx: _Ctx, nodes: list[_Node]) -> int:
    """The planner's .dag, streamed; returns its line count."""
    rule = "#" * 70
    count = 0
    with open(f"{ctx.submit_dir}/{ctx.dag}", "w", encoding="utf-8", buffering=1 << 20) as fh:
        head = [rule, "# PEGASUS WMS GENERATED DAG FILE", f"# DAG {ctx.label}"]
        head += ["# Index = 0, Count = null", rule]
        head += [f"MAXJOBS {cat} {n}" for cat, n in THROTTLES.items()]
        fh.write("\n".join(head) + "\n\n")
        count += len(head) + 1
        for node in nodes:
            name = node.name
            category = f"CATEGORY {name} {node.category}\n" if node.category else ""
            fh.write(
                f"JOB {name} {node.subdir}/{name}.sub\n"
                f"SCRIPT POST {name} {_post_cmd(ctx, node)}\n"
                f"PRIORITY {name} {node.priority}\n"
                f"RETRY {name} 1\n"
                f"{category}"
                f'VARS {name} +DAGNodeRetry="$(RETRY)"\n\n'
            )
            count += 6 + (1 if category else 0)
        for node in nodes:
            for child in node.children:
                fh.write(f"PARENT  {node.name} CHILD {child.name}\n")
                count += 1
        fh.write(f"{rule}\n# End of DAG\n{rule}\n")
    return count + 3


def _bp(value: str) -> str:
    return '"' + value.replace('"', '\\"') + '"'


def write_static_bp(ctx: _Ctx, nodes: list[_Node]) -> None:
    """task.info/task.edge, the metadata block, job.info, wf.map.task_job, job.edge."""
    rng = ctx.rng
    clock = rng.uniform(100_000.0, 5_000_000.0)  # planner's monotonic clock, seconds
    xid = f"xwf.id={ctx.wf_uuid}"
    path = f"{ctx.submit_dir}/{ctx.wf_name}.static.bp"
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as fh:
        rand = rng.random

        def emit(body: str, step: float = 0.00015) -> None:
            nonlocal clock
            clock += step * (0.5 + rand())
            fh.write(f"ts={_planner_ts(clock)} {body}\n")

        computes = [n for n in nodes if n.kind == COMPUTE]
        for n in computes:
            emit(
                f'event=task.info {xid} task.id="{n.task}" type="1" type_desc="compute" '
                f"transformation={_bp(n.xform)} argv={_bp(n.argv)}"
            )
        for n in computes:
            for c in n.children:
                if c.kind == COMPUTE:
                    emit(
                        f'event=task.edge {xid} parent.task.id="{n.task}" child.task.id="{c.task}"'
                    )
        emit(f"event=static.meta.start {xid}", 0.02)
        emit(f'event=xwf.meta {xid} key="wf.api" value="python"')
        for n in computes:
            if n.xform == "analyze":
                emit(f'event=task.meta {xid} task.id="{n.task}" key="stage" value="merge"')
        seen: set[str] = set()
        for n in computes:
            for lfn, size in n.inputs:
                if lfn not in seen and n.parents and n.parents[0].kind != COMPUTE:
                    seen.add(lfn)
                    emit(f'event=rc.meta {xid} lfn.id="{lfn}" key="size" value="{size}"')
        for n in computes:
            for lfn, _ in n.inputs + n.outputs:
                emit(f'event=wf.map.file {xid} lfn.id="{lfn}" task.id="{n.task}"')
        emit(f"event=static.meta.end {xid}")
        clock += 0.17
        for n in nodes:
            executable, argv = _job_exec_argv(ctx, n)
            argv_attr = f" argv={_bp(argv)}" if argv is not None else ""
            emit(
                f'event=job.info {xid} job.id="{n.name}" submit_file="{n.subdir}/{n.name}.sub" '
                f'type="{n.kind}" type_desc="{TYPE_DESC[n.kind]}" clustered="0" max_retries="1" '
                f'executable="{executable}"{argv_attr} task_count="{1 if n.kind == COMPUTE else 0}"',
                0.0003,
            )
        for n in computes:
            emit(f'event=wf.map.task_job {xid} job.id="{n.name}" task.id="{n.task}"')
        for n in nodes:
            for c in n.children:
                emit(f'event=job.edge {xid} parent.job.id="{n.name}" child.job.id="{c.name}"')


def write_sub(ctx: _Ctx, node: _Node) -> None:
    """A job submit file with all the +pegasus_* classads."""
    sd = ctx.submit_dir
    name = node.name
    executable, argv = _job_exec_argv(ctx, node)
    head = (
        "######################################################################\n"
        "# PEGASUS WMS GENERATED SUBMIT FILE\n"
        f"# DAG : {ctx.label}, Index = 0, Count = null\n"
        f"# SUBMIT FILE NAME : {name}.sub\n"
        "######################################################################\n"
        "stream_error  = false\n"
        "stream_output = false\n"
    )
    ident = (
        f"CONDOR_JOBID=$(cluster).$(process) PEGASUS_WF_UUID={ctx.wf_uuid} "
        f"PEGASUS_WF_LABEL={ctx.label} PEGASUS_DAG_JOB_ID={name}"
    )
    if node.kind == COMPUTE:
        outs = ",".join(lfn for lfn, _ in node.outputs)
        ins = ",".join(f"{sd}/{lfn}" for lfn, _ in node.inputs)
        body = (
            f'environment = "LANG=en_US.UTF-8 {ident} PEGASUS_SITE=condorpool"\n'
            "+WantIOProxy = True\n"
            f"error = {sd}//{node.subdir}/{name}.err\n"
            f"executable = {executable}\n"
            f"initialdir = {ctx.scratch}\n"
            f"log = {sd}/{ctx.wf_name}.log\n"
            "notification = NEVER\n"
            f"output = {sd}//{node.subdir}/{name}.out\n"
            "periodic_release = False\n"
            "periodic_remove = (JobStatus == 5) && ((CurrentTime - EnteredCurrentStatus) > 10)\n"
            f"priority = {node.priority}\n"
            "request_memory = 1024\n"
            "should_transfer_files = YES\n"
            "submit_event_user_notes = pool:condorpool\n"
            "transfer_executable = true\n"
            f"transfer_input_files = {sd}/pegasus-worker-{PEGASUS_VERSION}-x86_64_rhel_8.tar.gz,"
            f"{sd}/pegasus-lite-common.sh,{ins}\n"
            f"transfer_output_files = {outs}\n"
            "universe = vanilla\n"
            "when_to_transfer_output = ON_EXIT\n"
        )
        site = "condorpool"
    else:
        env_path = (
            f" PATH={ctx.bindir}:/usr/local/bin:/usr/bin:/usr/local/sbin:/usr/sbin"
            if node.kind != STAGE_IN
            else ""
        )
        stdin = (
            f"input = {sd}//{node.subdir}/{name}.in\n"
            if node.kind in (CREATE_DIR, CLEANUP, STAGE_IN, STAGE_OUT)
            else ""
        )
        connect = (
            " _PEGASUS_CONNECT_STDIN=true" if node.kind in (CREATE_DIR, CLEANUP, STAGE_OUT) else ""
        )
        body = (
            f'environment = "LANG=en_US.UTF-8{env_path} {ident} PEGASUS_SITE=local '
            f'PEGASUS_BIN_DIR={ctx.bindir}{connect}"\n'
            f'arguments = "{argv}"\n'
            f"error = {sd}//{node.subdir}/{name}.err\n"
            f"executable = {executable}\n"
            f"{stdin}"
            f"log = {sd}/{ctx.wf_name}.log\n"
            "notification = NEVER\n"
            f"output = {sd}//{node.subdir}/{name}.out\n"
            "periodic_release = False\n"
            "periodic_remove = (JobStatus == 5) && ((CurrentTime - EnteredCurrentStatus) > 1800)\n"
            f"priority = {node.priority}\n"
            "submit_event_user_notes = pool:local\n"
            "transfer_executable = false\n"
            "universe = local\n"
        )
        site = "local"
    classads = (
        '+pegasus_generator = "Pegasus"\n'
        f'+pegasus_root_wf_uuid = "{ctx.wf_uuid}"\n'
        f'+pegasus_wf_uuid = "{ctx.wf_uuid}"\n'
        f'+pegasus_version = "{PEGASUS_VERSION}"\n'
        f'+pegasus_wf_name = "{ctx.wf_name}"\n'
        f'+pegasus_wf_time = "{ctx.wf_time}"\n'
        f'+pegasus_wf_xformation = "{node.xform}"\n'
        f'+pegasus_wf_dax_job_id = "{node.task or "null"}"\n'
        f'+pegasus_wf_dag_job_id = "{name}"\n'
        f"+pegasus_job_class = {node.kind}\n"
        f'+pegasus_site = "{site}"\n'
        "+pegasus_job_runtime = 0\n"
        "+pegasus_cores = 1\n"
        "+pegasus_gpus = 1\n"
        "+pegasus_cluster_size = 1\n"
        "queue\n"
        "######################################################################\n"
        "# END OF SUBMIT FILE\n"
        "######################################################################\n"
    )
    ctx.sink(f"{sd}/{node.subdir}/{name}.sub", head + body + classads)


def write_in(ctx: _Ctx, node: _Node) -> None:
    """A register job's stdin: the lfn/pfn list monitord turns into rc.pfn events.

    Transfer jobs also have JSON ``.in`` specs in a real run, but nothing reads
    them after the run; at ~100 us per file creation they are left out.
    """
    if node.kind != REGISTER:
        return
    text = "".join(f'{lfn} file://{ctx.output_dir}/{lfn} site="local"\n' for lfn, _ in node.inputs)
    ctx.sink(f"{ctx.submit_dir}/{node.subdir}/{node.name}.in", text)


def write_aux(ctx: _Ctx) -> None:
    """Files the planner leaves beside the DAG (not read by monitord, there for realism)."""
    sd = ctx.submit_dir
    _write(
        f"{sd}/{ctx.properties}",
        "#Pegasus USER PROPERTIES AT RUNTIME\n#ESCAPES IN VALUES ARE INTRODUCED\n"
        f"pegasus.home.sharedstatedir={ctx.sharedir}\n"
        "pegasus.catalog.replica.output=JDBCRC\n"
        f"pegasus.home.bindir={ctx.bindir}\n"
        "dagman.maxpre=1\n"
        "pegasus.catalog.replica.output.db.driver=sqlite\n"
        f"pegasus.catalog.replica.output.db.url=jdbc\\:sqlite\\:{sd}/{ctx.wf_name}.replicas.db\n"
        "pegasus.transfer.worker.package=true\n"
        "pegasus.transfer.arguments=-m 1\n",
    )
    _write(f"{sd}/{ctx.wf_name}.notify", "")
    _write(f"{sd}/{ctx.dag}.lib.err", "")
    _write(
        f"{sd}/{ctx.dag}.condor.sub",
        f"# Filename: {ctx.dag}.condor.sub\n# Generated by condor_submit_dag {ctx.dag}\n"
        "universe\t= scheduler\nexecutable\t= /usr/bin/condor_dagman\ngetenv\t\t= True\n"
        f"output\t\t= {ctx.dag}.lib.out\nerror\t\t= {ctx.dag}.lib.err\n"
        f"log\t\t= {ctx.dag}.dagman.log\nremove_kill_sig\t= SIGUSR1\n"
        f'arguments\t= "-p 0 -f -l . -Lockfile {ctx.dag}.lock -AutoRescue 1 -DoRescueFrom 0 '
        f'-Dag {ctx.dag} -MaxPost 20 -Suppress_notification -Dagman /usr/bin/condor_dagman"\n'
        f'+pegasus_wf_uuid="{ctx.wf_uuid}"\n+pegasus_root_wf_uuid="{ctx.wf_uuid}"\n'
        f'+pegasus_wf_name="{ctx.wf_name}"\n+pegasus_wf_time="{ctx.wf_time}"\n'
        f'+pegasus_version="{PEGASUS_VERSION}"\n+pegasus_job_class=11\n'
        '+pegasus_cluster_size=1\n+pegasus_site="local"\n'
        '+pegasus_execution_sites="condorpool"\n+pegasus_wf_xformation="pegasus::dagman"\nqueue\n',
    )


# --------------------------------------------------------------------------- per-attempt records


def _stat(ctx: _Ctx, head: str, mode: str, size: int, inode: int, mt: str) -> str:
    """A kickstart ``files`` entry: ``head`` (name line plus leading keys) and stat fields."""
    blocks = (size + 4095) // 4096 * 8
    return (
        f"    {head}      mode: {mode}\n      size: {size}\n      inode: {inode}\n"
        f"      nlink: 1\n      blksize: 4096\n      blocks: {blocks}\n"
        f"      mtime: {mt}\n      atime: {mt}\n      ctime: {mt}\n"
        f"      uid: {ctx.uid}\n      user: {ctx.user}\n      gid: {ctx.gid}\n      group: {ctx.group}\n"
    )


def _data(text: str) -> str:
    """Captured stdout/stderr as kickstart embeds it (a YAML block scalar)."""
    if not text:
        return ""
    body = "".join(f"        {line}\n" for line in text.splitlines())
    return f"      data_truncated: false\n      data: |\n{body}\n"


_DEV_NULL_STDIN = (
    "    stdin:\n      file_name: /dev/null\n      mode: 0o20666\n      size: 0\n"
    "      inode: 3075\n      nlink: 1\n      blksize: 4096\n      blocks: 0\n"
    "      mtime: 2023-01-25T15:24:15-08:00\n      atime: 2023-01-25T15:24:15-08:00\n"
    "      ctime: 2023-01-25T15:24:15-08:00\n      uid: 0\n      user: root\n"
    "      gid: 0\n      group: root\n"
)


@dataclass
class _Attempt:
    node: _Node
    number: int
    cluster: int
    exec_at: int
    ks_start: float
    main_dur: float
    term_at: int
    success: bool
    host: str
    ip: str
    machine: str


def kickstart_record(ctx: _Ctx, a: _Attempt) -> str:
    """One 5.x kickstart YAML invocation record for an attempt."""
    rng = ctx.rng
    n = a.node
    compute = n.kind == COMPUTE
    pid = rng.randint(2000, 4_000_000)
    code = 0 if a.success else 1
    ks_dur = a.main_dur + rng.uniform(0.05, 0.12)
    main_start = a.ks_start + rng.uniform(0.03, 0.1)
    end_s = _iso_s(int(a.ks_start + ks_dur))
    start_s = _iso_s(int(a.ks_start))
    cwd = (
        f"/var/lib/condor/execute/dir_{pid - 3}"
        if compute
        else f"/var/lib/condor/spool/local_univ_execute/dir_{pid - 4}"
    )
    if compute:
        exe, exe_size, exe_argv = "/usr/bin/pegasus-keg", 27880, n.argv.split()
    elif n.kind == REGISTER:
        exe, exe_size = f"{ctx.bindir}/pegasus-rc-client", 614
        words = (_job_exec_argv(ctx, n)[1] or "").split()
        exe_argv = words[words.index(exe) + 1 :]
    else:
        exe, exe_size = f"{ctx.bindir}/pegasus-transfer", 2998
        exe_argv = ["--threads", "2"] + (["-m", "1"] if n.kind == STAGE_OUT else [])
    utime = a.main_dur * rng.uniform(0.05, 0.95)
    argv_yaml = "".join(f'      - "{arg}"\n' for arg in exe_argv)
    rec = [
        "- invocation: True\n"
        "  version: 3.0\n"
        f"  start: {_iso_ms(a.ks_start)}\n"
        f"  duration: {ks_dur:.3f}\n"
        f'  transformation: "{n.xform}"\n'
        f'  derivation: "{n.task or "null"}"\n'
        f'  resource: "{"condorpool" if compute else "local"}"\n'
        f'  wf-label: "{ctx.label}"\n'
        f'  wf-stamp: "{ctx.wf_stamp}"\n'
        f"  interface: {'eth0' if compute else 'ens192'}\n"
        f"  hostaddr: {a.ip}\n"
        f"  hostname: {a.host}\n"
        f"  pid: {pid}\n"
        f"  uid: {ctx.uid}\n"
        f"  user: {ctx.user}\n"
        f"  gid: {ctx.gid}\n"
        f"  group: {ctx.group}\n"
        "  umask: 0o0022\n"
        "  mainjob:\n"
        f"    start: {_iso_ms(main_start)}\n"
        f"    duration: {a.main_dur:.3f}\n"
        f"    pid: {pid + 1}\n"
        "    usage:\n"
        f"      utime: {utime:.3f}\n"
        f"      stime: {utime * rng.uniform(0.01, 0.3):.3f}\n"
        f"      maxrss: {rng.randint(2_000, 2_000_000)}\n"
        f"      minflt: {rng.randint(100, 500_000)}\n"
        "      majflt: 0\n"
        "      nswap: 0\n"
        f"      inblock: {rng.randint(0, 4096)}\n"
        f"      outblock: {rng.randint(0, 65536)}\n"
        "      msgsnd: 0\n"
        "      msgrcv: 0\n"
        "      nsignals: 0\n"
        f"      nvcsw: {rng.randint(1, 20_000)}\n"
        f"      nivcsw: {rng.randint(0, 500)}\n"
        "    status:\n"
        f"      raw: {code * 256}\n"
        f"      regular_exitcode: {code}\n"
        "    executable:\n"
        f"      file_name: {exe}\n"
        "      mode: 0o100755\n"
        f"      size: {exe_size}\n"
        f"      inode: {134_320_633 + exe_size}\n"
        "      nlink: 1\n"
        "      blksize: 4096\n"
        f"      blocks: {(exe_size + 4095) // 4096 * 8}\n"
        "      mtime: 2023-02-09T16:23:16-08:00\n"
        f"      atime: {start_s}\n"
        "      ctime: 2023-02-09T22:13:39-08:00\n"
        "      uid: 0\n"
        "      user: root\n"
        "      gid: 0\n"
        "      group: root\n"
        "    argument_vector:\n"
        f"{argv_yaml}"
        "    procs:\n"
        "  jobids:\n"
        f"    condor: {a.cluster}.0\n"
        f"  cwd: {cwd}\n"
        "  usage:\n"
        f"    utime: {rng.uniform(0.005, 0.03):.3f}\n"
        f"    stime: {rng.uniform(0.03, 0.09):.3f}\n"
        f"    maxrss: {rng.randint(2_400, 5_000)}\n"
        f"    minflt: {rng.randint(120, 200)}\n"
        "    majflt: 0\n"
        "    nswap: 0\n"
        "    inblock: 0\n"
        "    outblock: 0\n"
        "    msgsnd: 0\n"
        "    msgrcv: 0\n"
        "    nsignals: 0\n"
        "    nvcsw: 2\n"
        f"    nivcsw: {rng.randint(1, 9)}\n",
        a.machine
        % {
            "ram_free": rng.randint(1_000_000, 30_000_000),
            "load1": rng.uniform(0.1, 12),
            "load5": rng.uniform(0.1, 10),
            "load15": rng.uniform(0.1, 8),
            "procs": rng.randint(300, 900),
            "running": rng.randint(1, 16),
            "sleeping": rng.randint(200, 600),
        },
        "  files:\n",
    ]
    inode = rng.randint(1_000_000, 400_000_000)
    if a.success and n.kind in (COMPUTE, STAGE_IN):
        for lfn, size in n.outputs:
            inode += 1
            path = f"{cwd}/{lfn}" if compute else f"{ctx.scratch}/./{lfn}"
            head = f'{lfn}:\n      lfn: "{lfn}"\n      file_name: {path}\n'
            rec.append(
                _stat(ctx, head, "0o100644", size, inode, end_s) + "      output: True\n"
                f"      sha256: {rng.getrandbits(256):064x}\n"
                f"      checksum_timing: {size / 400_000_000 + rng.uniform(0.0, 0.02):.3f}\n"
            )
    if compute and n.xform == "analyze":
        for lfn, size in n.inputs:
            inode += 1
            head = f'{lfn}:\n      lfn: "{lfn}"\n      file_name: {cwd}/{lfn}\n'
            rec.append(_stat(ctx, head, "0o100644", size, inode, start_s))
    if n.kind in (CREATE_DIR, CLEANUP, STAGE_IN, STAGE_OUT):
        rec.append(
            _stat(ctx, "stdin:\n      descriptor_number: 0\n", "0o10600", 400, inode + 1, start_s)
        )
    else:
        rec.append(_DEV_NULL_STDIN)
    out_text = _stdout_text(ctx, a, main_start)
    worked = len(n.inputs)
    err_data = (
        f"#Successfully worked on    : {worked} lines.\n#Worked on total number of : {worked} lines."
        if n.kind == REGISTER and a.success
        else ""
    )
    tmp = f"{rng.getrandbits(36):09x}"[-6:]  # mkstemp-like suffix
    head = f"stdout:\n      temporary_name: {cwd}/ks.out.{tmp}\n      descriptor: 3\n"
    rec.append(_stat(ctx, head, "0o100600", len(out_text), inode + 2, end_s) + _data(out_text))
    head = f"stderr:\n      temporary_name: {cwd}/ks.err.{tmp[::-1]}\n      descriptor: 4\n"
    rec.append(_stat(ctx, head, "0o100600", len(err_data), inode + 3, end_s) + _data(err_data))
    head = f"metadata:\n      temporary_name: {cwd}/ks.meta.{tmp[1:]}Q\n      descriptor: 5\n"
    rec.append(_stat(ctx, head, "0o100600", 0, inode + 4, start_s))
    return "".join(rec)


def _stdout_text(ctx: _Ctx, a: _Attempt, start: float) -> str:
    n = a.node
    if n.kind == COMPUTE:
        outs = " ".join(lfn for lfn, _ in n.outputs)
        ins = " ".join(lfn for lfn, _ in n.inputs)
        return (
            f"Timestamp Today: {_iso_ms(start)} ({start:.3f};{a.main_dur:.3f})\n"
            f"Applicationname: {n.xform} [4.0] @ {a.ip} ({a.host})\n"
            f"Current Workdir: /var/lib/condor/execute\n"
            "Systemenvironm.: x86_64-Linux 4.18.0-425.10.1.el8_7.x86_64\n"
            f"Output Filename: {outs}\nInput Filename : {ins}"
        )
    if n.kind == REGISTER:
        return f"{_log_time(int(start)).replace('-', '.')}.{int(start * 1000) % 1000:03d} PST:   Database version: '{PEGASUS_VERSION}' (sqlite:///{ctx.submit_dir}/{ctx.wf_name}.replicas.db)"
    t = _log_time(int(start))
    ms = int(start * 1000) % 1000
    lines = [
        f"{t},{ms:03d}    INFO:  Reading URL pairs from stdin",
        f"{t},{ms:03d}    INFO:  {max(1, len(n.inputs) + len(n.outputs))} transfers loaded",
        f"{t},{ms:03d}    INFO:  PATH={ctx.bindir}:/usr/local/bin:/usr/bin:/bin",
        f"{t},{ms:03d}    INFO:  --------------------------------------------------------------------------------",
        f"{t},{ms:03d}    INFO:  Starting transfers - attempt 1",
    ]
    end = int(start + a.main_dur)
    te = _log_time(end)
    if n.kind == STAGE_OUT:
        dur = 0.14 * len(n.inputs)
        payload = json.dumps(
            {
                "ts": end,
                "monitoring_event": "int.metric",
                "payload": [
                    {
                        "event": "check",
                        "file_type": "output",
                        "succeeded": len(n.inputs),
                        "failed": 0,
                        "duration": f"{dur:.3f}",
                    }
                ],
            }
        )
        lines.append(
            f"{te},{ms:03d}    INFO:  @@@MONITORING_PAYLOAD - START@@@{payload}@@@MONITORING_PAYLOAD - END@@@"
        )
    if n.kind in (STAGE_IN, STAGE_OUT):
        files = n.outputs if n.kind == STAGE_IN else n.inputs
        total = sum(size for _, size in files)
        lines.append(
            f"{te},{ms:03d}    INFO:  Stats: Total {len(files)} transfers, {total / 1024:.1f} KB transferred "
            f"in {max(1, int(a.main_dur))} seconds."
        )
    lines.append(f"{te},{ms:03d}    INFO:  All transfers completed successfully.")
    return "\n".join(lines)


def err_text(ctx: _Ctx, a: _Attempt) -> str:
    """The job's stderr file: PegasusLite's log for compute jobs."""
    n = a.node
    if n.kind in (STAGE_IN, REGISTER):
        return ""
    if n.kind != COMPUTE:
        return (
            "DEBUG: Adding default values to PATH - /bin:/usr/bin:/usr/local/bin:/opt/local/bin\n"
        )
    t0 = _log_time(a.exec_at)
    t1 = _log_time(int(a.ks_start + a.main_dur))
    code = 0 if a.success else 1
    failed = "" if a.success else f"{t1}: User task failed with exitcode {code}\n"
    return (
        f"{t0}: PegasusLite: version {PEGASUS_VERSION}\n"
        f"{t0}: Executing on host {a.host} IP={a.ip}\n"
        "\n########################[Pegasus Lite] Setting up workdir ########################\n"
        f"{t0}: Not creating a new work directory as it is already set to /var/lib/condor/execute\n"
        "\n##############[Pegasus Lite] Figuring out the worker package to use ##############\n"
        f"{t0}: The job contained a Pegasus worker package\n"
        "\n##################### Setting the xbit for executables staged #####################\n"
        "\n##################### Checking file integrity for input files #####################\n"
        "\n######################[Pegasus Lite] Executing the user task ######################\n"
        f"{failed}"
        f"PegasusLite: exitcode {code}\n"
    )


# --------------------------------------------------------------------------- DAGMan simulation


# What DAGMan 10.2 echoes of its configuration at start-up (noise monitord must skip).
_DAGMAN_CONFIG_ECHO = """\
Using config source: /etc/condor/condor_config
Using local config sources:
   /etc/condor/config.d/00-htcondor-9.0.config
   /etc/condor/condor_config.local
config Macros = 75, Sorted = 74, StringBytes = 2233, TablesBytes = 2748
CLASSAD_CACHING is ENABLED
Daemon Log is logging: D_ALWAYS D_ERROR D_STATUS
DaemonCore: No command port requested.
DAGMAN_USE_STRICT setting: 1
DAGMAN_VERBOSITY setting: 3
DAGMAN_DEBUG_CACHE_SIZE setting: 5242880
DAGMAN_DEBUG_CACHE_ENABLE setting: False
DAGMAN_SUBMIT_DELAY setting: 0
DAGMAN_MAX_SUBMIT_ATTEMPTS setting: 6
DAGMAN_STARTUP_CYCLE_DETECT setting: False
DAGMAN_MAX_SUBMITS_PER_INTERVAL setting: {submits}
DAGMAN_AGGRESSIVE_SUBMIT setting: False
DAGMAN_USER_LOG_SCAN_INTERVAL setting: {scan}
DAGMAN_QUEUE_UPDATE_INTERVAL setting: 300
DAGMAN_DEFAULT_PRIORITY setting: 0
DAGMAN_SUPPRESS_NOTIFICATION setting: True
allow_events (DAGMAN_ALLOW_EVENTS) setting: 114
DAGMAN_RETRY_SUBMIT_FIRST setting: True
DAGMAN_RETRY_NODE_FIRST setting: False
DAGMAN_MAX_JOBS_IDLE setting: {idle}
DAGMAN_MAX_JOBS_SUBMITTED setting: 0
DAGMAN_MAX_PRE_SCRIPTS setting: 20
DAGMAN_MAX_POST_SCRIPTS setting: 20
DAGMAN_MAX_HOLD_SCRIPTS setting: 20
DAGMAN_MUNGE_NODE_NAMES setting: True
DAGMAN_PROHIBIT_MULTI_JOBS setting: False
DAGMAN_SUBMIT_DEPTH_FIRST setting: False
DAGMAN_ALWAYS_RUN_POST setting: False
DAGMAN_CONDOR_SUBMIT_EXE setting: /usr/bin/condor_submit
DAGMAN_USE_DIRECT_SUBMIT setting: True
DAGMAN_DEFAULT_APPEND_VARS setting: False
DAGMAN_ABORT_DUPLICATES setting: True
DAGMAN_ABORT_ON_SCARY_SUBMIT setting: True
DAGMAN_PENDING_REPORT_INTERVAL setting: 600
DAGMAN_AUTO_RESCUE setting: True
DAGMAN_MAX_RESCUE_NUM setting: 100
DAGMAN_WRITE_PARTIAL_RESCUE setting: True
DAGMAN_DEFAULT_NODE_LOG setting: @(DAG_DIR)/@(DAG_FILE).nodes.log
DAGMAN_GENERATE_SUBDAG_SUBMITS setting: True
DAGMAN_MAX_JOB_HOLDS setting: 100
DAGMAN_HOLD_CLAIM_TIME setting: 20
ALL_DEBUG setting:
DAGMAN_DEBUG setting:
DAGMAN_SUPPRESS_JOB_LOGS setting: False
DAGMAN_REMOVE_NODE_JOBS setting: True
DAGMAN will adjust edges after parsing
"""


class _DagmanSim:
    """Discrete-event model of DAGMan 10 running the DAG, writing dagman.out as it goes."""

    def __init__(self, ctx: _Ctx, nodes: list[_Node], start: int, slots: int, out: TextIO) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.nodes = nodes
        self.total = len(nodes)
        self.out = out
        self.t = start
        self.dagman_cluster = self.rng.randint(1, 5000)
        self.next_cluster = self.dagman_cluster + 1
        self.pid = self.rng.randint(10_000, 4_000_000)
        self.events: list[tuple[int, int, int, _Node, _Attempt]] = []
        self.seq = 0
        self.ready: dict[str | None, list[tuple[int, int, _Node]]] = {None: []}
        for cat in THROTTLES:
            self.ready[cat] = []
        self.in_cat = dict.fromkeys(THROTTLES, 0)
        self.slots = [(start, i) for i in range(slots)]
        self.idle_seen = 0  # SUBMIT seen, EXECUTE not yet: DAGMan's idle count
        self.unseen = 0  # submitted, SUBMIT event not read yet
        self.counts = {"done": 0, "queued": 0, "post": 0, "ready": 0, "failed": 0, "futile": 0}
        self.pending_writers: list[tuple[int, int]] = []
        self.cycles = 0
        self.dag_status = 0
        self.attempts = 0
        self.retried = 0
        self.failed_nodes: list[_Node] = []
        self.last_cluster: dict[int, int] = {}

    # -- output helpers
    def log(self, msg: str, t: int | None = None) -> None:
        self.out.write(f"{dagman_time(self.t if t is None else t)} {msg}\n")

    def table(self) -> None:
        c = self.counts
        unready = self.total - sum(c.values())
        status = "0 (DAG_STATUS_OK)" if self.dag_status == 0 else "2 (DAG_STATUS_NODE_FAILED)"
        ts = dagman_time(self.t)
        self.out.write(
            f"{ts} DAG status: {status}\n"
            f"{ts} Of {self.total} nodes total:\n"
            f"{ts} {_TABLE_HEAD}\n"
            f"{ts} {_TABLE_RULE}\n"
            f"{ts} {c['done']:5d}{0:8d}{c['queued']:9d}{c['post']:8d}{c['ready']:8d}"
            f"{unready:11d}{c['failed']:9d}{c['futile']:9d}\n"
            f"{ts} 0 job proc(s) currently held\n"
            f"{ts} {self.runtime_stats()}\n"
        )

    def runtime_stats(self) -> str:
        n = self.cycles
        if n == 0:
            return (
                "DAGMan Runtime Statistics: [ EventCycleTimeCount = 0.0; EventCycleTimeSum = 0.0; "
                "LogProcessCycleTimeCount = 0.0; LogProcessCycleTimeSum = 0.0; SleepCycleTimeCount = 0.0; "
                "SleepCycleTimeSum = 0.0; SubmitCycleTimeCount = 0.0; SubmitCycleTimeSum = 0.0; ]"
            )
        r = self.rng
        parts = []
        for name, avg in (
            ("EventCycleTime", 0.004),
            ("LogProcessCycleTime", 0.002),
            ("SleepCycleTime", 5.0),
            ("SubmitCycleTime", 0.003),
        ):
            a = avg * r.uniform(0.9, 1.1)
            parts.append(
                f"{name}Avg = {a!r}; {name}Count = {float(n)!r}; {name}Max = {a * 2.7!r}; "
                f"{name}Min = {a / 40!r}; {name}Std = {a * 0.6!r}; {name}Sum = {a * n!r}"
            )
        return "DAGMan Runtime Statistics: [ " + "; ".join(parts) + "; ]"

    # -- scheduling helpers
    def push_event(self, t: int, kind: int, node: _Node, a: _Attempt) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, node, a))

    def make_ready(self, node: _Node) -> None:
        node.state = "ready"
        self.counts["ready"] += 1
        self.seq += 1
        heapq.heappush(self.ready[node.category], (-node.priority, self.seq, node))

    def submittable(self) -> bool:
        if self.idle_seen + self.unseen >= MAX_JOBS_IDLE:
            return False
        for cat, heap in self.ready.items():
            if heap and (cat is None or self.in_cat[cat] < THROTTLES[cat]):
                return True
        return False

    def pick(self) -> _Node | None:
        best: tuple[int, int, _Node] | None = None
        best_cat: str | None = None
        for cat, heap in self.ready.items():
            if heap and (cat is None or self.in_cat[cat] < THROTTLES[cat]):
                if best is None or heap[0][:2] < best[:2]:
                    best, best_cat = heap[0], cat
        if best is None:
            return None
        heapq.heappop(self.ready[best_cat])
        return best[2]

    # -- the run
    def header(self) -> None:
        ctx, dag = self.ctx, self.ctx.dag
        stars = "*" * 54
        exe = f"condor_scheduniv_exec.{self.dagman_cluster}.0"
        lines = [
            stars,
            f"** {exe} (CONDOR_DAGMAN) STARTING UP",
            "** /usr/bin/condor_dagman",
            "** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)",
            "** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT",
            f"** {CONDOR_VERSION}",
            "** $CondorPlatform: x86_64_AlmaLinux8 $",
            f"** PID = {self.pid}",
            "** Log last touched time unavailable (No such file or directory)",
            stars,
            *_DAGMAN_CONFIG_ECHO.format(
                submits=MAX_SUBMITS_PER_CYCLE, scan=SCAN_INTERVAL, idle=MAX_JOBS_IDLE
            ).splitlines(),
        ]
        argv = [exe, "-Lockfile", f"{dag}.lock", "-AutoRescue", "1", "-DoRescueFrom", "0",
                "-Dag", dag, "-MaxPost", "20", "-Suppress_notification", "-CsdVersion",
                CONDOR_VERSION, "-Dagman", "/usr/bin/condor_dagman"]  # fmt: skip
        lines += [f'argv[{i}] == "{arg}"' for i, arg in enumerate(argv)]
        lines += [
            f"Workflow batch-id: <{self.dagman_cluster}.0>",
            f"Workflow batch-name: <{dag}+{self.dagman_cluster}>",
            "Workflow accounting_group: <>",
            "Workflow accounting_group_user: <>",
            "Warning: failed to get attribute DAGNodeName",
            "DAGMAN_LOG_ON_NFS_IS_ERROR setting: False",
            f"Default node log file is: <{ctx.submit_dir}/./{dag}.nodes.log>",
            f"DAG Lockfile will be written to {dag}.lock",
            f"DAG Input file is {dag}",
            "Parsing 1 dagfiles",
            f"Parsing {dag} ...",
            "Adjusting edges",
        ]
        used = {n.category for n in self.nodes}
        for cat, n in THROTTLES.items():
            if cat not in used:
                lines.append(
                    f"Warning: category {cat} has no assigned nodes, so the throttle setting ({n}) will have no effect"
                )
        lines += [
            f"Dag contains {self.total} total jobs",
            "Bootstrapping...",
            "Number of pre-completed nodes: 0",
            f"MultiLogFiles: truncating log file {ctx.submit_dir}/./{dag}.nodes.log",
        ]
        for line in lines:
            self.log(line)
        for node in self.nodes:
            node.waiting = len(node.parents)
            if not node.parents:
                self.make_ready(node)
        self.table()
        self.log("Registering condor_event_timer...")

    def new_attempt(self, node: _Node) -> _Attempt:
        rng, ctx, t = self.rng, self.ctx, self.t
        node.attempt += 1
        node.cluster = self.next_cluster
        self.next_cluster += 1
        success = not (node.fate == 2 or (node.fate == 1 and node.attempt == 0))
        if node.kind == COMPUTE:
            free_at, slot = heapq.heappop(self.slots)
            exec_at = max(t + rng.randint(2, 20), free_at)
            dur = min(3600.0, rng.lognormvariate(4.0, 0.9)) if success else rng.uniform(0.05, 5.0)
            host, ip, machine = ctx.worker_machines[slot % len(ctx.worker_machines)]
        else:
            exec_at = t + rng.choice((0, 0, 1, 1, 2, 4))
            base = {CREATE_DIR: 2.0, STAGE_IN: 8.0, STAGE_OUT: 6.0, REGISTER: 2.5, CLEANUP: 1.5}[
                node.kind
            ]
            dur = base * rng.uniform(0.6, 3.0)
            host, ip, machine = ctx.submit_host, ctx.submit_ip, ctx.submit_machine
        ks_start = exec_at + rng.uniform(0.1, 1.2)
        term_at = math.ceil(ks_start + dur + rng.uniform(0.1, 1.0))
        if node.kind == COMPUTE:
            heapq.heappush(self.slots, (term_at + rng.randint(0, 3), slot))
        return _Attempt(
            node,
            node.attempt,
            node.cluster,
            exec_at,
            ks_start,
            dur,
            term_at,
            success,
            host,
            ip,
            machine,
        )

    def write_attempt(self, a: _Attempt) -> None:
        base = f"{self.ctx.submit_dir}/{a.node.subdir}/{a.node.name}"
        self.ctx.sink(f"{base}.out.{a.number:03d}", kickstart_record(self.ctx, a))
        self.ctx.sink(f"{base}.err.{a.number:03d}", err_text(self.ctx, a))

    def submit_phase(self) -> int:
        submitted = 0
        while submitted < MAX_SUBMITS_PER_CYCLE and self.idle_seen + self.unseen < MAX_JOBS_IDLE:
            node = self.pick()
            if node is None:
                break
            name = node.name
            if node.attempt >= 0:
                self.log(
                    f"Reassigning the id of job {name} from ({node.cluster}.0.0) to (-1.-1.-1)"
                )
            a = self.new_attempt(node)
            self.write_attempt(a)
            self.attempts += 1
            self.log(f"Submitting HTCondor Node {name} job(s)...")
            self.log(
                f"Submitting node {name} from file {node.subdir}/{name}.sub using direct job submission"
            )
            self.log(f"\tassigned HTCondor ID ({a.cluster}.0.0)")
            node.state = "queued"
            self.counts["ready"] -= 1
            self.counts["queued"] += 1
            if node.category:
                self.in_cat[node.category] += 1
            self.push_event(self.t, 0, node, a)
            self.push_event(a.exec_at, 1, node, a)
            self.push_event(a.term_at, 2, node, a)
            submitted += 1
            self.unseen += 1
        if submitted:
            self.log(f"Just submitted {submitted} job{'s' if submitted > 1 else ''} this cycle...")
            self.table()
        return submitted

    def event_phase(self) -> int:
        events, t, processed, changed = self.events, self.t, 0, False
        while events and events[0][0] <= t - 1:
            at, _, kind, node, a = heapq.heappop(events)
            if not processed:
                self.log("Currently monitoring 1 HTCondor log file(s)")
            processed += 1
            cid = f"({a.cluster}.0.0)"
            brace = "{" + dagman_time(at) + "}"
            name = node.name
            if kind == 0:
                self.unseen -= 1
                self.idle_seen += 1
                self.log(f"Reassigning the id of job {name} from {cid} to {cid}")
                self.log(f"Event: ULOG_SUBMIT for HTCondor Node {name} {cid} {brace}")
                self.log(f"Number of idle job procs: {self.idle_seen}")
            elif kind == 1:
                self.idle_seen -= 1
                self.log(f"Event: ULOG_EXECUTE for HTCondor Node {name} {cid} {brace}")
                self.log(f"Number of idle job procs: {self.idle_seen}")
            elif kind == 2:
                self.log(f"Event: ULOG_JOB_TERMINATED for HTCondor Node {name} {cid} {brace}")
                self.log(f"Number of idle job procs: {self.idle_seen}")
                if a.success:
                    self.log(f"Node {name} job proc {cid} completed successfully.")
                else:
                    self.log(f"Node {name} job proc {cid} failed with status 1.")
                self.log(f"Node {name} job completed")
                self.log(f"Running POST script of Node {name}...")
                self.log(_MYSIN)
                self.counts["queued"] -= 1
                self.counts["post"] += 1
                changed = True
                done_at = t + self.rng.choice((0, 1, 1))
                self.pending_writers.append((done_at, a.cluster))
                self.push_event(done_at, 3, node, a)
            else:
                self.log(
                    f"Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node {name} {cid} {brace}"
                )
                self.counts["post"] -= 1
                changed = True
                if node.category:
                    self.in_cat[node.category] -= 1
                if a.success:
                    self.log(f"POST Script of node {name} completed successfully.")
                    self.counts["done"] += 1
                    node.state = "done"
                    for child in node.children:
                        child.waiting -= 1
                        if child.waiting == 0:
                            self.make_ready(child)
                else:
                    self.log(f"POST Script of node {name} failed with status 1")
                    self.log(f"POST for Node {name} returned 1")
                    if node.attempt == 0:
                        self.log(f"Retrying node {name} (retry #1 of 1)...")
                        self.retried += 1
                        self.make_ready(node)
                    else:
                        node.state = "failed"
                        self.counts["failed"] += 1
                        self.failed_nodes.append(node)
                        self.dag_status = 2
                        self.mark_futile(node)
        if changed:
            self.table()
        if processed:
            for at, cluster in sorted(self.pending_writers):
                self.log(
                    f"Initializing user log writer for {self.ctx.submit_dir}/./{self.ctx.dag}.nodes.log, "
                    f"({cluster}.0.0)",
                    at,
                )
            self.pending_writers.clear()
        return processed

    def mark_futile(self, node: _Node) -> None:
        stack = list(node.children)
        while stack:
            child = stack.pop()
            if child.state == "unready":
                child.state = "futile"
                self.counts["futile"] += 1
                stack.extend(child.children)

    def run(self) -> int:
        self.header()
        self.t += 1
        while True:
            self.cycles += 1
            self.submit_phase()
            self.event_phase()
            if not self.events and not self.submittable():
                break
            step = SCAN_INTERVAL + (1 if self.rng.random() < 0.1 else 0)
            if self.submittable() or not self.events:
                self.t += step
            else:
                gap = self.events[0][0] + 1 - self.t
                self.t += max(step, SCAN_INTERVAL * math.ceil(gap / SCAN_INTERVAL))
        return self.finish()

    def finish(self) -> int:
        ctx, log = self.ctx, self.log
        exit_code = 1 if self.failed_nodes else 0
        if exit_code:
            log("ERROR: the following job(s) failed:")
            for node in self.failed_nodes:
                parents = ",".join(p.name for p in node.parents)
                children = ",".join(c.name for c in node.children)
                for line in (
                    "---------------------- Job ----------------------",
                    f"      Node Name: {node.name}",
                    "           Noop: false",
                    f"         NodeID: {node.idx}",
                    "    Node Status: STATUS_ERROR",
                    "Node return val: 1",
                    "          Error: Job exited with status 1 and POST Script failed with status 1 (after 1 node retries)",
                    f"Job Submit File: {node.subdir}/{node.name}.sub",
                    f"    POST Script: {_post_cmd(ctx, node)}",
                    "          Retry: 1",
                    f" HTCondor Job ID: ({node.cluster}.0.0)",
                    f"PARENTS: {parents} WAITING: 0 CHILDREN: {children}",
                    "---------------------------------------\t<END>",
                ):
                    log(line)
            log("Aborting DAG...")
            log(f"Writing Rescue DAG to {ctx.dag}.rescue001...")
            log("Removing submitted jobs...")
            log("Removing any/all submitted HTCondor jobs...")
            log(f"Running: /usr/bin/condor_rm -const DAGManJobId=={self.dagman_cluster}")
            self.write_rescue()
        else:
            log("All jobs Completed!")
        for line in (
            "Note: 0 total job deferrals because of -MaxJobs limit (0)",
            f"Note: 0 total job deferrals because of -MaxIdle limit ({MAX_JOBS_IDLE})",
            "Note: 0 total job deferrals because of node category throttles",
            "Note: 0 total PRE script deferrals because of -MaxPre limit (20) or DEFER",
            "Note: 0 total POST script deferrals because of -MaxPost limit (20) or DEFER",
            "Note: 0 total HOLD script deferrals because of -MaxHold limit (20) or DEFER",
        ):
            log(line)
        self.table()
        log(f"Wrote metrics file {ctx.dag}.metrics.")
        log(self.runtime_stats())
        log(
            f"**** condor_scheduniv_exec.{self.dagman_cluster}.0 (condor_DAGMAN) pid {self.pid} "
            f"EXITING WITH STATUS {exit_code}"
        )
        self.write_metrics(exit_code)
        return exit_code

    def write_rescue(self) -> None:
        ctx = self.ctx
        g = time.gmtime(self.t)
        failed = ",".join(n.name for n in self.failed_nodes)
        lines = [
            "# Rescue DAG file, created after running",
            f"#   the {ctx.dag} DAG file",
            f"# Created {g.tm_mon}/{g.tm_mday}/{g.tm_year} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d} UTC",
            "# Rescue DAG version: 2.0.1 (partial)",
            "#",
            f"# Total number of Nodes: {self.total}",
            f"# Nodes premarked DONE: {self.counts['done']}",
            f"# Nodes that failed: {len(self.failed_nodes)}",
            f"#   {failed},<ENDLIST>",
            "",
        ]
        lines += [f"DONE {n.name}" for n in self.nodes if n.state == "done"]
        lines += [f"RETRY {n.name} 1" for n in self.nodes]
        _write(f"{ctx.submit_dir}/{ctx.dag}.rescue001", "\n".join(lines) + "\n")

    def write_metrics(self, exit_code: int) -> None:
        c = self.counts
        metrics = {
            "client": "condor_dagman",
            "version": "10.2.5",
            "planner": "",
            "planner_version": "",
            "type": "metrics",
            "wf_uuid": "",
            "root_wf_uuid": "",
            "start_time": float(self.ctx.planned_at),
            "end_time": float(self.t),
            "duration": float(self.t - self.ctx.planned_at),
            "exitcode": exit_code,
            "dagman_id": str(self.dagman_cluster),
            "parent_dagman_id": "",
            "rescue_dag_number": 0,
            "jobs": self.total,
            "jobs_failed": c["failed"],
            "jobs_succeeded": c["done"],
            "dag_jobs": 0,
            "dag_jobs_failed": 0,
            "dag_jobs_succeeded": 0,
            "total_jobs": self.total,
            "total_jobs_run": c["done"] + c["failed"],
            "DagStatus": self.dag_status,
        }
        _write(
            f"{self.ctx.submit_dir}/{self.ctx.dag}.metrics", json.dumps(metrics, indent=4) + "\n"
        )


# --------------------------------------------------------------------------- entry points


def _pick_start(rng: random.Random) -> int:
    """A local (PST) start time in January/February, away from any DST change."""
    year = rng.choice((2023, 2024, 2025))
    day = rng.randint(0, 40)  # Jan 1 + day, at most Feb 10
    local_midnight = calendar.timegm((year, 1, 1, 0, 0, 0, 0, 1, 0)) - UTC_OFFSET
    return local_midnight + day * 86400 + rng.randint(0, 86399)


def _assign_fates(rng: random.Random, nodes: list[_Node], retry: float, fail: float) -> None:
    computes = [n for n in nodes if n.kind == COMPUTE]

    def count(fraction: float) -> int:
        if fraction <= 0 or not computes:
            return 0
        return min(len(computes), max(1, round(fraction * len(computes))))

    n_fail, n_retry = count(fail), count(retry)
    chosen = rng.sample(computes, min(len(computes), n_fail + n_retry))
    for node in chosen[:n_fail]:
        node.fate = 2
    for node in chosen[n_fail:]:
        node.fate = 1


def generate(
    outdir: Path | str,
    jobs: int,
    *,
    retry_fraction: float = 0.05,
    fail_fraction: float = 0.0,
    seed: int = 0,
    name: str = "synthetic",
    slots: int | None = None,
) -> Generated:
    """Write a finished workflow's submit directory into ``outdir`` (created if missing).

    ``retry_fraction`` of the compute jobs fail once and succeed on their retry;
    ``fail_fraction`` fail both attempts, which makes DAGMan exit 1.  ``slots``
    is the size of the simulated condor pool (default scales with ``jobs``).
    """
    if not 0 <= retry_fraction <= 1 or not 0 <= fail_fraction <= 1:
        raise ValueError("fractions must be within [0, 1]")
    if not name or any(c in name for c in " /\"'"):
        raise ValueError(f"bad workflow name {name!r}")
    began = time.perf_counter()
    out = Path(outdir).absolute()
    out.mkdir(parents=True, exist_ok=True)
    rng = _FastRandom(seed)
    start = _pick_start(rng)
    ctx = _make_ctx(rng, str(out), name, start)
    nodes = plan_dag(rng, jobs, name)
    for subdir in dict.fromkeys(node.subdir for node in nodes):
        (out / subdir).mkdir(parents=True, exist_ok=True)
    _assign_fates(rng, nodes, retry_fraction, fail_fraction)
    write_braindump(ctx)
    dag_lines = write_dag(ctx, nodes)
    write_static_bp(ctx, nodes)
    write_aux(ctx)
    dagman_out = out / f"{ctx.dag}.dagman.out"
    pool = slots if slots is not None else max(8, min(400, jobs // 20))
    writer = _FileWriter(0 if jobs < 2000 else WRITER_CHILDREN)
    ctx.sink = writer.write
    try:
        for node in nodes:
            write_sub(ctx, node)
            write_in(ctx, node)
        with open(dagman_out, "w", encoding="utf-8", buffering=1 << 20) as fh:
            sim = _DagmanSim(ctx, nodes, start, pool, fh)
            exit_code = sim.run()
    finally:
        writer.close()
    expected = Expected(
        jobs=len(nodes),
        job_instances=sim.attempts,
        jobstates=7 * sim.attempts,
        invocations=2 * sim.attempts,
        workflowstates=2,
        tasks=sum(1 for n in nodes if n.kind == COMPUTE),
        retried_jobs=sim.retried,
        failed_jobs=len(sim.failed_nodes),
        futile_jobs=sim.counts["futile"],
        dagman_exit=exit_code,
    )
    return Generated(out, dagman_out, ctx.wf_uuid, dag_lines, expected, time.perf_counter() - began)


def generate_example(dest: Path, jobs: int = 50) -> Path:
    """A small, fixed example workflow (with a retry) for ``monitord demo``; returns its dagman.out."""
    return generate(dest, jobs, retry_fraction=0.05, seed=2023, name="example").dagman_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m monitord.tools.synthetic",
        description="Write a synthetic, finished Pegasus 5.x submit directory.",
    )
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--jobs", type=int, required=True, help="number of DAG jobs")
    parser.add_argument(
        "--retry-fraction",
        type=float,
        default=0.05,
        help="fraction of compute jobs that fail once, then succeed (default 0.05)",
    )
    parser.add_argument(
        "--fail-fraction",
        type=float,
        default=0.0,
        help="fraction of compute jobs that fail permanently (DAGMan exits 1)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="synthetic", help="workflow label (default synthetic)")
    parser.add_argument("--slots", type=int, default=None, help="simulated condor pool size")
    parser.add_argument("--force", action="store_true", help="write into a non-empty OUTDIR")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if args.outdir.exists() and any(args.outdir.iterdir()) and not args.force:
        parser.error(f"{args.outdir} is not empty (use --force)")
    try:
        result = generate(
            args.outdir,
            args.jobs,
            retry_fraction=args.retry_fraction,
            fail_fraction=args.fail_fraction,
            seed=args.seed,
            name=args.name,
            slots=args.slots,
        )
    except ValueError as exc:
        parser.error(str(exc))
    summary = {
        "submit_dir": str(result.submit_dir),
        "dagman_out": str(result.dagman_out),
        "wf_uuid": result.wf_uuid,
        "seconds": round(result.seconds, 3),
        **asdict(result.expected),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        e = result.expected
        print(f"{result.dagman_out}")
        print(
            f"  {e.jobs} jobs, {e.job_instances} job instances ({e.retried_jobs} retried, "
            f"{e.failed_jobs} failed, {e.futile_jobs} never run), DAGMan exit {e.dagman_exit}, "
            f"written in {result.seconds:.2f}s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
