"""Integrity metrics of one job instance (spec 5.3 "Integrity metrics per job").

Three sources, merged per (type, file_type) by adding counts and durations:
kickstart output files with a checksum timing (``compute``/``output``),
``integrity_summary`` multipart records (``check``/``input``) and
``int.metric`` monitoring payloads (type and file type as stated).
"""

from __future__ import annotations

from typing import Any

import structlog

from monitord.readers.kickstart import KickstartRecord

__all__ = ["integrity_metrics"]

log = structlog.get_logger(__name__)


def _metric(type_: Any, file_type: Any, count: Any, succeeded: Any, failed: Any, duration: Any) -> dict[str, Any]:
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


def integrity_metrics(
    records: list[KickstartRecord], payloads: list[dict[str, Any]] = ()  # type: ignore[assignment]
) -> list[dict[str, Any]]:
    """Metrics in first-seen order; each is ``{type, file_type, count, succeeded, failed, duration}``.

    ``payloads`` are the monitoring payloads of the job (kickstart stdout/stderr
    and ``.err``); those that are not ``int.metric`` are ignored here.
    Durations keep the type of their source (a payload's ``"0.141"`` stays a
    string) until two metrics are merged.
    """
    found: list[dict[str, Any]] = []
    files = 0
    timing = 0.0
    for record in records:
        if record.kind == "invocation":
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
    for payload in payloads:
        if payload.get("monitoring_event") != "int.metric":
            continue
        items = payload.get("payload")
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            found.append(
                _metric(
                    item.get("event"),
                    item.get("file_type"),
                    item.get("count", 0),
                    item.get("succeeded", 0),
                    item.get("failed", 0),
                    item.get("duration", 0),
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
