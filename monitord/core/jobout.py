"""Job output extraction: a finished job's .out/.err/.in files -> invocation, host and metric events.

Runs when the main job is known to be over (doc §1.6-1.8, §5.2-5.5): at
JOB_SUCCESS/FAILURE for jobs without a POST script, else at the POST script's
end.  File access goes through the workflow context (``read_text``), so this
module stays free of I/O and is tested with in-memory files.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import structlog

from monitord.core.jobinstance import JobInstance
from monitord.core.jobtext import (
    stderr_text_from_err,
    stdout_text_from_records,
    stdout_text_without_kickstart,
)
from monitord.core.readers import errfile
from monitord.core.readers.integrity import event_count, integrity_metrics
from monitord.core.readers.kickstart import KickstartRecord, parse_kickstart
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


@dataclass(slots=True)
class JobOutput:
    """What one parse found, for the machine to send: events in order, then its hooks."""

    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    invocations: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    records: list[KickstartRecord] = field(default_factory=list)

    def emit(self, name: str, attrs: dict[str, Any]) -> None:
        self.events.append((name, attrs))


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

_INVOCATION_SUMMARY_KEYS = (
    "transformation",
    "exitcode",
    "duration",
    "user",
    "hostname",
    "hostaddr",
    "maxrss",
    "tot_ip_size_mb",
    "tot_op_size_mb",
)
_CPU_KEYS = ("cpu_count", "cpu_speed", "cpu_vendor", "cpu_model")
_MACHINE_KEYS = (*_CPU_KEYS, "ram", "system", "release", "machine")


@lru_cache(maxsize=1)
def _local_host() -> tuple[str, str]:
    name = socket.getfqdn()
    try:
        ip = socket.gethostbyname(name)
    except OSError:
        ip = "unknown"
    return name, ip


@lru_cache(maxsize=1)
def _condor_dagman_path() -> str:
    return shutil.which("condor_dagman") or "condor_dagman"


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def read_pre_script_log(inst: JobInstance, pre_log: str | None, files: JobFiles) -> None:
    """PRE_SCRIPT_FAILURE: the pre-script log becomes the job's stdout (doc §1.8)."""
    if not pre_log:
        return
    path = f"{pre_log}.{inst.out_num or 0:03d}"
    inst.stdout_file = path
    text = files.read_text(path)
    if text is not None and files.store_stdout:
        inst.stdout_text, _ = stdout_text_without_kickstart(text)


def parse_job_output(inst: JobInstance, files: JobFiles, ts: float) -> JobOutput:
    """Read a finished job's files into ``inst`` and the events they give; never calls back.

    Sets what the files say on the instance (site, user, stdout/stderr text, exit code of
    PegasusLite, composite extras) and returns the events to send, in order.
    """
    out = JobOutput()
    is_subdag = files.is_subdag
    suffix = ""
    if files.rotated:
        inst.rotated = True
        suffix = f".{inst.out_num or 0:03d}"
    base = os.path.join(inst.submit_dir, inst.name)
    noop = inst.name.startswith("noop_")

    records: list[KickstartRecord] = []
    out_text: str | None = None
    if not is_subdag:
        out_text = files.read_text(base + ".out" + suffix)
        if out_text is None:
            if not noop:
                log.error("cannot open job output", path=base + ".out" + suffix, job=inst.name)
        else:
            records = parse_kickstart(out_text)

    # The .err file: stderr text, payloads, PegasusLite host (PM-1274/1295/1355).
    err_payloads: list[dict[str, Any]] = []
    pl_host: str | None = None
    pl_ip: str | None = None
    err_text = files.read_text(base + ".err" + suffix)
    if err_text is None:
        if not noop:
            log.warning("cannot open job error file", path=base + ".err" + suffix, job=inst.name)
    else:
        stderr_text, err_payloads = stderr_text_from_err(err_text)
        host = errfile.pegasus_lite_host(err_text)
        if host is not None:
            pl_host, pl_ip = host
        if files.store_stdout:
            inst.stderr_text = stderr_text
    # PegasusLite exit code (PM-733): from <run dir>/<error file of the .sub>[.NNN].
    sub = inst.sub
    if sub is not None and sub.stderr:
        pl_text = err_text if os.path.join(files.run_dir, sub.stderr) == base + ".err" else None
        if pl_text is None:
            pl_text = files.read_text(os.path.join(files.run_dir, sub.stderr) + suffix)
        if pl_text is not None:
            code = errfile.pegasus_lite_exitcode(pl_text)
            if code is not None:
                inst.main_exitcode = code

    invocations = [r for r in records if r.kind == "invocation"]
    clustered = [r for r in records if r.kind == "clustered"]
    multipart = [r for r in records if r.kind == "multipart"]
    tasks = [r for r in records if r.kind == "task"]
    if records:
        inst.kickstart_parsed = True

    extra = inst.composite_extra
    summaries: list[dict[str, Any]] = []
    if invocations:
        first = invocations[0].data
        if first.get("resource"):
            inst.site = first["resource"]
        if first.get("user") is not None:
            inst.user = first["user"]
        if first.get("cwd") is not None:
            inst.work_dir = first["cwd"]
        if invocations[0].fmt == "xml":
            # Legacy records: CPU attributes of the last record, no uname/ram (reference).
            last = invocations[-1].data
            for key in _CPU_KEYS:
                if key in last:
                    extra[key] = last[key]
        else:
            for key in _MACHINE_KEYS:
                if key in first:
                    extra[key] = first[key]
        if pl_host:
            for rec in invocations:
                if rec.data.get("hostname") != pl_host:
                    rec.data["hostname"] = pl_host
                    if pl_ip:
                        rec.data["hostaddr"] = pl_ip
        extra["hostname"] = pl_host or first.get("hostname")
    elif pl_host:
        extra["hostname"] = pl_host
    if clustered:
        c = clustered[0].data
        # The summary's duration text as written; its start as whole epoch seconds.
        if c.get("duration") is not None:
            inst.cluster_dur = c["duration"]
        if c.get("start") is not None:
            start = iso_to_epoch(str(c["start"]))
            inst.cluster_start = int(start) if start is not None else None

    record_payloads: list[dict[str, Any]] = []
    if records:
        # Any record at all (even cluster lines only): text from the invocation records, maybe "".
        text, found = stdout_text_from_records(records)
        record_payloads.extend(found)
        if files.store_stdout:
            inst.stdout_text = text
    elif out_text is not None and not records and files.store_stdout:
        text, found = stdout_text_without_kickstart(out_text)
        record_payloads.extend(found)
        inst.stdout_text = text

    payloads = err_payloads + record_payloads
    monitoring = [p for p in payloads if p.get("monitoring_event") != "int.metric"]
    for p in monitoring:
        if p.get("monitoring_event") == "metadata" or "metadata" in str(
            p.get("monitoring_event", "")
        ):
            for item in p.get("payload") or []:
                if isinstance(item, dict) and "name" in item:
                    extra[f"metadata.{item['name']}"] = item.get("value")

    keys = {"xwf.id": files.wf_uuid, "job.id": inst.name, "job_inst.id": inst.seq}
    if invocations:
        for n, rec in enumerate(invocations, start=1):
            _emit_invocation(out, inst, is_subdag, n, rec.data, keys)
            for p in monitoring:
                _emit_monitoring(out, inst, p, keys, ts)
            _emit_rc_meta(out, files.wf_uuid, rec.data, ts)
            _emit_host(out, rec.data, keys, ts)
            summaries.append({k: rec.data[k] for k in _INVOCATION_SUMMARY_KEYS if k in rec.data})
    elif tasks:
        _emit_cluster_tasks(out, inst, files, tasks, keys)
    else:
        _emit_invocation(out, inst, is_subdag, 1, {}, keys)
        if is_subdag or inst.name.startswith("subdax_"):
            local_name, local_ip = _local_host()
            _emit_host(
                out,
                {"hostname": local_name, "hostaddr": local_ip, "resource": inst.site},
                keys,
                ts,
            )

    metrics = integrity_metrics(records, record_payloads, err_payloads)
    error_count = 0
    for m in metrics:
        count = event_count(m)
        out.emit(
            "int.metric",
            {
                **keys,
                "type": m["type"],
                "file_type": m["file_type"],
                "count": count,
                "duration": m.get("duration") if m.get("duration") is not None else 0.0,
                "ts": float(ts),  # the line's time, a float as in the reference's JSON
            },
        )
        failed = m.get("failed") or 0
        error_count += failed
        if failed > 0:
            out.emit(
                "job_inst.tag", {**keys, "count": failed, "ts": float(ts), "name": "int.error"}
            )
    extra["int_error_count"] = error_count

    for rec in multipart:
        for key, value in rec.data.items():
            if key == "integrity_summary":
                continue
            if key in extra and isinstance(extra[key], list) and isinstance(value, list):
                extra[key] = extra[key] + value
            elif key in extra:
                if key != "location":
                    log.error("repeated multipart key", key=key, job=inst.name)
            else:
                extra[key] = value
    extra["invocations"] = summaries

    if inst.name.startswith("register_") and _int_or_none(inst.main_exitcode) == 0:
        _emit_registrations(out, inst, files, keys)
    out.records = records
    return out


def _emit_invocation(
    out: JobOutput,
    inst: JobInstance,
    is_subdag: bool,
    n: int,
    rec: dict[str, Any],
    keys: dict[str, Any],
) -> None:
    sub = inst.sub
    if rec.get("start") is not None:
        start = iso_to_epoch(str(rec["start"]))
        start_time: int | None = int(start) if start is not None else None
    elif inst.main_start is not None:
        start_time = int(inst.main_start)
    elif inst.main_end is not None:
        start_time = int(inst.main_end)
    else:
        start_time = None
    inv_start: dict[str, Any] = {**keys, "inv.id": n}
    if start_time is not None:
        inv_start["ts"] = start_time
    out.emit("inv.start", inv_start)

    attrs: dict[str, Any] = {**keys, "inv.id": n}
    transformation = rec.get("transformation")
    if transformation is None:
        if sub is not None and sub.transformation:
            transformation = sub.transformation
        elif is_subdag:
            transformation = "condor::dagman"
    if transformation is not None:
        attrs["transformation"] = transformation
    task_id = rec.get("derivation")
    if task_id is None or task_id == "null":
        task_id = sub.dax_job_id if sub is not None else None
    if task_id is not None:
        attrs["task.id"] = task_id
    if start_time is not None:
        attrs["start_time"] = start_time
    if rec.get("duration") is not None:
        # As the record has it: a YAML number, or the text of an XML attribute / cluster line.
        dur: Any = rec["duration"]
    elif inst.main_start is not None and inst.main_end is not None:
        dur = int(inst.main_end - inst.main_start)
    else:
        dur = 0
    attrs["dur"] = dur
    if rec.get("utime") is not None and rec.get("stime") is not None:
        cpu = float(rec["utime"]) + float(rec["stime"])
        attrs["remote_cpu_time"] = cpu
        dur_f = _num(dur)
        if dur_f:
            attrs["avg_cpu"] = cpu / dur_f
    if rec.get("maxrss") is not None:
        attrs["maxrss"] = rec["maxrss"]
    if _num(rec.get("duration")) is not None and start_time is not None:
        attrs["ts"] = int(start_time + (_num(rec["duration"]) or 0.0))
    elif inst.main_end is not None:
        attrs["ts"] = int(inst.main_end)
    exitcode = rec["raw"] if "raw" in rec else str(inst.main_exitcode)
    attrs["exitcode"] = exitcode
    if rec.get("name") is not None:
        attrs["executable"] = rec["name"]
    elif sub is not None and sub.executable:
        attrs["executable"] = sub.executable
    elif is_subdag:
        attrs["executable"] = _condor_dagman_path()
    else:
        attrs["executable"] = ""
    argv = rec.get("argument-vector")
    if argv:
        attrs["argv"] = argv
    elif sub is not None and sub.arguments:
        attrs["argv"] = sub.arguments
    if exitcode != "0":
        attrs["level"] = "Error"
    out.emit("inv.end", attrs)
    out.invocations.append((n, rec))


def _emit_host(out: JobOutput, rec: dict[str, Any], keys: dict[str, Any], ts: float) -> None:
    attrs: dict[str, Any] = {
        **keys,
        "hostname": rec.get("hostname") or "unknown",
        "ip": rec.get("hostaddr") or "unknown",
        "site": rec.get("resource") or "unknown",
    }
    if rec.get("total") is not None:
        attrs["total_memory"] = rec["total"]
    if (
        rec.get("system") is not None
        and rec.get("release") is not None
        and rec.get("machine") is not None
    ):
        attrs["uname"] = f"{rec['system']}-{rec['release']}-{rec['machine']}"
    attrs["ts"] = float(ts)
    out.emit("job_inst.host.info", attrs)


def _emit_rc_meta(out: JobOutput, wf_uuid: str, rec: dict[str, Any], ts: float) -> None:
    for lfn, meta in (rec.get("outputs") or {}).items():
        for key, value in meta.items():
            out.emit(
                "rc.meta",
                {"xwf.id": wf_uuid, "lfn.id": lfn, "ts": float(ts), "key": key, "value": value},
            )


def _emit_monitoring(
    out: JobOutput, inst: JobInstance, payload: dict[str, Any], keys: dict[str, Any], ts: float
) -> None:
    items = payload.get("payload")
    if not isinstance(items, list):
        items = [items] if isinstance(items, dict) else []
    name = payload.get("monitoring_event") or "monitoring.additional"
    for item in items:
        attrs: dict[str, Any] = dict(keys)
        if inst.sched_id is not None:
            attrs["sched.id"] = inst.sched_id
        attrs["monitoring_event"] = name
        attrs["ts"] = payload.get("ts", int(ts))
        if isinstance(item, dict):
            attrs.update(item)
        out.emit("task.monitoring", attrs)


def _emit_cluster_tasks(
    out: JobOutput,
    inst: JobInstance,
    files: JobFiles,
    tasks: list[KickstartRecord],
    keys: dict[str, Any],
) -> None:
    """Clustering without kickstart: task records plus the job's ``.in`` file (doc §1.6)."""
    by_id: dict[int, dict[str, Any]] = {}
    for t in tasks:
        tid = _int_or_none(t.data.get("id"))
        if tid is not None:
            by_id[tid] = dict(t.data)
    in_text = files.read_text(os.path.join(inst.submit_dir, inst.name + ".in"))
    if in_text is None:
        return
    commands: list[str] = []
    for line in in_text.splitlines():
        if line.startswith("#@"):
            parts = line[2:].split()
            if len(parts) >= 3 and _int_or_none(parts[0]) in by_id:
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
        _emit_invocation(out, inst, files.is_subdag, n, d, keys)


def _emit_registrations(
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
        out.emit(
            "rc.pfn", {"xwf.id": files.wf_uuid, "lfn.id": parts[0], "pfn": parts[1], "site": site}
        )


def composite_extras(inst: JobInstance, app: str | None, wf_label: Any) -> dict[str, Any]:
    """The attributes ``composite`` adds to ``main.end`` (doc §5.3)."""
    extra = inst.composite_extra
    out: dict[str, Any] = {"int_error_count": extra.get("int_error_count", 0)}
    if extra.get("hostname"):
        out["hostname"] = extra["hostname"]
    sub = inst.sub
    job_class = _int_or_none(sub.job_class) if sub is not None else None
    out["jobtype"] = JOB_CLASSES.get(job_class, "unknown") if job_class is not None else "unknown"
    for key in _MACHINE_KEYS:
        if key in extra:
            out[key] = extra[key]
    if sub is not None:
        for key, value in sub.requirements.items():
            out[key] = value
    for key, value in extra.items():
        if key.startswith("metadata."):
            out[key] = value
    for key, value in extra.items():
        if key in out or key in _MACHINE_KEYS or key.startswith("metadata."):
            continue
        if key in ("hostname", "int_error_count", "invocations"):
            continue
        out[key] = value
    out["invocations"] = extra.get("invocations", [])
    if app:
        out["app"] = app
    out["wf"] = wf_label
    return out
