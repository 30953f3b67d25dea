"""Job output extraction: a finished job's .out/.err/.in files -> invocation, host and metric events.

Runs when the main job is known to be over (doc §1.6-1.8, §5.2-5.5): at
JOB_SUCCESS/FAILURE for jobs without a POST script, else at the POST script's
end.  A pure function of the instance and a file reader (:class:`JobFiles`): it
sets what the files say on the instance and returns the events to send
(:class:`JobOutput`); it never calls back into the workflow machine, which sends
them.  The event builders are in :mod:`monitord.core.jobout_events`.
"""

from __future__ import annotations

import socket
from functools import lru_cache
from typing import Any

import structlog

from monitord.core.events import IntMetric, JobInstTag
from monitord.core.jobinstance import JobInstance, shared
from monitord.core.jobout_events import (
    CPU_KEYS,
    MACHINE_KEYS,
    JobFiles,
    JobOutput,
    emit_cluster_tasks,
    emit_host,
    emit_invocation,
    emit_monitoring,
    emit_rc_meta,
    emit_registrations,
    int_or_none,
    job_start_time,
)
from monitord.core.jobpaths import join as _join
from monitord.core.jobreader import ErrFile, JobReader, OutFile, ParsingReader
from monitord.core.jobtext import stdout_text_without_kickstart
from monitord.core.readers.integrity import event_count, integrity_metrics
from monitord.core.readers.kickstart import KickstartRecord
from monitord.core.timeparse import iso_to_epoch

log = structlog.get_logger(__name__)


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


@lru_cache(maxsize=1)
def _local_host() -> tuple[str, str]:
    name = socket.getfqdn()
    try:
        ip = socket.gethostbyname(name)
    except OSError:
        ip = "unknown"
    return name, ip


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
    suffix = ""
    if files.rotated:
        inst.rotated = True
        suffix = f".{inst.out_num or 0:03d}"
    base = _join(inst.submit_dir, inst.name)
    noop = inst.name.startswith("noop_")
    reader = files.reader or ParsingReader(files.read_text)
    found = _read_out(inst, files, reader, base + ".out" + suffix, noop)
    err, err_payloads, pl_host, pl_ip = _read_err(inst, files, reader, base + ".err" + suffix, noop)
    _pegasus_lite_exitcode(inst, files, reader, base, suffix, err)

    records = found.records if found is not None else []
    invocations, clustered, tasks, multipart = _by_kind(records)
    if records:
        inst.kickstart_parsed = True
    _take_invocations(inst, invocations, pl_host, pl_ip)
    if clustered:
        _take_cluster_summary(inst, clustered[0].data)
    record_payloads = _stdout_text(inst, files, found)
    monitoring = (
        _monitoring_payloads(inst, err_payloads + record_payloads)
        if err_payloads or record_payloads
        else []
    )

    keys: dict[str, Any] = {
        "xwf_id": files.wf_uuid,
        "job_id": inst.name,
        "job_inst_id": inst.seq,
        "fixed": files.fixed,
    }
    starts = found.starts if found is not None else ()
    summaries = _emit_invocations(
        out, inst, files, (invocations, starts), tasks, monitoring, keys, ts
    )
    extra = inst.composite_extra
    extra["int_error_count"] = _emit_integrity(
        out, keys, integrity_metrics(records, record_payloads, err_payloads), ts
    )
    _merge_multipart(inst, multipart)
    extra["invocations"] = summaries

    if inst.name.startswith("register_") and int_or_none(inst.main_exitcode) == 0:
        emit_registrations(out, inst, files, keys)
    out.records = records
    return out


_KINDS = ("invocation", "clustered", "task", "multipart")


def _by_kind(records: list[KickstartRecord]) -> list[list[KickstartRecord]]:
    """The records of each of :data:`_KINDS`, in order; one pass (usually one invocation)."""
    if len(records) == 1 and records[0].kind == "invocation":
        return [records[:], [], [], []]
    found: dict[str, list[KickstartRecord]] = {kind: [] for kind in _KINDS}
    for rec in records:
        if rec.kind in found:
            found[rec.kind].append(rec)
    return list(found.values())


def _read_out(
    inst: JobInstance, files: JobFiles, reader: JobReader, path: str, noop: bool
) -> OutFile | None:
    """The .out file parsed (None for a DAG node of its own, or when it cannot be read)."""
    if files.is_subdag:
        return None
    found = reader.out_file(path)
    if found is None and not noop:
        log.error("cannot open job output", path=path, job=inst.name)
    return found


def _read_err(
    inst: JobInstance, files: JobFiles, reader: JobReader, path: str, noop: bool
) -> tuple[ErrFile | None, list[dict[str, Any]], str | None, str | None]:
    """The .err file: its text, payloads, PegasusLite host and IP (PM-1274/1295/1355);
    sets the job's stderr text."""
    err = reader.err_file(path)
    if err is None:
        if not noop:
            log.warning("cannot open job error file", path=path, job=inst.name)
        return None, [], None, None
    host = err.host
    pl_host, pl_ip = host if host is not None else (None, None)
    if files.store_stdout:
        inst.stderr_text = err.stderr_text
    return err, err.payloads, pl_host, pl_ip


def _pegasus_lite_exitcode(
    inst: JobInstance,
    files: JobFiles,
    reader: JobReader,
    base: str,
    suffix: str,
    err: ErrFile | None,
) -> None:
    """PegasusLite exit code (PM-733): from <run dir>/<error file of the .sub>[.NNN]."""
    sub = inst.sub
    if sub is None or not sub.stderr:
        return
    path = _join(files.run_dir, sub.stderr)
    if err is not None and path == base + ".err":
        code = err.exitcode  # the .err file just parsed
    else:
        code = reader.exitcode(path + suffix)[1]
    if code is not None:
        inst.main_exitcode = code


def _take_invocations(
    inst: JobInstance, invocations: list[KickstartRecord], pl_host: str | None, pl_ip: str | None
) -> None:
    """Site, user, work dir and host attributes from the invocation records; the
    PegasusLite host replaces the records' own."""
    extra = inst.composite_extra
    if not invocations:
        if pl_host:
            extra["hostname"] = pl_host
        return
    first = invocations[0].data
    if first.get("resource"):
        inst.site = shared(first["resource"])
    if first.get("user") is not None:
        inst.user = shared(first["user"])
    if first.get("cwd") is not None:
        # not shared: an HTCondor work directory is one job's own (.../dir_<pid>), and its
        # record numbers the part jobs have in common; interning each one grew the
        # interpreter's table of interned texts with the job count (bench/README.md,
        # "Issue 30, fourteenth session: memory30l")
        inst.work_dir = first["cwd"]
    if invocations[0].fmt == "xml":
        # Legacy records: CPU attributes of the last record, no uname/ram (reference).
        last = invocations[-1].data
        for key in CPU_KEYS:
            if key in last:
                extra[key] = last[key]
    else:
        for key in MACHINE_KEYS:
            if key in first:
                extra[key] = first[key]
    if pl_host:
        for rec in invocations:
            if rec.data.get("hostname") != pl_host:
                rec.data["hostname"] = pl_host
                if pl_ip:
                    rec.data["hostaddr"] = pl_ip
    extra["hostname"] = pl_host or first.get("hostname")


def _take_cluster_summary(inst: JobInstance, c: dict[str, Any]) -> None:
    """The summary's duration text as written; its start as whole epoch seconds."""
    if c.get("duration") is not None:
        inst.cluster_dur = c["duration"]
    if c.get("start") is not None:
        start = iso_to_epoch(str(c["start"]))
        inst.cluster_start = int(start) if start is not None else None


def _stdout_text(inst: JobInstance, files: JobFiles, found: OutFile | None) -> list[dict[str, Any]]:
    """Sets the job's stdout text; returns the payloads found in it.  With records (even
    cluster lines only), the text is the invocation records' (maybe ""); without, the whole
    file's, its payloads only when the text is kept (as the reference)."""
    if found is None or not (found.records or files.store_stdout):
        return []
    if files.store_stdout:
        inst.stdout_text = found.stdout_text
    return found.payloads


def _monitoring_payloads(inst: JobInstance, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The payloads that are not integrity metrics; their metadata items go to the composite."""
    extra = inst.composite_extra
    monitoring = [p for p in payloads if p.get("monitoring_event") != "int.metric"]
    for p in monitoring:
        if p.get("monitoring_event") == "metadata" or "metadata" in str(
            p.get("monitoring_event", "")
        ):
            for item in p.get("payload") or []:
                if isinstance(item, dict) and "name" in item:
                    extra[f"metadata.{item['name']}"] = item.get("value")
    return monitoring


def _emit_invocations(
    out: JobOutput,
    inst: JobInstance,
    files: JobFiles,
    invocations: tuple[list[KickstartRecord], tuple[int | None, ...]],
    tasks: list[KickstartRecord],
    monitoring: list[dict[str, Any]],
    keys: dict[str, Any],
    ts: float,
) -> list[dict[str, Any]]:
    """Each invocation's events (or the cluster tasks', or one made up); their summaries.
    ``invocations``: the records and their starts (:attr:`OutFile.starts`)."""
    summaries: list[dict[str, Any]] = []
    records, starts = invocations
    if records:
        for n, rec in enumerate(records, start=1):
            data = rec.data
            start = starts[n - 1] if data.get("start") is not None else job_start_time(inst)
            emit_invocation(out, inst, files.is_subdag, n, data, keys, start)
            for p in monitoring:
                emit_monitoring(out, inst, p, keys, ts)
            emit_rc_meta(out, files, data, ts)
            emit_host(out, data, keys, ts)
            summaries.append({k: data[k] for k in _INVOCATION_SUMMARY_KEYS if k in data})
    elif tasks:
        emit_cluster_tasks(out, inst, files, tasks, keys)
    else:
        emit_invocation(out, inst, files.is_subdag, 1, {}, keys, job_start_time(inst))
        if files.is_subdag or inst.name.startswith("subdax_"):
            local_name, local_ip = _local_host()
            emit_host(
                out,
                {"hostname": local_name, "hostaddr": local_ip, "resource": inst.site},
                keys,
                ts,
            )
    return summaries


def _emit_integrity(
    out: JobOutput, keys: dict[str, Any], metrics: list[dict[str, Any]], ts: float
) -> int:
    """An ``int.metric`` per integrity metric, a tag per failed one; the failures' count."""
    error_count = 0
    for m in metrics:
        count = event_count(m)
        out.emit(
            IntMetric(
                **keys,
                type=m["type"],
                file_type=m["file_type"],
                count=count,
                duration=m["duration"] if m.get("duration") is not None else 0.0,
                ts=float(ts),  # the line's time, a float as in the reference's JSON
            )
        )
        failed = m.get("failed") or 0
        error_count += failed
        if failed > 0:
            out.emit(JobInstTag(**keys, count=failed, ts=float(ts), name_="int.error"))
    return error_count


def _merge_multipart(inst: JobInstance, multipart: list[KickstartRecord]) -> None:
    """Multipart records' keys into the composite extras (lists add up)."""
    extra = inst.composite_extra
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
