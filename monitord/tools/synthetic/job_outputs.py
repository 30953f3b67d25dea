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


def _stat(ctx: Ctx, head: str, mode: str, size: int, inode: int, mt: str) -> str:
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


def kickstart_record(ctx: Ctx, a: Attempt) -> str:
    """One 5.x kickstart YAML invocation record for an attempt."""
    rng = ctx.rng
    n = a.node
    compute = n.kind == COMPUTE
    pid = rng.randint(2000, 4_000_000)
    code = 0 if a.success else 1
    ks_dur = a.main_dur + rng.uniform(0.05, 0.12)
    main_start = a.ks_start + rng.uniform(0.03, 0.1)
    end_s = iso_s(int(a.ks_start + ks_dur))
    start_s = iso_s(int(a.ks_start))
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
    utime = a.main_dur * rng.uniform(0.05, 0.95)
    argv_yaml = "".join(f'      - "{arg}"\n' for arg in exe_argv)
    rec = [
        "- invocation: True\n"
        "  version: 3.0\n"
        f"  start: {iso_ms(a.ks_start)}\n"
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
        f"    start: {iso_ms(main_start)}\n"
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
    if n.kind in STDIN_FED:
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
