"""What one job attempt leaves in the submit directory: its kickstart record and stderr.

The daemon parses these ``.out.NNN``/``.err.NNN`` files for invocations, tasks and
monitoring payloads, so each record carries every field the 5.x kickstart YAML
writes (machine block, usage, files, captured stdout) with plausible values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from monitord.tools.synthetic.clock import iso_ms, iso_s, log_time
from monitord.tools.synthetic.context import PEGASUS_VERSION, Ctx
from monitord.tools.synthetic.dag import (
    COMPUTE,
    REGISTER,
    STAGE_IN,
    STAGE_OUT,
    STDIN_FED,
    Node,
)
from monitord.tools.synthetic.planner_files import job_exec_argv

_ROOT = (0, "root", 0, "root")  # uid, user, gid, group


def _stat_fields(
    mode: str, size: int, inode: int, times: tuple[str, str, str], owner: tuple[int, str, int, str]
) -> str:
    """The stat keys of a kickstart file entry (``times``: mtime, atime, ctime)."""
    mtime, atime, ctime = times
    uid, user, gid, group = owner
    return (
        f"      mode: {mode}\n      size: {size}\n      inode: {inode}\n"
        f"      nlink: 1\n      blksize: 4096\n      blocks: {(size + 4095) // 4096 * 8}\n"
        f"      mtime: {mtime}\n      atime: {atime}\n      ctime: {ctime}\n"
        f"      uid: {uid}\n      user: {user}\n      gid: {gid}\n      group: {group}\n"
    )


def _stat(ctx: Ctx, head: str, mode: str, size: int, inode: int, mt: str) -> str:
    """A kickstart ``files`` entry of the job's user: ``head`` (name line plus leading keys)
    and stat fields."""
    owner = (ctx.uid, ctx.user, ctx.gid, ctx.group)
    return f"    {head}" + _stat_fields(mode, size, inode, (mt, mt, mt), owner)


def _data(text: str) -> str:
    """Captured stdout/stderr as kickstart embeds it (a YAML block scalar)."""
    if not text:
        return ""
    body = "".join(f"        {line}\n" for line in text.splitlines())
    return f"      data_truncated: false\n      data: |\n{body}\n"


_DEV_NULL_TIME = "2023-01-25T15:24:15-08:00"
_DEV_NULL_STDIN = "    stdin:\n      file_name: /dev/null\n" + _stat_fields(
    "0o20666", 0, 3075, (_DEV_NULL_TIME,) * 3, _ROOT
)


@dataclass
class Attempt:
    node: Node
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


@dataclass(slots=True)
class _Run:
    """What the parts of one kickstart record share, drawn once (in the generator's order)."""

    pid: int
    code: int
    ks_dur: float
    main_start: float
    start_s: str
    end_s: str
    cwd: str
    exe: str
    exe_size: int
    exe_argv: list[str]


def _draw_run(ctx: Ctx, a: Attempt) -> _Run:
    rng = ctx.rng
    n = a.node
    compute = n.kind == COMPUTE
    pid = rng.randint(2000, 4_000_000)
    ks_dur = a.main_dur + rng.uniform(0.05, 0.12)
    main_start = a.ks_start + rng.uniform(0.03, 0.1)
    cwd = (
        f"/var/lib/condor/execute/dir_{pid - 3}"
        if compute
        else f"/var/lib/condor/spool/local_univ_execute/dir_{pid - 4}"
    )
    if compute:
        exe, exe_size, exe_argv = "/usr/bin/pegasus-keg", 27880, n.argv.split()
    elif n.kind == REGISTER:
        exe, exe_size = f"{ctx.bindir}/pegasus-rc-client", 614
        words = (job_exec_argv(ctx, n)[1] or "").split()
        exe_argv = words[words.index(exe) + 1 :]
    else:
        exe, exe_size = f"{ctx.bindir}/pegasus-transfer", 2998
        exe_argv = ["--threads", "2"] + (["-m", "1"] if n.kind == STAGE_OUT else [])
    return _Run(
        pid=pid,
        code=0 if a.success else 1,
        ks_dur=ks_dur,
        main_start=main_start,
        start_s=iso_s(int(a.ks_start)),
        end_s=iso_s(int(a.ks_start + ks_dur)),
        cwd=cwd,
        exe=exe,
        exe_size=exe_size,
        exe_argv=exe_argv,
    )


def _usage(indent: str, utime: float, stime: float, *counts: int) -> str:
    """A kickstart ``usage`` block: ``counts`` are maxrss, minflt, inblock, outblock, nvcsw,
    nivcsw (the others are 0)."""
    maxrss, minflt, inblock, outblock, nvcsw, nivcsw = counts
    i = indent + "  "
    return (
        f"{indent}usage:\n{i}utime: {utime:.3f}\n{i}stime: {stime:.3f}\n"
        f"{i}maxrss: {maxrss}\n{i}minflt: {minflt}\n{i}majflt: 0\n{i}nswap: 0\n"
        f"{i}inblock: {inblock}\n{i}outblock: {outblock}\n{i}msgsnd: 0\n{i}msgrcv: 0\n"
        f"{i}nsignals: 0\n{i}nvcsw: {nvcsw}\n{i}nivcsw: {nivcsw}\n"
    )


def _head(ctx: Ctx, a: Attempt, run: _Run) -> str:
    """The record's first keys: the invocation, where it ran, as whom."""
    n = a.node
    compute = n.kind == COMPUTE
    return (
        "- invocation: True\n"
        "  version: 3.0\n"
        f"  start: {iso_ms(a.ks_start)}\n"
        f"  duration: {run.ks_dur:.3f}\n"
        f'  transformation: "{n.xform}"\n'
        f'  derivation: "{n.task or "null"}"\n'
        f'  resource: "{"condorpool" if compute else "local"}"\n'
        f'  wf-label: "{ctx.label}"\n'
        f'  wf-stamp: "{ctx.wf_stamp}"\n'
        f"  interface: {'eth0' if compute else 'ens192'}\n"
        f"  hostaddr: {a.ip}\n"
        f"  hostname: {a.host}\n"
        f"  pid: {run.pid}\n"
        f"  uid: {ctx.uid}\n"
        f"  user: {ctx.user}\n"
        f"  gid: {ctx.gid}\n"
        f"  group: {ctx.group}\n"
        "  umask: 0o0022\n"
    )


def _mainjob(ctx: Ctx, a: Attempt, run: _Run) -> str:
    """The ``mainjob`` block: the user's executable, its usage, status and arguments."""
    rng = ctx.rng
    utime = a.main_dur * rng.uniform(0.05, 0.95)
    usage = _usage(
        "    ",
        utime,
        utime * rng.uniform(0.01, 0.3),
        rng.randint(2_000, 2_000_000),
        rng.randint(100, 500_000),
        rng.randint(0, 4096),
        rng.randint(0, 65536),
        rng.randint(1, 20_000),
        rng.randint(0, 500),
    )
    times = ("2023-02-09T16:23:16-08:00", run.start_s, "2023-02-09T22:13:39-08:00")
    inode = 134_320_633 + run.exe_size
    return (
        "  mainjob:\n"
        f"    start: {iso_ms(run.main_start)}\n"
        f"    duration: {a.main_dur:.3f}\n"
        f"    pid: {run.pid + 1}\n"
        f"{usage}"
        "    status:\n"
        f"      raw: {run.code * 256}\n"
        f"      regular_exitcode: {run.code}\n"
        f"    executable:\n      file_name: {run.exe}\n"
        + _stat_fields("0o100755", run.exe_size, inode, times, _ROOT)
        + "    argument_vector:\n"
        + "".join(f'      - "{arg}"\n' for arg in run.exe_argv)
        + "    procs:\n"
    )


def _kickstart_self(ctx: Ctx, a: Attempt, run: _Run) -> str:
    """Kickstart's own part: the job ids, the working directory, its own usage."""
    rng = ctx.rng
    usage = _usage(
        "  ",
        rng.uniform(0.005, 0.03),
        rng.uniform(0.03, 0.09),
        rng.randint(2_400, 5_000),
        rng.randint(120, 200),
        0,
        0,
        2,
        rng.randint(1, 9),
    )
    return f"  jobids:\n    condor: {a.cluster}.0\n  cwd: {run.cwd}\n{usage}"


def _machine(ctx: Ctx, a: Attempt) -> str:
    rng = ctx.rng
    return a.machine % {
        "ram_free": rng.randint(1_000_000, 30_000_000),
        "load1": rng.uniform(0.1, 12),
        "load5": rng.uniform(0.1, 10),
        "load15": rng.uniform(0.1, 8),
        "procs": rng.randint(300, 900),
        "running": rng.randint(1, 16),
        "sleeping": rng.randint(200, 600),
    }


def _files(ctx: Ctx, a: Attempt, run: _Run) -> list[str]:
    """The ``files`` block: outputs (with checksums), an analysis's inputs, stdin, and the
    captured stdout, stderr and metadata."""
    rng = ctx.rng
    n = a.node
    compute = n.kind == COMPUTE
    cwd, start_s, end_s = run.cwd, run.start_s, run.end_s
    rec = ["  files:\n"]
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
    if n.kind in STDIN_FED:
        rec.append(
            _stat(ctx, "stdin:\n      descriptor_number: 0\n", "0o10600", 400, inode + 1, start_s)
        )
    else:
        rec.append(_DEV_NULL_STDIN)
    out_text = _stdout_text(ctx, a, run.main_start)
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
    return rec


def kickstart_record(ctx: Ctx, a: Attempt) -> str:
    """One 5.x kickstart YAML invocation record for an attempt (its parts drawn from
    ``ctx.rng`` in this order, so a seed gives the same record)."""
    run = _draw_run(ctx, a)
    parts = [_head(ctx, a, run), _mainjob(ctx, a, run), _kickstart_self(ctx, a, run)]
    parts.append(_machine(ctx, a))
    parts += _files(ctx, a, run)
    return "".join(parts)


def _stdout_text(ctx: Ctx, a: Attempt, start: float) -> str:
    n = a.node
    if n.kind == COMPUTE:
        outs = " ".join(lfn for lfn, _ in n.outputs)
        ins = " ".join(lfn for lfn, _ in n.inputs)
        return (
            f"Timestamp Today: {iso_ms(start)} ({start:.3f};{a.main_dur:.3f})\n"
            f"Applicationname: {n.xform} [4.0] @ {a.ip} ({a.host})\n"
            f"Current Workdir: /var/lib/condor/execute\n"
            "Systemenvironm.: x86_64-Linux 4.18.0-425.10.1.el8_7.x86_64\n"
            f"Output Filename: {outs}\nInput Filename : {ins}"
        )
    if n.kind == REGISTER:
        return f"{log_time(int(start)).replace('-', '.')}.{int(start * 1000) % 1000:03d} PST:   Database version: '{PEGASUS_VERSION}' (sqlite:///{ctx.submit_dir}/{ctx.wf_name}.replicas.db)"
    t = log_time(int(start))
    ms = int(start * 1000) % 1000
    lines = [
        f"{t},{ms:03d}    INFO:  Reading URL pairs from stdin",
        f"{t},{ms:03d}    INFO:  {max(1, len(n.inputs) + len(n.outputs))} transfers loaded",
        f"{t},{ms:03d}    INFO:  PATH={ctx.bindir}:/usr/local/bin:/usr/bin:/bin",
        f"{t},{ms:03d}    INFO:  --------------------------------------------------------------------------------",
        f"{t},{ms:03d}    INFO:  Starting transfers - attempt 1",
    ]
    end = int(start + a.main_dur)
    te = log_time(end)
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


def err_text(ctx: Ctx, a: Attempt) -> str:
    """The job's stderr file: PegasusLite's log for compute jobs."""
    n = a.node
    if n.kind in (STAGE_IN, REGISTER):
        return ""
    if n.kind != COMPUTE:
        return (
            "DEBUG: Adding default values to PATH - /bin:/usr/bin:/usr/local/bin:/opt/local/bin\n"
        )
    t0 = log_time(a.exec_at)
    t1 = log_time(int(a.ks_start + a.main_dur))
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
