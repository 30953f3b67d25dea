"""Integrity metrics of one job instance (spec 5.3 "Integrity metrics per job").

Three sources, merged per (type, file_type) by adding counts and durations:
kickstart output files with a checksum timing (``compute``/``output``),
``integrity_summary`` multipart records (``check``/``input``) and
``int.metric`` monitoring payloads (type and file type as stated).
"""

from __future__ import annotations

from typing import Any

import structlog

from monitord.core.readers.kickstart import KickstartRecord

__all__ = ["event_count", "integrity_metrics"]

log = structlog.get_logger(__name__)


def _metric(
    type_: Any, file_type: Any, count: Any, succeeded: Any, failed: Any, duration: Any
) -> dict[str, Any]:
    return {
        "type": type_,
        "file_type": file_type,
        "count": count,
        "succeeded": succeeded,
        "failed": failed,
        "duration": duration,
    }


def _add(a: Any, b: Any) -> Any:
    try:
        return a + b
    except TypeError:
        return float(a) + float(b)


def _payload_metrics(payloads: list[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    for payload in payloads:
        if payload.get("monitoring_event") != "int.metric":
            continue
        items = payload.get("payload")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                into.append(
                    _metric(
                        item.get("event"),
                        item.get("file_type"),
                        item.get("count", 0),
                        item.get("succeeded", 0),
                        item.get("failed", 0),
                        item.get("duration", 0),
                    )
                )


def integrity_metrics(
    records: list[KickstartRecord],
    record_payloads: list[dict[str, Any]] | None = None,
    err_payloads: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Metrics ``{type, file_type, count, succeeded, failed, duration}``, merged per key.

    Source order as observed with the reference: ``.err`` payloads first, then
    the kickstart output files, then the payloads of the kickstart stdout and
    stderr (``record_payloads``, as returned by the job text builder), then
    ``integrity_summary`` multipart records. Merging adds ``count``,
    ``succeeded``, ``failed`` and ``duration`` with Python ``+``: a payload's
    string duration stays a string and two of them concatenate (``"0.25" +
    "0.5"`` = ``"0.250.5"``, as the reference stores it); a string plus a
    number, which crashes the reference, is added as floats here.
    """
    found: list[dict[str, Any]] = []
    _payload_metrics(err_payloads or [], found)
    files = 0
    timing = 0.0
    for record in records:
        if record.kind != "invocation":
            continue
        for meta in record.data.get("outputs", {}).values():
            if "checksum.timing" in meta:
                try:
                    timing += float(meta["checksum.timing"])
                except (TypeError, ValueError):
                    log.warning("bad checksum timing ignored", value=meta["checksum.timing"])
                    continue
                files += 1
    if files:
        found.append(_metric("compute", "output", files, 0, 0, timing))
    _payload_metrics(record_payloads or [], found)
    for record in records:
        if record.kind == "multipart" and "integrity_summary" in record.data:
            summary = record.data["integrity_summary"]
            if isinstance(summary, dict):
                found.append(
                    _metric(
                        "check",
                        "input",
                        0,
                        summary.get("succeeded", 0),
                        summary.get("failed", 0),
                        summary.get("duration", 0),
                    )
                )
    merged: dict[tuple[Any, Any], dict[str, Any]] = {}
    for metric in found:
        key = (metric["type"], metric["file_type"])
        if key not in merged:
            merged[key] = metric
            continue
        into = merged[key]
        for field in ("count", "succeeded", "failed", "duration"):
            into[field] = _add(into[field], metric[field])
    return list(merged.values())


def event_count(metric: dict[str, Any]) -> Any:
    """The ``count`` an ``int.metric`` event carries: count, or succeeded + failed when 0."""
    count = metric.get("count") or 0
    if count:
        return count
    return _add(metric.get("succeeded") or 0, metric.get("failed") or 0)
