"""The events a finished job's output records give: invocations, hosts, monitoring, registrations.

Builders for :func:`monitord.core.jobout.parse_job_output`; each appends to a
:class:`JobOutput` (the parse's result) and never sends anything itself. Also the
attributes ``composite`` adds to ``main.end`` (doc §5.3).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import structlog

from monitord.core.events import (
    UNSET,
    Fixed,
    InvEnd,
    InvStart,
    JobInstComposite,
    JobInstHostInfo,
    RcMeta,
    RcPfn,
    StampedeEvent,
    TaskMonitoring,
)
from monitord.core.jobinstance import JobInstance
from monitord.core.jobreader import JobReader
from monitord.core.readers.kickstart import KickstartRecord
from monitord.core.timeparse import iso_to_epoch

log = structlog.get_logger(__name__)

ReadText = Callable[[str], "str | None"]


@dataclass(frozen=True, slots=True)
class JobFiles:
    """What the parse needs besides the instance: how to read a file, and where the job's are."""

    read_text: ReadText
    run_dir: str
    wf_uuid: str
    is_subdag: bool  # a DAG node of its own: no kickstart output
    rotated: bool  # a POST script or PMC: the files carry the .NNN retry suffix
    store_stdout: bool
    fixed: Fixed | None = None  # the workflow's fixed attributes, for the events built
    reader: JobReader | None = None  # the .out/.err parses (None: read_text's, parsed here)


@dataclass(slots=True)
class JobOutput:
    """What one parse found, for the machine to send: events in order, then its hooks."""

    events: list[StampedeEvent] = field(default_factory=list)
    invocations: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    records: list[KickstartRecord] = field(default_factory=list)

    def emit(self, event: StampedeEvent) -> None:
        self.events.append(event)


# pegasus_job_class code -> composite ``jobtype``.
JOB_CLASSES = {
    0: "unassigned",
    1: "compute",
    2: "stage-in-tx",
    3: "stage-out-tx",
    4: "registration",
    5: "inter-site-tx",
    6: "create-dir",
    7: "stage_worker_tx",
    8: "cleanup",
    9: "chmod",
    10: "dax",
    11: "dag",
}

CPU_KEYS = ("cpu_count", "cpu_speed", "cpu_vendor", "cpu_model")
MACHINE_KEYS = (*CPU_KEYS, "ram", "system", "release", "machine")


@lru_cache(maxsize=1)
def _condor_dagman_path() -> str:
    return shutil.which("condor_dagman") or "condor_dagman"


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _opt(value: Any) -> Any:
    """``None`` read from a record: the attribute is not sent."""
    return UNSET if value is None else value


def int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def emit_invocation(
    out: JobOutput,
    inst: JobInstance,
    is_subdag: bool,
    n: int,
    rec: dict[str, Any],
    keys: dict[str, Any],
    start_time: int | None,
) -> None:
    """``inv.start`` and ``inv.end`` of one invocation record (``{}``: made up from the job);
    ``start_time``: its start in whole seconds (:func:`record_start_time`)."""
    xwf_id, job_id, job_inst_id = keys["xwf_id"], keys["job_id"], keys["job_inst_id"]
    fixed = keys["fixed"]
    out.emit(
        InvStart.of(
            xwf_id, job_id, job_inst_id, n, UNSET if start_time is None else start_time, fixed
        )
    )
    transformation, task_id = _task(inst, rec, is_subdag)
    dur, dur_f, rec_dur = _duration(inst, rec)
    cpu, avg_cpu = _cpu_times(rec, dur_f)
    ts: Any = UNSET
    if rec_dur is not None and start_time is not None:
        ts = int(start_time + rec_dur)
    elif inst.main_end is not None:
        ts = int(inst.main_end)
    exitcode = rec["raw"] if "raw" in rec else str(inst.main_exitcode)
    executable, argv = _command(inst, rec, is_subdag)
    out.emit(
        InvEnd.of(
            xwf_id,
            job_id,
            job_inst_id,
            n,
            _opt(transformation),
            _opt(task_id),
            _opt(start_time),
            dur,
            cpu,  # remote_cpu_time
            avg_cpu,
            _opt(rec.get("maxrss")),
            ts,
            exitcode,
            executable,
            argv,
            "Error" if exitcode != "0" else UNSET,  # level
            fixed,
        )  # fmt: skip
    )
    out.invocations.append((n, rec))


def _duration(inst: JobInstance, rec: dict[str, Any]) -> tuple[Any, float | None, float | None]:
    """The duration as sent, as a number, and the record's own as a number (``None``: none)."""
    duration = rec.get("duration")
    rec_dur = _num(duration)  # the record's duration as a number, once
    if duration is not None:
        # As the record has it: a YAML number, or the text of an XML attribute / cluster line.
        return duration, rec_dur, rec_dur
    dur = (
        int(inst.main_end - inst.main_start)
        if inst.main_start is not None and inst.main_end is not None
        else 0
    )
    return dur, float(dur), rec_dur


def _cpu_times(rec: dict[str, Any], dur_f: float | None) -> tuple[Any, Any]:
    """``remote_cpu_time`` (user + system) and its average over the duration, else UNSET."""
    utime = rec.get("utime")
    stime = rec.get("stime")
    if utime is None or stime is None:
        return UNSET, UNSET
    cpu = float(utime) + float(stime)
    return cpu, (cpu / dur_f if dur_f else UNSET)


def record_start_time(inst: JobInstance, rec: dict[str, Any]) -> int | None:
    """The record's start, else the job's main start, else its end (whole seconds)."""
    if rec.get("start") is not None:
        start = iso_to_epoch(str(rec["start"]))
        return int(start) if start is not None else None
    return job_start_time(inst)


def job_start_time(inst: JobInstance) -> int | None:
    """A record's start when it has none: the job's main start, else its end (whole seconds)."""
    if inst.main_start is not None:
        return int(inst.main_start)
    if inst.main_end is not None:
        return int(inst.main_end)
    return None


def _task(inst: JobInstance, rec: dict[str, Any], is_subdag: bool) -> tuple[Any, Any]:
    """Transformation and task id: the record's, else the submit file's."""
    sub = inst.sub
    transformation = rec.get("transformation")
    if transformation is None:
        if sub is not None and sub.transformation:
            transformation = sub.transformation
        elif is_subdag:
            transformation = "condor::dagman"
    task_id = rec.get("derivation")
    if task_id is None or task_id == "null":
        task_id = sub.dax_job_id if sub is not None else None
    return transformation, task_id


def _command(inst: JobInstance, rec: dict[str, Any], is_subdag: bool) -> tuple[Any, Any]:
    """Executable and arguments: the record's, else the submit file's (a DAG: condor_dagman)."""
    sub = inst.sub
    if rec.get("name") is not None:
        executable = rec["name"]
    elif sub is not None and sub.executable:
        executable = sub.executable
    elif is_subdag:
        executable = _condor_dagman_path()
    else:
        executable = ""
    argv = rec.get("argument-vector")
    if not argv:
        argv = sub.arguments if sub is not None and sub.arguments else UNSET
    return executable, argv


def emit_host(out: JobOutput, rec: dict[str, Any], keys: dict[str, Any], ts: float) -> None:
    has_uname = (
        rec.get("system") is not None
        and rec.get("release") is not None
        and rec.get("machine") is not None
    )
    out.emit(
        JobInstHostInfo.of(
            keys["xwf_id"],
            keys["job_id"],
            keys["job_inst_id"],
            rec.get("hostname") or "unknown",  # hostname
            rec.get("hostaddr") or "unknown",  # ip
            rec.get("resource") or "unknown",  # site
            _opt(rec.get("total")),  # total_memory
            f"{rec['system']}-{rec['release']}-{rec['machine']}" if has_uname else UNSET,
            float(ts),
            keys["fixed"],
        )  # fmt: skip
    )


def emit_rc_meta(out: JobOutput, files: JobFiles, rec: dict[str, Any], ts: float) -> None:
    outputs = rec.get("outputs")
    if not outputs:
        return
    emit = out.events.append
    of = RcMeta.of
    xwf_id = files.wf_uuid
    fixed = files.fixed
    ts = float(ts)
    for lfn, meta in outputs.items():
        for key, value in meta.items():
            emit(of(xwf_id, lfn, ts, key, value, fixed))


def emit_monitoring(
    out: JobOutput, inst: JobInstance, payload: dict[str, Any], keys: dict[str, Any], ts: float
) -> None:
    items = payload.get("payload")
    if not isinstance(items, list):
        items = [items] if isinstance(items, dict) else []
    name = payload.get("monitoring_event") or "monitoring.additional"
    fields = TaskMonitoring.by_wire
    for item in items:
        own: dict[str, Any] = {
            **keys,
            "sched_id": _opt(inst.sched_id),
            "monitoring_event": name,
            "ts": payload.get("ts", int(ts)),
        }
        extra: dict[str, Any] = {}
        if isinstance(item, dict):
            # The payload's keys: an attribute of the kind's list replaces it, in its place.
            for key, value in item.items():
                if key in fields:
                    own[fields[key]] = value
                else:
                    extra[key] = value
        out.emit(TaskMonitoring(**own, extra=extra))


def emit_cluster_tasks(
    out: JobOutput,
    inst: JobInstance,
    files: JobFiles,
    tasks: list[KickstartRecord],
    keys: dict[str, Any],
) -> None:
    """Clustering without kickstart: task records plus the job's ``.in`` file (doc §1.6)."""
    by_id: dict[int, dict[str, Any]] = {}
    for t in tasks:
        tid = int_or_none(t.data.get("id"))
        if tid is not None:
            by_id[tid] = dict(t.data)
    in_text = files.read_text(os.path.join(inst.submit_dir, inst.name + ".in"))
    if in_text is None:
        return
    commands: list[str] = []
    for line in in_text.splitlines():
        if line.startswith("#@"):
            parts = line[2:].split()
            if len(parts) >= 3 and int_or_none(parts[0]) in by_id:
                d = by_id[int(parts[0])]
                d["transformation"], d["derivation"] = parts[1], parts[2]
        elif line.strip() and not line.startswith("#") and not line.startswith("EDGE"):
            commands.append(line.strip())
    n = 0
    for tid in sorted(by_id):
        d = by_id[tid]
        if 0 < tid <= len(commands):
            cmd = commands[tid - 1].split(None, 1)
            d["name"] = cmd[0]
            d["argument-vector"] = cmd[1] if len(cmd) > 1 else ""
        if "status" in d:
            d["exitcode"] = d["raw"] = d["status"]
        if not all(
            k in d
            for k in (
                "transformation",
                "derivation",
                "start",
                "duration",
                "name",
                "argument-vector",
            )
        ):
            continue
        n += 1
        emit_invocation(out, inst, files.is_subdag, n, d, keys, record_start_time(inst, d))


def emit_registrations(
    out: JobOutput, inst: JobInstance, files: JobFiles, keys: dict[str, Any]
) -> None:
    text = files.read_text(os.path.join(inst.submit_dir, inst.name + ".in"))
    if text is None:
        return
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        site = None
        for extra in parts[2:]:
            if extra.startswith("site="):
                site = extra[5:].strip('"')
        out.emit(RcPfn.of(files.wf_uuid, parts[0], parts[1], site, files.fixed))


def composite_extras(
    inst: JobInstance, app: str | None, wf_label: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields ``composite`` adds to ``main.end`` (doc §5.3), and its extra keys
    (``metadata.<name>``, multipart records' keys) in the reference's order."""
    extra = inst.composite_extra
    out: dict[str, Any] = {"int_error_count": extra.get("int_error_count", 0)}
    more: dict[str, Any] = {}
    if extra.get("hostname"):
        out["hostname"] = extra["hostname"]
    sub = inst.sub
    job_class = int_or_none(sub.job_class) if sub is not None else None
    out["jobtype"] = JOB_CLASSES.get(job_class, "unknown") if job_class is not None else "unknown"
    for key in MACHINE_KEYS:
        if key in extra:
            out[key] = extra[key]
    if sub is not None:
        for key, value in sub.requirements.items():
            out[key] = value
    for key, value in extra.items():
        if key.startswith("metadata."):
            more[key] = value
    fields = JobInstComposite.by_wire
    for key, value in extra.items():
        if key in out or key in MACHINE_KEYS or key.startswith("metadata."):
            continue
        if key in ("hostname", "int_error_count", "invocations"):
            continue
        if key in fields:
            out[fields[key]] = value
        else:
            more[key] = value
    out["invocations"] = extra.get("invocations", [])
    if app:
        out["app"] = app
    out["wf"] = wf_label
    return out, more
