"""Writes the conformance cases under ``tests/data/cases/`` (and, with ``--reference``, their expected outputs).

The corpus has no holds, submit failures, rescue restarts, clusters, XML
records, nested sub-workflows, ...  Each case here starts from a small
``monitord.tools.synthetic`` submit directory and then edits or adds files to get
one family of features.  The orig submit dir written into the files is
``/home/tester/submit/<case>/run0001``, which must not exist on the machine
that runs the reference (it would put its default DB there).

Usage::

    python tests/data/make_cases.py [CASE ...]                  # inputs only
    python tests/data/make_cases.py --reference /tmp/refvenv/bin/python [CASE ...]

Inputs are deterministic: rerunning rewrites them byte for byte.  With
``--reference`` the reference pegasus-monitord is run as a black box, exactly
like the corpus README says (TZ=America/Los_Angeles, scratch HOME, replay in a
copy, once with ``-d file:///ABS/events.bp`` and once into the default DB).
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from monitord.tools import synthetic  # noqa: E402
from monitord.tools.synthetic.clock import (  # noqa: E402
    UTC_OFFSET,
    dagman_time,
    iso_ms,
    iso_s,
    log_time,
)
from monitord.tools.synthetic.dagman_output import MYSIN  # noqa: E402

CASES_DIR = HERE / "cases"
ORIG_BASE = "/home/tester/submit"
TZ = "America/Los_Angeles"
SUBDIR = "00/00"

# --------------------------------------------------------------------------- time helpers

_STAMP = re.compile(r"\b(\d\d)/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)\b")
_ISO = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)([T ])(\d\d):(\d\d):(\d\d)")
_BRAIN_TS = re.compile(r"\b(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)-0800")


def _epoch(y: int, mo: int, d: int, h: int, mi: int, s: int) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - UTC_OFFSET


def _local(t: int) -> tuple[int, int, int, int, int, int]:
    x = time.gmtime(t + UTC_OFFSET)
    return x.tm_year, x.tm_mon, x.tm_mday, x.tm_hour, x.tm_min, x.tm_sec


def stamp_epoch(text: str) -> int:
    """Epoch of the first ``MM/DD/YY HH:MM:SS`` in ``text`` (PST, as synthetic writes it)."""
    m = _STAMP.search(text)
    if m is None:
        raise ValueError(f"no DAGMan time stamp in {text!r}")
    mo, d, yy, h, mi, s = (int(x) for x in m.groups())
    return _epoch(2000 + yy, mo, d, h, mi, s)


def shift_text(text: str, delta: int) -> str:
    """Moves every local time stamp of the formats synthetic writes by ``delta`` seconds."""

    def dag(m: re.Match[str]) -> str:
        mo, d, yy, h, mi, s = (int(x) for x in m.groups())
        return dagman_time(_epoch(2000 + yy, mo, d, h, mi, s) + delta)

    def iso(m: re.Match[str]) -> str:
        y, mo, d, sep, h, mi, s = m.groups()
        t = _epoch(int(y), int(mo), int(d), int(h), int(mi), int(s)) + delta
        y2, mo2, d2, h2, mi2, s2 = _local(t)
        return f"{y2:04d}-{mo2:02d}-{d2:02d}{sep}{h2:02d}:{mi2:02d}:{s2:02d}"

    def brain(m: re.Match[str]) -> str:
        y, mo, d, h, mi, s = (int(x) for x in m.groups())
        y2, mo2, d2, h2, mi2, s2 = _local(_epoch(y, mo, d, h, mi, s) + delta)
        return f"{y2:04d}{mo2:02d}{d2:02d}T{h2:02d}{mi2:02d}{s2:02d}-0800"

    text = _STAMP.sub(dag, text)
    text = _ISO.sub(lambda m: m.group(0) if m.group(1) == "1970" else iso(m), text)
    return _BRAIN_TS.sub(brain, text)


def shift_tree(root: Path, delta: int) -> None:
    """Shifts a whole submit directory (sub-workflows included) in time; static.bp keeps its 1970 clock."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(".static.bp"):
            path.write_text(shift_text(path.read_text(), delta))


def L(t: int, msg: str) -> str:
    return f"{dagman_time(t)} {msg}"


# --------------------------------------------------------------------------- dagman.out editing


class DagmanOut:
    """A dagman.out as a list of lines, with the look-ups the edits need."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = path.read_text().splitlines()

    def save(self) -> None:
        # The runtime statistics lines are long and ignored by monitord: dropped to keep cases small.
        kept = [ln for ln in self.lines if "DAGMan Runtime Statistics" not in ln]
        self.path.write_text("\n".join(kept) + "\n")

    def find(self, needle: str, start: int = 0, nth: int = 0) -> int:
        seen = 0
        for i in range(start, len(self.lines)):
            if needle in self.lines[i]:
                if seen == nth:
                    return i
                seen += 1
        raise LookupError(f"{needle!r} (#{nth}) not in {self.path.name}")

    def has(self, needle: str) -> bool:
        return any(needle in ln for ln in self.lines)

    def event(self, kind: str, node: str, nth: int = 0) -> int:
        return self.find(f"Event: ULOG_{kind} for HTCondor Node {node} (", nth=nth)

    def t(self, i: int) -> int:
        return stamp_epoch(self.lines[i])

    def ev_t(self, i: int) -> int:
        """The brace (event) time of an event line."""
        return stamp_epoch(self.lines[i][self.lines[i].index("{") :])

    def cluster(self, node: str, nth: int = 0) -> int:
        line = self.lines[self.event("SUBMIT", node, nth)]
        return int(line[line.index("(") + 1 : line.index(".")])

    def max_cluster(self) -> int:
        return max(int(m) for m in re.findall(r"\((\d+)\.0\.0\)", "\n".join(self.lines)))

    def insert(self, i: int, lines: list[str]) -> None:
        self.lines[i:i] = lines

    def tail_index(self) -> int:
        for needle in ("All jobs Completed!", "ERROR: the following job(s) failed:"):
            if self.has(needle):
                return self.find(needle)
        raise LookupError("no end of run in dagman.out")

    def last_time(self, before: int) -> int:
        return self.t(before - 1)

    def append_before_tail(self, lines: list[str], end: int) -> None:
        """Inserts lines before the end-of-run block and moves that block to after ``end``."""
        tail = self.tail_index()
        delta = max(0, end + 5 - self.t(tail))
        self.lines[tail:] = [shift_text(ln, delta) for ln in self.lines[tail:]]
        self.insert(tail, lines)


class Seq:
    """Writes DAGMan lines for nodes run by hand, with a time cursor."""

    def __init__(self, t: int) -> None:
        self.t = t
        self.lines: list[str] = []

    def wait(self, dt: int) -> Seq:
        self.t += dt
        return self

    def log(self, msg: str) -> None:
        self.lines.append(L(self.t, msg))

    def submit(self, node: str, cluster: int) -> None:
        self.log(f"Submitting HTCondor Node {node} job(s)...")
        self.log(
            f"Submitting node {node} from file {SUBDIR}/{node}.sub using direct job submission"
        )
        self.log(f"\tassigned HTCondor ID ({cluster}.0.0)")
        self.log("Just submitted 1 job this cycle...")

    def ulog(self, kind: str, node: str, cluster: int, back: int = 0) -> None:
        self.log(
            f"Event: ULOG_{kind} for HTCondor Node {node} ({cluster}.0.0) {{{dagman_time(self.t - back)}}}"
        )

    def job_end(self, node: str, cluster: int, status: int) -> None:
        if status == 0:
            self.log(f"Node {node} job proc ({cluster}.0.0) completed successfully.")
        else:
            self.log(f"Node {node} job proc ({cluster}.0.0) failed with status {status}.")
        self.log(f"Node {node} job completed")

    def pre(self, node: str, status: int) -> None:
        self.log(f"Running PRE script of Node {node}...")
        self.wait(2)
        if status == 0:
            self.log(f"PRE Script of node {node} completed successfully.")
        else:
            self.log(f"PRE Script of Job {node} failed with status {status}")

    def post(self, node: str, cluster: int, status: int) -> None:
        self.log(f"Running POST script of Node {node}...")
        self.log(MYSIN)
        self.wait(5)
        self.ulog("POST_SCRIPT_TERMINATED", node, cluster, back=4)
        if status == 0:
            self.log(f"POST Script of node {node} completed successfully.")
        else:
            self.log(f"POST Script of node {node} failed with status {status}")
            self.log(f"POST for Node {node} returned {status}")

    def run(
        self,
        node: str,
        cluster: int,
        *,
        status: int = 0,
        post: int | None = 0,
        pre: int | None = None,
        duration: int = 20,
        execute: bool = True,
    ) -> None:
        """One attempt of a node: [PRE], submit, events, [POST]; ``None`` means no script."""
        if pre is not None:
            self.pre(node, pre)
            if pre != 0:
                return
        self.submit(node, cluster)
        self.wait(5)
        self.ulog("SUBMIT", node, cluster, back=4)
        if execute:
            self.ulog("EXECUTE", node, cluster, back=2)
        self.wait(duration)
        self.ulog("JOB_TERMINATED", node, cluster, back=3)
        self.job_end(node, cluster, status)
        if post is not None:
            self.post(node, cluster, post)
        self.wait(5)


# --------------------------------------------------------------------------- submit-dir editing


class Workdir:
    """One generated submit directory being edited."""

    def __init__(self, gen: synthetic.Generated) -> None:
        self.dir = gen.submit_dir
        self.uuid = gen.wf_uuid
        self.dagman = DagmanOut(gen.dagman_out)
        self.dag_path = next(self.dir.glob("*.dag"))
        self.wf_name = self.dag_path.stem
        self.static_path = self.dir / f"{self.wf_name}.static.bp"
        self.jobs = [
            ln.split()[1] for ln in self.dag_path.read_text().splitlines() if ln.startswith("JOB ")
        ]

    # -- plumbing
    def f(self, name: str) -> Path:
        return self.dir / SUBDIR / name

    def edit(self, path: Path, fn: Callable[[str], str]) -> None:
        path.write_text(fn(path.read_text()))

    def job(self, prefix: str, nth: int = 0) -> str:
        return [j for j in self.jobs if j.startswith(prefix)][nth]

    def computes(self) -> list[str]:
        return [j for j in self.jobs if "_ID" in j]

    def save(self) -> None:
        self.dagman.save()

    # -- .dag
    def dag_block(self, node: str) -> tuple[int, int]:
        lines = self.dag_path.read_text().splitlines()
        start = lines.index(next(ln for ln in lines if ln.startswith(f"JOB {node} ")))
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        return start, end

    def dag_add_script(self, node: str, line: str) -> None:
        lines = self.dag_path.read_text().splitlines()
        start, _ = self.dag_block(node)
        lines.insert(start + 1, line)
        self.dag_path.write_text("\n".join(lines) + "\n")

    def dag_drop_post(self, node: str) -> None:
        lines = self.dag_path.read_text().splitlines()
        lines = [ln for ln in lines if not ln.startswith(f"SCRIPT POST {node} ")]
        self.dag_path.write_text("\n".join(lines) + "\n")

    def add_job(
        self,
        src: str,
        new: str,
        *,
        task: str | None = None,
        xform: str | None = None,
        post: bool = True,
        pre: str | None = None,
        parents: tuple[str, ...] = (),
        job_info: dict[str, str] | None = None,
        tasks: tuple[tuple[str, str, str], ...] = (),
        dag_tail: str = "",
    ) -> None:
        """A new node cloned from ``src``: .sub, .dag block, static.bp job.info/task/edges.

        ``tasks`` are (task id, transformation, argv) of the tasks mapped to the job
        (default: one task ``task`` when ``src`` is a compute job).
        """
        src_task = _task_of(src)
        sub = self.f(f"{src}.sub").read_text().replace(src, new)
        if src_task and task:
            sub = sub.replace(f'"{src_task}"', f'"{task}"').replace(
                f"PEGASUS_DAG_JOB_ID={new}", f"PEGASUS_DAG_JOB_ID={new}"
            )
        if xform:
            sub = re.sub(
                r'\+pegasus_wf_xformation = "[^"]*"', f'+pegasus_wf_xformation = "{xform}"', sub
            )
        self.f(f"{new}.sub").write_text(sub)

        lines = self.dag_path.read_text().splitlines()
        s, e = self.dag_block(src)
        block = [ln.replace(src, new) for ln in lines[s:e]]
        if not post:
            block = [ln for ln in block if not ln.startswith("SCRIPT POST")]
        if pre:
            block.insert(1, f"SCRIPT PRE {new} {pre}")
        if dag_tail:
            block[0] += dag_tail
        first_edge = next(i for i, ln in enumerate(lines) if ln.startswith("PARENT"))
        lines[first_edge:first_edge] = [*block, ""]
        end_rule = len(lines) - 3
        lines[end_rule:end_rule] = [f"PARENT  {p} CHILD {new}" for p in parents]
        self.dag_path.write_text("\n".join(lines) + "\n")
        self.jobs.append(new)

        st = self.static_path.read_text().splitlines()
        info = next(ln for ln in st if "event=job.info" in ln and f'job.id="{src}"' in ln)
        info = info.replace(src, new)
        for key, value in (job_info or {}).items():
            info = re.sub(rf'\b{re.escape(key)}="[^"]*"', f'{key}="{value}"', info)
        _insert_after_last(st, "event=job.info", [info])
        if not tasks and task and src_task:
            t_src = next(
                ln for ln in st if "event=task.info" in ln and f'task.id="{src_task}"' in ln
            )
            m = re.search(r'transformation="([^"]*)" argv="([^"]*)"', t_src)
            assert m is not None
            tasks = ((task, xform or m.group(1), m.group(2)),)
        head = st[0].split(" event=")[0]
        xid = f"xwf.id={self.uuid}"
        _insert_after_last(
            st,
            "event=task.info",
            [
                f'{head} event=task.info {xid} task.id="{tid}" type="1" type_desc="compute" '
                f'transformation="{tx}" argv="{argv}"'
                for tid, tx, argv in tasks
            ],
        )
        _insert_after_last(
            st,
            "event=wf.map.task_job",
            [
                f'{head} event=wf.map.task_job {xid} job.id="{new}" task.id="{tid}"'
                for tid, _, _ in tasks
            ],
        )
        st += [
            f'{head} event=job.edge {xid} parent.job.id="{p}" child.job.id="{new}"' for p in parents
        ]
        self.static_path.write_text("\n".join(st) + "\n")


def _task_of(job: str) -> str | None:
    m = re.search(r"_(ID\d{7})$", job)
    return m.group(1) if m else None


def _insert_after_last(lines: list[str], needle: str, new: list[str]) -> None:
    idx = max((i for i, ln in enumerate(lines) if needle in ln), default=len(lines) - 1)
    lines[idx + 1 : idx + 1] = new


def ks_set_exit(text: str, code: int) -> str:
    text = re.sub(r"(\n      raw: )\d+", rf"\g<1>{code * 256}", text, count=1)
    return re.sub(r"(\n      regular_exitcode: )\d+", rf"\g<1>{code}", text, count=1)


def ks_set_data(text: str, stream: str, data: str) -> str:
    """Replaces the captured data of ``files.stdout``/``files.stderr`` of a kickstart record."""
    start = text.index(f"\n    {stream}:\n")
    end = text.index("\n    ", start + 10)
    while text[end + 5 : end + 6] == " ":  # skip the stream's own (deeper) keys
        end = text.index("\n    ", end + 1)
    block = text[start:end]
    block = re.sub(r"\n      data_truncated: false\n      data: \|\n(?:.*\n?)*", "", block)
    body = "".join(f"        {ln}\n" for ln in data.splitlines())
    block = block.rstrip("\n") + f"\n      data_truncated: false\n      data: |\n{body}"
    return text[:start] + block.rstrip("\n") + text[end:]


def err_success(text: str) -> str:
    text = re.sub(r".*User task failed with exitcode \d+\n", "", text)
    return text.replace("PegasusLite: exitcode 1", "PegasusLite: exitcode 0")


# --------------------------------------------------------------------------- the cases


def _gen(path: Path, jobs: int, seed: int, name: str, **kw: float) -> Workdir:
    return Workdir(
        synthetic.generate(
            path,
            jobs,
            retry_fraction=kw.get("retry", 0.0),
            fail_fraction=kw.get("fail", 0.0),
            seed=seed,
            name=name,
        )
    )


def case_held_released_aborted(run: Path) -> None:
    w = _gen(run, 9, 101, "held", retry=0.01)
    d = w.dagman
    c1, c2, c3 = w.computes()[:3]
    retried = next(j for j in w.computes() if d.has(f"Retrying node {j} "))
    others = [c for c in (c1, c2, c3) if c != retried]
    a, b = others[0], others[1]

    # a: image size, held with a reason, released, executes again.
    i = d.event("EXECUTE", a)
    t, ev, cl = d.t(i), d.ev_t(i), d.cluster(a)
    d.insert(
        i + 1,
        [
            L(
                t,
                f"Event: ULOG_IMAGE_SIZE for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 1)}}}",
            ),
            L(
                t,
                f"Event: ULOG_JOB_HELD for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 2)}}}",
            ),
            L(
                t,
                "  Hold reason: Error from slot1@node003.cluster.example.edu: Failed to open '/scratch/x' as standard output: Permission denied (errno 13)",
            ),
            L(t, "1 job proc(s) currently held"),
            L(
                t,
                f"Event: ULOG_JOB_RELEASED for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 3)}}}",
            ),
            L(t, f"Event: ULOG_EXECUTE for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 4)}}}"),
            L(
                t,
                f"Event: ULOG_JOB_SUSPENDED for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 5)}}}",
            ),
            L(
                t,
                f"Event: ULOG_JOB_UNSUSPENDED for HTCondor Node {a} ({cl}.0.0) {{{dagman_time(ev + 6)}}}",
            ),
        ],
    )
    # b: shadow exception, evicted, executes again; remote error and image size.
    i = d.event("EXECUTE", b)
    t, ev, cl = d.t(i), d.ev_t(i), d.cluster(b)
    d.insert(
        i + 1,
        [
            L(
                t,
                f"Event: ULOG_IMAGE_SIZE for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 1)}}}",
            ),
            L(
                t,
                f"Event: ULOG_SHADOW_EXCEPTION for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 2)}}}",
            ),
            L(
                t,
                f"Event: ULOG_JOB_EVICTED for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 3)}}}",
            ),
            L(t, "Number of idle job procs: 1"),
            L(t, f"Event: ULOG_EXECUTE for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 6)}}}"),
            L(
                t,
                f"Event: ULOG_REMOTE_ERROR for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 7)}}}",
            ),
            L(
                t,
                f"Event: ULOG_IMAGE_SIZE for HTCondor Node {b} ({cl}.0.0) {{{dagman_time(ev + 8)}}}",
            ),
        ],
    )
    # retried: first attempt held then aborted (no termination), its POST script fails, retry succeeds.
    i = d.event("JOB_TERMINATED", retried)
    t, ev, cl = d.t(i), d.ev_t(i), d.cluster(retried)
    j = d.find(f"Node {retried} job proc ({cl}.0.0) failed with status", i)
    assert j == i + 2, (i, j)
    d.lines[i : j + 1] = [
        L(
            t,
            f"Event: ULOG_JOB_HELD for HTCondor Node {retried} ({cl}.0.0) {{{dagman_time(ev - 2)}}}",
        ),
        L(
            t,
            "  Hold reason: Job has gone over memory limit of 1024 megabytes. Peak usage: 1530 megabytes.",
        ),
        L(
            t,
            f"Event: ULOG_JOB_ABORTED for HTCondor Node {retried} ({cl}.0.0) {{{dagman_time(ev)}}}",
        ),
        L(t, "Number of idle job procs: 0"),
    ]
    w.save()


def case_submit_failures(run: Path) -> None:
    w = _gen(run, 9, 202, "subfail")
    d = w.dagman
    # One failed attempt for the stage-in job, two for a compute job, then success.
    for node, failures in ((w.job("stage_in_"), 1), (w.computes()[1], 2)):
        i = d.find(f"Submitting HTCondor Node {node} job(s)...")
        t = d.t(i)
        lines = []
        for k in range(failures):
            lines += [
                L(t, f"Submitting HTCondor Node {node} job(s)..."),
                L(
                    t,
                    f"Submitting node {node} from file {SUBDIR}/{node}.sub using direct job submission",
                ),
                L(t, "ERROR: submit attempt failed"),
                L(t, f"Job submit try {k + 1}/6 failed, will try again in >= {2**k} second(s)."),
            ]
        d.insert(i, lines)
    w.save()


def _run_header(d: DagmanOut, t: int, cluster: int, pid: int, extra: list[str]) -> list[str]:
    """A new DAGMan start: run 1's start-up lines with a new cluster, pid and time."""
    end = d.find("Registering condor_event_timer...")
    old_cluster = re.search(r"condor_scheduniv_exec\.(\d+)\.0", "\n".join(d.lines[:3]))
    old_pid = re.search(r"\*\* PID = (\d+)", "\n".join(d.lines[:12]))
    assert old_cluster and old_pid
    out = []
    for ln in d.lines[: end + 1]:
        if "DAGMan Runtime Statistics" in ln:
            continue
        msg = ln[len(dagman_time(0)) + 1 :]
        msg = msg.replace(f"exec.{old_cluster.group(1)}.0", f"exec.{cluster}.0")
        msg = msg.replace(f"<{old_cluster.group(1)}.0>", f"<{cluster}.0>")
        msg = msg.replace(f"+{old_cluster.group(1)}>", f"+{cluster}>")
        msg = msg.replace(f"PID = {old_pid.group(1)}", f"PID = {pid}")
        if msg.startswith("Parsing 1 dagfiles"):
            out += [L(t, m) for m in extra if m.startswith("Found rescue")]
        out.append(L(t, msg))
        if msg.startswith("Parsing ") and msg.endswith(" ..."):
            out += [L(t, m) for m in extra if not m.startswith("Found rescue")]
    return out


def _rescue(run: Path, noexit: bool) -> None:
    w = _gen(run, 9, 303, "rescue", fail=0.01)
    d = w.dagman
    failed = next(j for j in w.computes() if d.has(f"Node Name: {j}"))
    dag = w.dag_path.name
    # Twin run without the failure, for the records of the nodes run 1 never reached.
    twin = _gen(run.parent / "twin", 9, 303, "rescue")
    futile = [j for j in w.jobs if not w.f(f"{j}.out.000").exists()]
    for j in futile:
        for kind in (".out.000", ".err.000"):
            if twin.f(j + kind).exists():
                shutil.copy(twin.f(j + kind), w.f(j + kind))
    shutil.rmtree(twin.dir)
    # The failed node's third attempt succeeds.
    w.f(f"{failed}.out.002").write_text(ks_set_exit(w.f(f"{failed}.out.001").read_text(), 0))
    w.f(f"{failed}.err.002").write_text(err_success(w.f(f"{failed}.err.001").read_text()))

    if noexit:  # DAGMan died after writing the rescue DAG, before its exit line
        cut = d.find("Removing submitted jobs...")
        del d.lines[cut:]
    t = d.t(len(d.lines) - 1) + 40
    cluster = d.max_cluster() + 10
    done = sum(1 for j in w.jobs if j not in futile and j != failed)
    rescue = f"{dag}.rescue001"
    d.lines += [L(t, "******************************************************")]
    d.lines += _run_header(
        d,
        t,
        cluster,
        4_000_123,
        [
            f"Found rescue DAG number 1; running {rescue} in combination with normal DAG file",
            "******************************************************",
            f"USING RESCUE DAG {rescue}",
        ],
    )[1:]
    k = max(k for k, ln in enumerate(d.lines) if ln.endswith("Number of pre-completed nodes: 0"))
    d.lines[k] = d.lines[k].replace("nodes: 0", f"nodes: {done}")
    s = Seq(t + 1)
    s.run(failed, cluster + 1)
    order = [j for j in w.jobs if j in futile]
    for n, j in enumerate(order):
        s.run(j, cluster + 2 + n, duration=10 + n)
    s.log("All jobs Completed!")
    s.log("Note: 0 total job deferrals because of -MaxJobs limit (0)")
    s.log(f"Wrote metrics file {dag}.metrics.")
    s.log(
        f"**** condor_scheduniv_exec.{cluster}.0 (condor_DAGMAN) pid 4000123 EXITING WITH STATUS 0"
    )
    d.lines += s.lines
    w.save()


def case_rescue_dag_restart(run: Path) -> None:
    _rescue(run, noexit=False)


def case_rescue_dag_restart_noexit(run: Path) -> None:
    _rescue(run, noexit=True)


class _Num(str):
    """A number written verbatim (unquoted) in a cluster line, e.g. ``2.50``."""


def _cluster_line(kind: str, **kv: object) -> str:
    parts = []
    for k, v in kv.items():
        quoted = isinstance(v, str) and not isinstance(v, _Num)
        parts.append(f'{k}="{v}"' if quoted else f"{k}={v}")
    return f"[cluster-{kind} " + ", ".join(parts) + "]"


def case_clustered_jobs(run: Path) -> None:
    w = _gen(run, 9, 404, "clust")
    d = w.dagman
    comps = w.computes()
    par = comps[:3]
    xform = par[0].split("_ID")[0]
    stage_in = w.job("stage_in_")
    app = "/usr/bin/pegasus-keg"

    # Clustered job with kickstart: three records separated by cluster-task lines.
    ks_job = f"merge_{xform}_PID1_ID1"
    ks_tasks = tuple(
        (f"ID00001{k:02d}", xform, f"-a {xform} -T 5 -i f.0.in -o f.c.{k}") for k in (1, 2, 3)
    )
    w.add_job(
        par[0],
        ks_job,
        parents=(stage_in,),
        tasks=ks_tasks,
        job_info={"clustered": "1", "task_count": "3", "executable": "/usr/bin/pegasus-cluster"},
    )
    # Clustered job without kickstart: task records only, tasks described by the .in file.
    nk_job = f"merge_{xform}_PID2_ID1"
    nk_tasks = tuple(
        (f"ID00002{k:02d}", xform, f"-a {xform} -T 3 -i f.0.in -o f.d.{k}") for k in (1, 2, 3, 4)
    )
    w.add_job(
        par[1],
        nk_job,
        parents=(stage_in,),
        tasks=nk_tasks,
        job_info={"clustered": "1", "task_count": "4", "executable": "/usr/bin/pegasus-cluster"},
    )

    t_end = d.t(d.tail_index() - 1) + 5
    s = Seq(t_end)
    base = d.max_cluster() + 1
    s.run(ks_job, base, duration=30)
    s.run(nk_job, base + 1, duration=25)
    d.append_before_tail(s.lines, s.t)

    # .out.000 of the kickstart cluster: records of the three parallel jobs, renamed.
    chunks = []
    total = 0.0
    for k, src in enumerate(par):
        rec = w.f(f"{src}.out.000").read_text()
        rec = re.sub(r'derivation: "ID\d+"', f'derivation: "{ks_tasks[k][0]}"', rec)
        dur = float(re.search(r"\n  duration: ([\d.]+)", rec).group(1))  # type: ignore[union-attr]
        iso = re.search(r"\n  start: (\S+)", rec).group(1)  # type: ignore[union-attr]
        total += dur
        chunks.append(rec.rstrip("\n") + "\n")
        chunks.append(
            _cluster_line(
                "task",
                id=k + 1,
                start=iso,
                duration=round(dur, 3),
                status=0,
                line=k + 1,
                pid=5000 + k,
                app=app,
            )
            + "\n"
        )
    first_start = re.search(r"\n  start: (\S+)", chunks[0]).group(1)  # type: ignore[union-attr]
    chunks.append(
        _cluster_line(
            "summary",
            stat="ok",
            lines=3,
            tasks=3,
            succeeded=3,
            failed=0,
            extra=0,
            duration=round(total + 0.4, 3),
            start=first_start,
            pid=4999,
            app="/usr/bin/pegasus-cluster",
        )
        + "\n"
    )
    w.f(f"{ks_job}.out.000").write_text("".join(chunks))
    w.f(f"{ks_job}.err.000").write_text(w.f(f"{par[0]}.err.000").read_text())

    # .out.000 of the plain cluster: only cluster lines; task 3 has no '#@' line in .in.
    t0 = t_end + 40
    lines = []
    for k in range(4):
        st = iso_ms(t0 + 3 * k + 0.25)
        # Trailing zeros tell whether a value is kept as written or re-formatted.
        written = _Num(("2.50", "2.600", "2.7", "2.8")[k])
        lines.append(
            _cluster_line(
                "task",
                id=k + 1,
                start=st,
                duration=written,
                status=0,
                line=k + 1,
                pid=6000 + k,
                app=app,
            )
        )
    lines.append(
        _cluster_line(
            "summary",
            stat="ok",
            lines=4,
            tasks=4,
            succeeded=4,
            failed=0,
            extra=0,
            duration=_Num("12.40"),
            start=iso_ms(t0 + 0.25),
            pid=5999,
            app="/usr/bin/pegasus-cluster",
        )
    )
    w.f(f"{nk_job}.out.000").write_text("\n".join(lines) + "\n")
    w.f(f"{nk_job}.err.000").write_text("")
    inp = [
        f"#@ {k + 1} {tx} {tid}" if k != 2 else "# task 3 has no description line"
        for k, (tid, tx, _) in enumerate(nk_tasks)
    ]
    body = []
    for k, (_, _, argv) in enumerate(nk_tasks):
        body += [inp[k], f"{app} {argv}"]
    w.f(f"{nk_job}.in").write_text("\n".join(body) + "\nEDGE ID0000201 ID0000202\n")
    w.save()


_XML_RECORD = """\
<?xml version="1.0" encoding="ISO-8859-1"?>
<invocation xmlns="http://pegasus.isi.edu/schema/invocation" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://pegasus.isi.edu/schema/invocation http://pegasus.isi.edu/schema/iv-2.3.xsd" version="2.3" start="{start}" duration="{duration}" transformation="{xform}" derivation="{task}" resource="condorpool" wf-label="{label}" wf-stamp="{stamp}" interface="eth0" hostaddr="10.20.0.17" hostname="node017.cluster.example.edu" pid="31337" uid="1001" user="{user}" gid="100" group="users" umask="0o0022">
  <mainjob start="{mstart}" duration="{mduration}" pid="31338">
    <usage utime="1.250" stime="0.310" maxrss="20480" minflt="1543" majflt="0" nswap="0" inblock="8" outblock="64" msgsnd="0" msgrcv="0" nsignals="0" nvcsw="55" nivcsw="7"/>
    <status raw="0"><regular exitcode="0"/></status>
    <statcall error="0">
      <file name="/usr/bin/pegasus-keg">7F454C46020101000000000000000000</file>
      <statinfo mode="0100755" size="27880" inode="1234567" nlink="1" blksize="4096" blocks="56" mtime="2022-12-01T10:00:00-08:00" atime="{start}" ctime="2022-12-01T10:00:00-08:00" uid="0" user="root" gid="0" group="root"/>
    </statcall>
    <argument-vector>
      <arg nr="1">-a</arg>
      <arg nr="2">{xform}</arg>
      <arg nr="3">-o</arg>
      <arg nr="4">f.xml.out</arg>
    </argument-vector>
  </mainjob>
  <cwd>/var/lib/condor/execute/dir_31330</cwd>
  <usage utime="0.010" stime="0.020" maxrss="2700" minflt="140" majflt="0" nswap="0" inblock="0" outblock="0" msgsnd="0" msgrcv="0" nsignals="0" nvcsw="3" nivcsw="1"/>
  <machine page-size="4096">
    <stamp>{start}</stamp>
    <uname system="linux" nodename="node017.cluster.example.edu" release="3.10.0-1160.el7.x86_64" machine="x86_64">#1 SMP</uname>
    <linux>
      <ram total="65687448" free="1234567" shared="10000" buffer="2000"/>
      <swap total="2097148" free="2097148"/>
      <boot idle="1234.5">2022-11-01T08:00:00-08:00</boot>
      <cpu count="16" speed="2400" vendor="GenuineIntel">Intel(R) Xeon(R) CPU E5-2630 v3 @ 2.40GHz</cpu>
      <load min1="0.50" min5="0.40" min15="0.30"/>
      <procs total="400" running="2" sleeping="398" vmsize="1000" rss="500"/>
      <task total="800" running="2" sleeping="798"/>
    </linux>
  </machine>
  <statcall error="0" id="stdin">
    <file name="/dev/null"/>
    <statinfo mode="020666" size="0" inode="3075" nlink="1" blksize="4096" blocks="0" mtime="2022-11-01T08:00:00-08:00" atime="2022-11-01T08:00:00-08:00" ctime="2022-11-01T08:00:00-08:00" uid="0" user="root" gid="0" group="root"/>
  </statcall>
  <statcall error="0" id="stdout">
    <temporary name="/tmp/gs.out.Ab12Cd" descriptor="3"/>
    <statinfo mode="0100600" size="44" inode="99" nlink="1" blksize="4096" blocks="8" mtime="{start}" atime="{start}" ctime="{start}" uid="1001" user="{user}" gid="100" group="users"/>
    <data>legacy keg says hello
second line &amp; more</data>
  </statcall>
  <statcall error="0" id="stderr">
    <temporary name="/tmp/gs.err.Ef34Gh" descriptor="4"/>
    <statinfo mode="0100600" size="0" inode="100" nlink="1" blksize="4096" blocks="0" mtime="{start}" atime="{start}" ctime="{start}" uid="1001" user="{user}" gid="100" group="users"/>
  </statcall>
  <statcall error="0" id="final" lfn="f.xml.out">
    <file name="/var/lib/condor/execute/dir_31330/f.xml.out"/>
    <checksum type="sha256" value="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" timing="0.012"/>
    <statinfo lfn="f.xml.out" mode="0100644" size="4242" inode="555" nlink="1" blksize="4096" blocks="16" mtime="{end}" atime="{end}" ctime="{end}" uid="1001" user="{user}" gid="100" group="users"/>
  </statcall>
</invocation>
"""


def case_no_kickstart_and_xml(run: Path) -> None:
    w = _gen(run, 9, 505, "nk")
    d = w.dagman
    comps = w.computes()
    stage_in = w.job("stage_in_")
    brain = (w.dir / "braindump.yml").read_text()
    user = re.search(r'user: "([^"]+)"', brain).group(1)  # type: ignore[union-attr]
    stamp = re.search(r"-T (\S+)", w.f(f"{stage_in}.sub").read_text()).group(1)  # type: ignore[union-attr]

    plain = "plain_ID0000101"
    w.add_job(comps[0], plain, task="ID0000101", xform="plain", post=False, parents=(stage_in,))
    xml = "legacy_ID0000102"
    w.add_job(comps[1], xml, task="ID0000102", xform="legacy", parents=(stage_in,))
    noop = "noop_nk_0_join"
    w.add_job(
        comps[2],
        noop,
        post=False,
        parents=(plain, xml),
        tasks=(),
        job_info={"type": "1", "task_count": "0", "executable": "/bin/true"},
    )
    w.edit(
        w.f(f"{noop}.sub"),
        lambda s: s.replace("queue\n", "noop_job = true\nnoop_job_exit_code = 0\nqueue\n"),
    )

    t_end = d.t(d.tail_index() - 1) + 5
    base = d.max_cluster() + 1
    s = Seq(t_end)
    s.run(plain, base, post=None, duration=12)
    t_xml = s.t
    s.run(xml, base + 1, duration=15)
    s.run(noop, base + 2, post=None, duration=0, execute=False)
    d.append_before_tail(s.lines, s.t)

    # plain: no kickstart at all, stdout is the job's own text (not rotated: no POST script).
    w.f(f"{plain}.out").write_text(
        "starting plain job\nprocessing 3 files: a.txt, b.txt, c.txt\n"
        "50% done \"quoted\" and 'single' and 100%\ncaf\u00e9 ok\ndone\n"
    )
    w.f(f"{plain}.err").write_text(w.f(f"{comps[0]}.err.000").read_text().replace(comps[0], plain))
    # legacy: a 4.x XML invocation record.
    w.f(f"{xml}.out.000").write_text(
        _XML_RECORD.format(
            start=iso_ms(t_xml + 7),
            duration="12.500",
            mstart=iso_ms(t_xml + 7.1),
            mduration="12.100",
            xform="legacy",
            task="ID0000102",
            label="nk",
            stamp=stamp,
            user=user,
            end=iso_s(t_xml + 20),
        )
    )
    w.f(f"{xml}.err.000").write_text(w.f(f"{comps[1]}.err.000").read_text().replace(comps[1], xml))

    # A compute job with payloads in its .err and an integrity_summary multipart block in its .out.
    # The payload's duration must be a number: a string one ("0.250") makes the reference crash
    # (TypeError) when it merges it with the integrity_summary metric of the same type.
    tgt = comps[2]
    ts = d.ev_t(d.event("JOB_TERMINATED", tgt))
    metric = {
        "ts": ts,
        "monitoring_event": "int.metric",
        "payload": [
            {"event": "check", "file_type": "input", "succeeded": 2, "failed": 1, "duration": 0.25}
        ],
    }
    extra = {
        "ts": ts,
        "monitoring_event": "data_transfer",
        "payload": [
            {
                "src": "file:///data/f.0.in",
                "dst": "file:///scratch/f.0.in",
                "bytes": 4096,
                "success": True,
            }
        ],
    }
    err = w.f(f"{tgt}.err.000").read_text()
    marker = "\n######################[Pegasus Lite] Executing the user task"
    err = err.replace(
        marker,
        f"\n{log_time(ts)}: @@@MONITORING_PAYLOAD - START@@@{json.dumps(metric)}@@@MONITORING_PAYLOAD - END@@@"
        f"\n{log_time(ts)}: @@@MONITORING_PAYLOAD - START@@@{json.dumps(extra)}@@@MONITORING_PAYLOAD - END@@@"
        + marker,
    )
    w.f(f"{tgt}.err.000").write_text(err)
    out = w.f(f"{tgt}.out.000").read_text().rstrip("\n") + "\n"
    out += (
        "---------------pegasus-multipart\n"
        "- integrity_summary:\n"
        "    succeeded: 3\n"
        "    failed: 1\n"
        "    duration: 0.420\n"
        "---------------pegasus-multipart\n"
        "- integrity_verification_attempts:\n"
        "    - lfn: f.0.in\n"
        "      attempts: 2\n"
    )
    w.f(f"{tgt}.out.000").write_text(out)
    w.save()


def condor_rm_lines(
    t: int, dag: str, cl: str, pid: int, rm_args: str = "", metrics: bool = False
) -> list[str]:
    """What DAGMan writes when its job is removed (condor_rm sends SIGUSR1): abort, exit 2."""
    return [
        L(t, "Received SIGUSR1"),
        L(t, "Aborting DAG..."),
        L(t, f"Writing Rescue DAG to {dag}.rescue001..."),
        L(t, "Removing submitted jobs..."),
        L(t, "Removing any/all submitted HTCondor jobs..."),
        L(t, f"Running: /usr/bin/condor_rm -const DAGManJobId=={cl}{rm_args}"),
        L(t, "Note: 0 total job deferrals because of -MaxJobs limit (0)"),
        *([L(t, f"Wrote metrics file {dag}.metrics.")] if metrics else []),
        L(t, f"**** condor_scheduniv_exec.{cl}.0 (condor_DAGMAN) pid {pid} EXITING WITH STATUS 2"),
    ]


def case_pre_scripts_and_recovery(run: Path) -> None:
    w = _gen(run, 9, 606, "prerec")
    d = w.dagman
    comps = w.computes()
    create = w.job("create_dir_")
    failing = comps[1]
    # PRE scripts: one that succeeds, one that fails once (with a pre-script log) then succeeds.
    w.dag_add_script(create, f"SCRIPT PRE {create} /usr/bin/prepare-site.sh --site local --check")
    w.dag_add_script(
        failing,
        f"SCRIPT PRE {failing} {SUBDIR}/{failing}.pre.sh  -Dpegasus.log.*={failing}.pre.log --stage 2",
    )
    i = d.find(f"Submitting HTCondor Node {create} job(s)...")
    t = d.t(i)
    d.insert(
        i,
        [
            L(t - 2, f"Running PRE script of Node {create}..."),
            L(t, f"PRE Script of node {create} completed successfully."),
        ],
    )
    i = d.find(f"Submitting HTCondor Node {failing} job(s)...")
    t = d.t(i)
    d.insert(
        i,
        [
            L(t - 9, f"Running PRE script of Node {failing}..."),
            L(t - 7, f"PRE Script of Job {failing} failed with status 3"),
            L(t - 7, f"Retrying node {failing} (retry #1 of 1)..."),
            L(t - 2, f"Running PRE script of Node {failing}..."),
            L(t, f"PRE Script of node {failing} completed successfully."),
        ],
    )
    # The PRE failure bumped the output counter: the job's files are .001.
    for kind in (".out", ".err"):
        w.f(f"{failing}{kind}.000").rename(w.f(f"{failing}{kind}.001"))
    (w.dir / f"{failing}.pre.log.000").write_text(
        "prepare stage 2\nERROR: input f.0.in not yet staged\nexit 3\n"
    )

    # DAGMan killed while a compute runs; restarted by the schedd, it recovers from the node log.
    victim = comps[2]
    i = d.event("EXECUTE", victim)
    t = d.t(i) + 1
    cluster_line = d.lines[1]
    cl = re.search(r"exec\.(\d+)\.0", cluster_line).group(1)  # type: ignore[union-attr]
    header = _run_header(d, t, int(cl), 3_141_592, [])
    rec_lines = [d.lines[k] for k in range(len(d.lines[: i + 1])) if "Event: ULOG_" in d.lines[k]]
    recovery = [L(t, "Running in RECOVERY mode... >>>>>>>>>>")]
    recovery += [L(t, ln[len(dagman_time(0)) + 1 :]) for ln in rec_lines[-6:]]
    recovery += [L(t, "...done with RECOVERY mode <<<<<<<<<<")]
    boot = next(k for k, ln in enumerate(header) if "Bootstrapping..." in ln)
    header[boot + 2 : boot + 2] = recovery
    d.insert(i + 1, header)

    # condor_rm of the workflow while the cleanup job runs: SIGUSR1, abort, exit 2.
    clean = w.job("clean_up_")
    j = d.event("EXECUTE", clean)
    t = d.t(j) + 3
    dag = w.dag_path.name
    d.lines[j + 1 :] = condor_rm_lines(t, dag, cl, 3_141_592)
    for kind in (".out.000", ".err.000"):
        w.f(f"{clean}{kind}").unlink()
    w.save()


def _subwf(
    parent: Workdir,
    node: str,
    attempt: int,
    jobs: int,
    seed: int,
    name: str,
    root_uuid: str,
    fail: float = 0.0,
) -> Workdir:
    sub = _gen(
        parent.dir / SUBDIR / f"{node.split('_', 1)[1]}.{attempt:03d}", jobs, seed, name, fail=fail
    )
    sub.edit(
        sub.dir / "braindump.yml",
        lambda s: re.sub(r'root_wf_uuid: "[^"]*"', f'root_wf_uuid: "{root_uuid}"', s),
    )
    for p in sorted((sub.dir / SUBDIR).glob("*.sub")):
        sub.edit(
            p,
            lambda s: re.sub(
                r'\+pegasus_root_wf_uuid = "[^"]*"', f'+pegasus_root_wf_uuid = "{root_uuid}"', s
            ),
        )
    return sub


def _add_plan_job(w: Workdir, node: str, sub_name: str, parents: tuple[str, ...]) -> None:
    """A pegasus-plan_* job (DAX job) whose DAGMan runs the sub-workflow in 00/00/<x>/."""
    inner = node.split("_", 1)[1]
    w.add_job(
        w.job("create_dir_"),
        node,
        parents=parents,
        tasks=(),
        pre=f"{SUBDIR}/{node}.pre.sh  -Dpegasus.log.*={w.dir}/{node}.pre.log "
        f"-Dpegasus.workflow.root.uuid={w.uuid} --dir {w.dir.parent} --relative-submit-dir "
        f"{w.dir.name}/{SUBDIR}/./{inner} --basename {sub_name} --sites condorpool",
        job_info={
            "type": "10",
            "type_desc": "dax",
            "task_count": "0",
            "executable": "/usr/bin/condor_dagman",
        },
    )
    dagman_log = f"{w.dir}/{SUBDIR}/./{inner}/{sub_name}-0.dag.dagman.out"
    w.f(f"{node}.sub").write_text(
        "######################################################################\n"
        "# PEGASUS WMS GENERATED SUBMIT FILE\n"
        f"# SUBMIT FILE NAME : {node}.sub\n"
        "######################################################################\n"
        "stream_error  = false\nstream_output = false\n"
        f'environment = "LANG=en_US.UTF-8 _CONDOR_DAGMAN_LOG={dagman_log} _CONDOR_MAX_DAGMAN_LOG=0 '
        f"PEGASUS_METRICS=true CONDOR_JOBID=$(cluster).$(process) PEGASUS_WF_UUID={w.uuid} "
        f'PEGASUS_DAG_JOB_ID={node} PEGASUS_SITE=local"\n'
        '+OtherJobRemoveRequirements = "DAGManJobId =?= $(cluster)"\n'
        f'arguments = " -p 0  -f -l . -Notification never -Debug 3 -Lockfile {sub_name}-0.dag.lock '
        f'-Dag {sub_name}-0.dag -AllowVersionMismatch  -AutoRescue 1 -DoRescueFrom 0 "\n'
        f"error = {w.dir}//{SUBDIR}/{node}.err\n"
        "executable = /usr/bin/condor_dagman\n"
        "getenv = TRUE\n"
        f"initialdir = {w.dir}/{SUBDIR}/./{inner}\n"
        f"log = {w.dir}/{w.wf_name}.log\n"
        "notification = NEVER\n"
        f"output = {w.dir}//{SUBDIR}/{node}.out\n"
        "remove_kill_sig = SIGUSR1\n"
        "universe = scheduler\n"
        '+pegasus_generator = "Pegasus"\n'
        f'+pegasus_root_wf_uuid = "{w.uuid}"\n'
        f'+pegasus_wf_uuid = "{w.uuid}"\n'
        '+pegasus_wf_xformation = "condor::dagman"\n'
        f'+pegasus_wf_dax_job_id = "{inner}"\n'
        f'+pegasus_wf_dag_job_id = "{node}"\n'
        "+pegasus_job_class = 10\n"
        '+pegasus_site = "local"\n'
        "+pegasus_cores = 1\n"
        "queue\n"
    )
    w.f(f"{node}.err").write_text("")


def _dagman_span(w: Workdir) -> tuple[int, int]:
    return w.dagman.t(0), w.dagman.t(len(w.dagman.lines) - 1)


def case_nested_subworkflows(run: Path) -> None:
    root = _gen(run, 7, 707, "root")
    plan = "pegasus-plan_inner_x"
    _add_plan_job(root, plan, "inner", (root.job("stage_out_"),))

    # Attempt 0 (inner_x.000): the sub-workflow fails.
    sub0 = _subwf(root, plan, 0, 3, 717, "inner", root.uuid, fail=0.5)
    sub0.save()
    # Attempt 1 (inner_x.001): succeeds, and has its own sub-workflow deep_y.000.
    sub1 = _subwf(root, plan, 1, 3, 727, "inner", root.uuid)
    deep_node = "pegasus-plan_deep_y"
    _add_plan_job(sub1, deep_node, "deep", (sub1.computes()[0],))
    deep = _subwf(sub1, deep_node, 0, 2, 737, "deep", root.uuid)
    deep.save()
    d1 = sub1.dagman
    t = d1.t(d1.tail_index() - 1) + 5
    s = Seq(t)
    s.run(deep_node, d1.max_cluster() + 1, pre=0, duration=0)
    sub1_lines = s.lines
    # Move deep into the window of its plan job's execution, then stretch the plan job over it.
    i_exec = next(k for k, ln in enumerate(sub1_lines) if "ULOG_EXECUTE" in ln)
    t_exec = stamp_epoch(sub1_lines[i_exec])
    dstart, dend = _dagman_span(deep)
    shift_tree(deep.dir, t_exec + 1 - dstart)
    stretch = (dend - dstart) + 6
    sub1_lines[i_exec + 1 :] = [shift_text(ln, stretch) for ln in sub1_lines[i_exec + 1 :]]
    d1.append_before_tail(sub1_lines, stamp_epoch(sub1_lines[-1]))
    sub1.save()

    d = root.dagman
    t = d.t(d.tail_index() - 1) + 5
    base = d.max_cluster() + 1
    lines: list[str] = []
    for attempt, (sub, status) in enumerate(((sub0, 1), (sub1, 0))):
        s = Seq(t)
        s.run(plan, base + attempt, pre=0, status=status, post=status, duration=0)
        if status:
            s.log(f"Retrying node {plan} (retry #1 of 1)...")
        i_exec = next(k for k, ln in enumerate(s.lines) if "ULOG_EXECUTE" in ln)
        t_exec = stamp_epoch(s.lines[i_exec])
        start, end = _dagman_span(sub)
        shift_tree(sub.dir, t_exec + 1 - start)
        s.lines[i_exec + 1 :] = [shift_text(ln, end - start + 6) for ln in s.lines[i_exec + 1 :]]
        lines += s.lines
        t = stamp_epoch(s.lines[-1]) + 5
    d.append_before_tail(lines, t)
    root.save()


def case_multiplier_and_stdout(run: Path) -> None:
    w = _gen(run, 9, 808, "mult")
    comps = w.computes()
    # Multiplier factor from +pegasus_cores (and a non-integer value).
    for job, cores in ((comps[0], "4"), (comps[1], "16"), (comps[2], "2.5")):
        sub = w.f(f"{job}.sub")
        sub.write_text(sub.read_text().replace("+pegasus_cores = 1", f"+pegasus_cores = {cores}"))
    # Large kickstart stdout (> 64 KiB) plus stderr in the same record: budget and truncation.
    big = comps[3]
    lines = [
        f"row {k:05d}: value={k * 7 % 1000:3d} 100% \"ok\" 'fine' caf\u00e9\tTAB"
        for k in range(1450)
    ]
    rec = w.f(f"{big}.out.000").read_text()
    rec = ks_set_data(rec, "stdout", "\n".join(lines))
    rec = ks_set_data(rec, "stderr", "warning: something on stderr\nsecond stderr line")
    w.f(f"{big}.out.000").write_text(rec)
    # Large .err file (> 63 535 characters) on another job.
    err = w.f(f"{comps[0]}.err.000").read_text()
    filler = "".join(f"debug line {k:05d} of a chatty PegasusLite job\n" for k in range(1500))
    w.f(f"{comps[0]}.err.000").write_text(
        err.replace("PegasusLite: exitcode 0", filler + "PegasusLite: exitcode 0")
    )
    # Register job with several .in lines and extra attributes.
    reg = w.job("register_")
    out = re.search(r"file://(\S+)/f\.", w.f(f"{reg}.in").read_text()).group(1)  # type: ignore[union-attr]
    w.f(f"{reg}.in").write_text(
        f'f.0.out file://{out}/f.0.out site="local"\n'
        f'f.0.summary file://{out}/f.0.summary site="local" checksum.type="sha256"\n'
        f'f.0.log gsiftp://storage.example.edu/data/f.0.log site="storage"\n'
        f'f.0.tar.gz file://{out}/archive/f.0.tar.gz  site="archive"\n'
        f'f.0.extra https://www.example.edu/f.0.extra site="web" size="12"\n'
    )
    w.save()


# --------------------------------------------------------------------------- HTCondor 9-23 logs, degraded dirs

_PROGRESS = (
    "Of ",
    " Done     Pre",
    "  ===",
    "DAG status:",
    "job proc(s) currently held",
    "Number of idle job procs",
    "Currently monitoring",
)
_COUNT_ROW = re.compile(r"^(?:\s+\d+){7,8}$")


def _msg(line: str) -> str:
    return line[len(dagman_time(0)) + 1 :]


def drop_progress(d: DagmanOut) -> None:
    """DAGMan run with a low DAGMAN_VERBOSITY: no progress table, status or idle-count lines."""
    d.lines = [
        ln for ln in d.lines if not (_msg(ln).startswith(_PROGRESS) or _COUNT_ROW.match(_msg(ln)))
    ]


def debug_tokens(d: DagmanOut) -> None:
    """HTCondor 9 with a debug header: ``(D_ALWAYS)`` after every log time (2022 logs)."""
    d.lines = [
        ln[: len(dagman_time(0))] + " (D_ALWAYS) " + _msg(ln) if _STAMP.match(ln) else ln
        for ln in d.lines
    ]


def condor_submit_lines(d: DagmanOut, node: str, dagman_cluster: str) -> None:
    """Submission through condor_submit (HTCondor 9.0 default) instead of direct submission."""
    i = d.find(f"Submitting node {node} from file ")
    t = d.t(i)
    cluster = d.cluster(node)
    sub = _msg(d.lines[i]).split(" from file ")[1].split(" using ")[0]
    d.lines[i : i + 2] = [
        L(
            t,
            f"submitting: /usr/bin/condor_submit -a dag_node_name' '=' '{node} -a "
            f"+DAGManJobId' '=' '{dagman_cluster} -a DAGManJobId' '=' '{dagman_cluster} "
            f"-batch-name x.dag+{dagman_cluster} -a submit_event_notes' '=' 'DAG' 'Node:' '{node} "
            f"-a +DAGParentNodeNames' '=' '\"\" -a notification' '=' 'never {sub}",
        ),
        L(t, "From submit: Submitting job(s)."),
        L(t, f"From submit: 1 job(s) submitted to cluster {cluster}."),
        L(t, f"\tassigned HTCondor ID ({cluster}.0.0)"),
    ]


def _dagman_cluster(d: DagmanOut) -> str:
    m = re.search(r"condor_scheduniv_exec\.(\d+)\.0", "\n".join(d.lines[:3]))
    assert m is not None
    return m.group(1)


def case_htcondor9_debug_tokens(run: Path) -> None:
    """An HTCondor 9.11 log as written in 2022: debug tokens, condor_submit, file transfer events."""
    w = _gen(run, 5, 909, "condor9", retry=0.5)
    d = w.dagman
    comps = w.computes()
    cl = _dagman_cluster(d)
    # Version banner of the 9.x series.
    v10 = re.search(r"\$CondorVersion: (.*?) \$", "\n".join(d.lines[:20]))
    assert v10 is not None
    v9 = "9.11.0 2022-07-19 BuildID: 597572 PackageID: 9.11.0-0.597572 RC"
    d.lines = [ln.replace(v10.group(1), v9) for ln in d.lines]
    # condor_submit for the first job; a submit warning with its untimed continuation line.
    condor_submit_lines(d, w.job("create_dir_"), cl)
    i = d.find(f"Submitting node {comps[0]} from file ")
    d.insert(
        i + 1,
        [
            L(
                d.t(i),
                "Submit warning: Submit:0:the line 'RETRY = 0' was unused by DAGMAN. Is it a typo?",
            ),
            "|Submit:0:the line 'JOB = x' was unused by DAGMAN. Is it a typo?",
        ],
    )
    # Input and output transfer events of a compute job.
    node = comps[0]
    cluster = d.cluster(node)
    i = d.event("EXECUTE", node)
    t, t_ev = d.t(i), d.ev_t(i)
    d.insert(
        i,
        [
            L(
                t,
                f"Event: ULOG_FILE_TRANSFER for HTCondor Node {node} ({cluster}.0.0) {{{dagman_time(t_ev - 1)}}}",
            )
        ],
    )
    i = d.event("JOB_TERMINATED", node)
    t = d.t(i)
    d.insert(
        i,
        [
            L(
                t,
                f"Event: ULOG_FILE_TRANSFER for HTCondor Node {node} ({cluster}.0.0) {{{dagman_time(t - 1)}}}",
            )
        ],
    )
    # A retried job whose first attempt was killed by a signal.
    failed = next(
        k for k, ln in enumerate(d.lines) if "job proc (" in ln and "failed with status" in ln
    )
    d.lines[failed] = re.sub(r"failed with status \d+\.", "failed with signal 9.", d.lines[failed])
    # A PRE script given without arguments in the .dag (recorded with its path and an empty argv).
    pre_node = comps[-1]
    w.dag_add_script(pre_node, f"SCRIPT PRE {pre_node} /usr/local/bin/stage-check.sh")
    i = d.find(f"Submitting HTCondor Node {pre_node} job(s)...")
    t = d.t(i)
    d.insert(
        i,
        [
            L(t - 2, f"Running PRE script of Node {pre_node}..."),
            L(t, f"PRE Script of node {pre_node} completed successfully."),
        ],
    )
    if not d.has("MultiLogFiles: truncating"):
        i = d.find("Bootstrapping...")
        d.insert(
            i + 2,
            [
                L(
                    d.t(i),
                    f"MultiLogFiles: truncating log file {w.dir}/./{w.dag_path.name}.nodes.log",
                )
            ],
        )
    i = d.find("EXITING WITH STATUS")
    d.insert(i, [L(d.t(i), f"Wrote metrics file {w.dag_path.name}.metrics.")])
    debug_tokens(d)
    w.save()


def case_degraded_submit_dir(run: Path) -> None:
    """Files users lose: a job's .sub, a job's .out, both of another, a cut kickstart record."""
    w = _gen(run, 6, 919, "degraded")
    comps = w.computes()
    w.f(f"{comps[0]}.sub").unlink()
    w.f(f"{comps[1]}.out.000").unlink()
    w.f(f"{comps[2]}.sub").unlink()
    w.f(f"{comps[2]}.out.000").unlink()
    # A kickstart record cut while it was written (job killed, disk full).
    rec = w.f(f"{comps[3]}.out.000").read_text()
    w.f(f"{comps[3]}.out.000").write_text(rec[: rec.index("\n  machine:") + 40])
    w.save()


def _plan_attempts(root: Workdir, plan: str, sub: Workdir, statuses: tuple[int, ...]) -> None:
    """Runs ``plan`` once per status (retrying after a failure), ``sub`` during the last attempt."""
    d = root.dagman
    t = d.t(d.tail_index() - 1) + 5
    base = d.max_cluster() + 1
    lines: list[str] = []
    for attempt, status in enumerate(statuses):
        s = Seq(t)
        s.run(plan, base + attempt, pre=0, status=status, post=status, duration=0)
        if status:
            s.log(f"Retrying node {plan} (retry #{attempt + 1} of {len(statuses) - 1})...")
        i_exec = next(k for k, ln in enumerate(s.lines) if "ULOG_EXECUTE" in ln)
        t_exec = stamp_epoch(s.lines[i_exec])
        if attempt == len(statuses) - 1:
            start, end = _dagman_span(sub)
            shift_tree(sub.dir, t_exec + 1 - start)
            s.lines[i_exec + 1 :] = [
                shift_text(ln, end - start + 6) for ln in s.lines[i_exec + 1 :]
            ]
        lines += s.lines
        t = stamp_epoch(s.lines[-1]) + 5
    d.append_before_tail(lines, t)


def case_subworkflow_resubmitted(run: Path) -> None:
    """A sub-workflow job submitted twice into the same directory (no ``.001``)."""
    root = _gen(run, 4, 929, "resub")
    plan = "pegasus-plan_inner_r"
    _add_plan_job(root, plan, "inner", (root.computes()[-1],))
    sub = _subwf(root, plan, 0, 2, 939, "inner", root.uuid)
    sub.save()
    _plan_attempts(root, plan, sub, (1, 0))
    root.save()


def case_subworkflow_no_static_bp(run: Path) -> None:
    """A sub-workflow whose static.bp is missing: fatal (exit 1), what is known is kept."""
    root = _gen(run, 4, 949, "nostatic")
    plan = "pegasus-plan_inner_s"
    _add_plan_job(root, plan, "inner", (root.computes()[-1],))
    sub = _subwf(root, plan, 0, 2, 959, "inner", root.uuid)
    sub.static_path.unlink()
    sub.save()
    _plan_attempts(root, plan, sub, (0,))
    root.save()


def case_just_started(run: Path) -> None:
    """dagman.out of a DAGMan that has just started: header, first submission, no exit."""
    w = _gen(run, 4, 969, "started")
    d = w.dagman
    i = d.event("SUBMIT", w.job("create_dir_"))
    d.lines = d.lines[: i + 1]
    w.save()


def case_running_cut_mid_line(run: Path) -> None:
    """A running workflow's dagman.out whose last line is being written (cut mid-line)."""
    w = _gen(run, 5, 979, "cutline")
    d = w.dagman
    i = d.event("JOB_TERMINATED", w.computes()[0])
    d.lines = d.lines[: i + 1]
    d.save()
    text = d.path.read_text().rstrip("\n")
    d.path.write_text(text[: len(text) - 25])  # no line break at the end
    # The job that has not finished has no output yet.
    for kind in (".out.000", ".err.000"):
        for node in w.computes()[1:]:
            if w.f(f"{node}{kind}").exists():
                w.f(f"{node}{kind}").unlink()


def case_removed_no_progress(run: Path) -> None:
    """condor_rm of the workflow while jobs run, in a log without progress lines."""
    w = _gen(run, 6, 989, "removed")
    d = w.dagman
    cl = _dagman_cluster(d)
    comps = w.computes()
    running = [n for n in comps if d.has(f"Event: ULOG_EXECUTE for HTCondor Node {n} (")]
    j = max(d.event("EXECUTE", n) for n in running[:2])
    t = d.t(j) + 3
    dag = w.dag_path.name
    d.lines[j + 1 :] = condor_rm_lines(
        t,
        dag,
        cl,
        3_141_593,
        " -reason 'DAG Removed: User removed scheduler job from queue.'",
        metrics=True,
    )
    drop_progress(d)
    # Jobs that never ended have no outputs.
    for node in w.jobs:
        if not any(f"Node {node} job proc" in ln for ln in d.lines):
            for kind in (".out.000", ".err.000"):
                if w.f(f"{node}{kind}").exists():
                    w.f(f"{node}{kind}").unlink()
    w.save()


def _events_after(d: DagmanOut, node: str, kind: str, events: list[tuple[int, str]]) -> None:
    """Event lines (brace-time offset, ULOG kind or a plain message) after ``node``'s ``kind`` event."""
    i = d.event(kind, node)
    t, ev, cl = d.t(i), d.ev_t(i), d.cluster(node)
    d.insert(
        i + 1,
        [
            L(
                t,
                f"Event: ULOG_{name} for HTCondor Node {node} ({cl}.0.0) {{{dagman_time(ev + dt)}}}",
            )
            if name.isupper()
            else L(t, name)
            for dt, name in events
        ],
    )


def case_grid_and_reconnect(run: Path) -> None:
    """Event kinds of grid-universe (HTCondor-CE, BOSCO) and of disconnected or failing jobs."""
    w = _gen(run, 5, 999, "gridrc")
    c1, c2, c3, c4 = w.computes()[:4]
    d = w.dagman
    # A grid-universe job: grid submit, resource up/down, status unknown then known.
    _events_after(
        d,
        c1,
        "SUBMIT",
        [
            (0, "GRID_SUBMIT"),
            (0, "GRID_RESOURCE_UP"),
            (1, "JOB_STATUS_UNKNOWN"),
            (1, "JOB_STATUS_KNOWN"),
        ],
    )
    _events_after(d, c1, "EXECUTE", [(1, "GRID_RESOURCE_DOWN"), (1, "GRID_RESOURCE_UP")])
    # Shadow lost its starter and got it back; job ad information and a chirp (generic) event.
    _events_after(
        d,
        c2,
        "EXECUTE",
        [
            (1, "JOB_DISCONNECTED"),
            (1, "JOB_RECONNECTED"),
            (1, "JOB_AD_INFORMATION"),
            (2, "GENERIC"),
        ],
    )
    # Reconnection failed: the job runs again.
    _events_after(
        d, c3, "EXECUTE", [(1, "JOB_DISCONNECTED"), (2, "JOB_RECONNECT_FAILED"), (3, "EXECUTE")]
    )
    # The executable could not be started: held with a reason, released, runs.
    _events_after(
        d,
        c4,
        "SUBMIT",
        [
            (1, "EXECUTABLE_ERROR"),
            (1, "JOB_HELD"),
            (
                1,
                "  Hold reason: Error from slot1@node002.cluster.example.edu: Failed to execute "
                "'/var/lib/condor/execute/dir_1/keg': (errno=13: 'Permission denied')",
            ),
            (1, "1 job proc(s) currently held"),
            (2, "JOB_RELEASED"),
        ],
    )
    w.save()


CASES: dict[str, Callable[[Path], None]] = {
    "held_released_aborted": case_held_released_aborted,
    "submit_failures": case_submit_failures,
    "rescue_dag_restart": case_rescue_dag_restart,
    "rescue_dag_restart_noexit": case_rescue_dag_restart_noexit,
    "clustered_jobs": case_clustered_jobs,
    "no_kickstart_and_xml": case_no_kickstart_and_xml,
    "pre_scripts_and_recovery": case_pre_scripts_and_recovery,
    "nested_subworkflows": case_nested_subworkflows,
    "multiplier_and_stdout": case_multiplier_and_stdout,
    "htcondor9_debug_tokens": case_htcondor9_debug_tokens,
    "degraded_submit_dir": case_degraded_submit_dir,
    "subworkflow_resubmitted": case_subworkflow_resubmitted,
    "subworkflow_no_static_bp": case_subworkflow_no_static_bp,
    "just_started": case_just_started,
    "running_cut_mid_line": case_running_cut_mid_line,
    "removed_no_progress": case_removed_no_progress,
    "grid_and_reconnect": case_grid_and_reconnect,
}


# --------------------------------------------------------------------------- writing and the reference


def _relocate(tmp: Path, orig: str) -> None:
    """Rewrites the generation directory's path to the orig submit dir the case pretends to come from."""
    old = str(tmp).encode()
    for path in sorted(tmp.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, orig.encode()))


def build_input(case: str) -> Path:
    dest = CASES_DIR / case / "input"
    with tempfile.TemporaryDirectory(prefix="mkcase-") as tmp:
        run = Path(tmp) / "run0001"
        CASES[case](run)
        _relocate(Path(tmp), f"{ORIG_BASE}/{case}")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(run, dest, symlinks=True)
    return dest


def _monitord_script(python: str) -> Path:
    venv = Path(python).parent.parent
    found = sorted(venv.glob("lib/python3*/site-packages/Pegasus/cli/pegasus-monitord.py"))
    if not found:
        raise SystemExit(f"pegasus-monitord.py not found under {venv}")
    return found[0]


def _replay_reference(python: str, inp: Path, work: Path, bp: Path | None) -> tuple[Path, int]:
    run = work / "run"
    shutil.copytree(inp, run, symlinks=True)
    home = work / "home"
    home.mkdir()
    dagman_out = next(run.glob("*.dag.dagman.out"))
    cmd = [python, str(_monitord_script(python)), "-r", dagman_out.name]
    if bp is not None:
        cmd += ["-d", f"file://{bp}"]
    env = {**os.environ, "TZ": TZ, "HOME": str(home)}
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=600)
    (work / "reference.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        print(
            f"  reference exit {proc.returncode}; log in {work / 'reference.log'}", file=sys.stderr
        )
    return run, proc.returncode


def _compact_db(src: Path, dest: Path) -> None:
    """Copies the reference's DB re-paged to 1 KiB pages (VACUUM): same rows and schema, ~40% of the size.

    Every Stampede table and index takes at least one page, so the 4 KiB pages of
    the original make even an empty DB 250 KB.  The copy is checked with
    ``stampede-diff --strict`` (all columns, version timestamp included) when the
    tool is available.
    """
    shutil.copy(src, dest)
    con = sqlite3.connect(dest)
    try:
        con.execute("PRAGMA page_size=1024")
        con.execute("VACUUM")
    finally:
        con.close()
    tool = HERE.parents[2] / "shared" / "tools" / "stampede-diff"
    if tool.exists():
        check = subprocess.run(
            [sys.executable, str(tool), "--strict", str(src), str(dest)],
            capture_output=True,
            text=True,
        )
        if check.returncode != 0:
            raise SystemExit(f"compacted DB differs from the reference's:\n{check.stdout[-3000:]}")


def build_expected(case: str, python: str, keep: Path | None) -> None:
    inp = CASES_DIR / case / "input"
    exp = CASES_DIR / case / "expected"
    work = Path(tempfile.mkdtemp(prefix=f"refcase-{case}-", dir=keep))
    try:
        bp = work / "events.bp"
        (work / "a").mkdir()
        run, rc = _replay_reference(python, inp, work / "a", bp)
        (work / "b").mkdir()
        run_db, rc_db = _replay_reference(python, inp, work / "b", None)
        if rc != rc_db:
            raise SystemExit(f"{case}: reference exit {rc} with -d file, {rc_db} into its DB")
        dbs = sorted(run_db.glob("*.stampede.db"))
        if len(dbs) != 1 or not bp.exists():
            raise SystemExit(f"{case}: reference made no DB or no events ({dbs}, {bp.exists()})")
        if exp.exists():
            shutil.rmtree(exp)
        (exp / "jobstate").mkdir(parents=True)
        shutil.copy(bp, exp / "events.bp")
        if rc:  # a fatal error the reference ends with (what it kept is still compared)
            (exp / "returncode").write_text(f"{rc}\n")
        _compact_db(dbs[0], exp / "stampede.db")
        shutil.copy(run / "jobstate.log", exp / "jobstate.log")
        for js in sorted(run.rglob("jobstate.log")):
            target = exp / "jobstate" / js.relative_to(run)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(js, target)
    finally:
        if keep is None:
            shutil.rmtree(work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "cases", nargs="*", help=f"cases to (re)build (default all: {', '.join(CASES)})"
    )
    parser.add_argument(
        "--reference", metavar="PYTHON", help="python of the reference venv; also make expected/"
    )
    parser.add_argument(
        "--keep", type=Path, help="keep the reference's work dirs (and logs) under this dir"
    )
    args = parser.parse_args(argv)
    for case in args.cases or list(CASES):
        if case not in CASES:
            parser.error(f"unknown case {case}")
        if Path(f"{ORIG_BASE}/{case}").exists():
            parser.error(f"{ORIG_BASE}/{case} exists: the reference would write its DB there")
        print(f"{case}: input")
        build_input(case)
        if args.reference:
            print(f"{case}: expected (reference)")
            build_expected(case, args.reference, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
