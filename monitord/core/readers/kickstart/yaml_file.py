"""YAML kickstart files (5.x): split into records, each extracted fast or loaded and mapped.

A file is cut at its structure lines (``- invocation:``, cluster lines, multipart
marks); each invocation record then goes through the record extractor
(:mod:`.fast`) and, where that declines, through :func:`.yaml_load.load_yaml`
(its own loader, then PyYAML) and :func:`map_yaml_invocation`.
"""

from __future__ import annotations

import re
from typing import Any

import structlog
import yaml

from monitord.core.readers.kickstart.cluster import parse_cluster_line
from monitord.core.readers.kickstart.fast import extract_invocation
from monitord.core.readers.kickstart.records import (
    CLUSTER_PREFIXES,
    CONTINUATION_FIRST_OR_BLANK,
    INVOCATION_MARK,
    MULTIPART_MARK,
    KickstartRecord,
)
from monitord.core.readers.kickstart.yaml_load import load_yaml

log = structlog.get_logger(__name__)


# Line prefixes that end a YAML record (the record start is found by substring).
_LINE_MARKS = ("\n[cluster-", "\n[seqexec-", "\n" + MULTIPART_MARK)
# A body line that is not a continuation line (#2096: batch epilogues and the like).
_FOREIGN_LINE = re.compile(r"\n[^ \-l\n]")


def _structure_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line that starts or ends a record, in file order."""
    starts: set[int] = set()
    pos = text.find(INVOCATION_MARK)
    while pos >= 0:
        starts.add(text.rfind("\n", 0, pos) + 1)
        pos = text.find(INVOCATION_MARK, pos + 1)
    for mark in _LINE_MARKS:
        pos = text.find(mark)
        while pos >= 0:
            starts.add(pos + 1)
            pos = text.find(mark, pos + 1)
    if text.startswith(CLUSTER_PREFIXES) or text.startswith(MULTIPART_MARK):
        starts.add(0)
    out = []
    for start in sorted(starts):
        end = text.find("\n", start)
        out.append((start, len(text) if end < 0 else end))
    return out


def _record_body(text: str, start: int, end: int) -> str:
    """``text[start:end]`` without the lines that are not YAML continuation lines."""
    if start >= end:
        return ""
    if text[start] in " -l\n" and not _FOREIGN_LINE.search(text, start, end):
        return text[start:end]
    lines = text[start:end].split("\n")
    pieces = [line + "\n" for line in lines[:-1]]
    pieces.append(lines[-1])
    return "".join(p for p in pieces if p and p[0] in " -l\n")


def parse_yaml_file(text: str, fast: bool) -> list[KickstartRecord]:
    records: list[KickstartRecord] = []
    # Inside an open record, a "- invocation:" line is just a continuation line
    # (it starts with "-"): without cluster lines between them, consecutive
    # records load as one YAML list of which only the first entry is used
    # (observed with the reference).
    marks: list[tuple[int, int, str]] = []
    open_record = False
    for line_start, line_end in _structure_lines(text):
        line = text[line_start:line_end]
        if line.startswith(CLUSTER_PREFIXES):
            kind, open_record = "cluster", False
        elif line.startswith(MULTIPART_MARK):
            kind, open_record = "multipart", True
        elif open_record and line[:1] in CONTINUATION_FIRST_OR_BLANK:
            continue
        else:
            kind, open_record = "invocation", True
        marks.append((line_start, line_end, kind))
    for index, (line_start, line_end, kind) in enumerate(marks):
        line = text[line_start:line_end]
        end = marks[index + 1][0] if index + 1 < len(marks) else len(text)
        body_start = line_end + 1  # after the marker line and its newline
        if kind == "invocation":
            body = line + "\n" + _record_body(text, body_start, end) if body_start <= end else line
            records.append(_yaml_invocation(body, fast))
        elif kind == "cluster":
            record = parse_cluster_line(line)
            if record is not None:
                records.append(record)
        elif body_start <= end:
            records.extend(_yaml_multipart(_record_body(text, body_start, end)))
    return records


def _yaml_invocation(body: str, fast: bool) -> KickstartRecord:
    if fast:
        rec = extract_invocation(body)
        if rec is not None:
            return KickstartRecord("invocation", rec)
    try:
        loaded = load_yaml(body)
    except yaml.YAMLError as exc:
        log.warning("KICKSTART-PARSE-ERROR: bad YAML in kickstart record", error=str(exc))
        return KickstartRecord("invocation", {})
    doc = loaded[0] if isinstance(loaded, list) and loaded else loaded
    if not isinstance(doc, dict):
        log.warning("KICKSTART-PARSE-ERROR: kickstart record is not a mapping")
        return KickstartRecord("invocation", {})
    return KickstartRecord("invocation", map_yaml_invocation(doc))


def _yaml_multipart(body: str) -> list[KickstartRecord]:
    try:
        loaded = load_yaml(body)
    except yaml.YAMLError as exc:
        log.error("malformed pegasus-multipart block ignored", error=str(exc))
        return []
    if loaded is None:
        log.error("malformed pegasus-multipart block ignored (empty)")
        return []
    entries = loaded if isinstance(loaded, list) else [loaded]
    out: list[KickstartRecord] = []
    for entry in entries:
        if isinstance(entry, dict):
            out.append(KickstartRecord("multipart", entry))
        else:
            log.error("pegasus-multipart entry is not a mapping, ignored", entry=repr(entry)[:200])
    return out


_TOP_KEYS = ("hostname", "resource", "user", "hostaddr", "transformation", "derivation", "cwd")
_EXCLUDED_FILES = frozenset(("stdin", "stdout", "stderr", "metadata"))
_MB = 1048576


def _sub(mapping: Any, key: str) -> dict[Any, Any]:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, dict) else {}


# (source key, record key) of the mapped sections, in the record's order
_STATUS_KEYS = (
    ("raw", "raw"),
    ("regular_exitcode", "exitcode"),
    ("signalled_signal", "signal"),
    ("signalled_name", "action"),
    ("corefile", "corefile"),
)
_MACHINE_KEYS = (
    ("ram_total", "ram"),
    ("uname_system", "system"),
    ("uname_release", "release"),
    ("uname_machine", "machine"),
    ("cpu_count", "cpu_count"),
    ("cpu_speed", "cpu_speed"),
    ("cpu_vendor", "cpu_vendor"),
    ("cpu_model", "cpu_model"),
    ("cpu_name", "cpu_model"),
)


def map_yaml_invocation(doc: dict[Any, Any]) -> dict[str, Any]:
    """Map one loaded YAML invocation to the internal record keys (spec 1.6 table)."""
    rec: dict[str, Any] = {}
    for key in _TOP_KEYS:
        if key in doc:
            rec[key] = doc[key]
    _map_mainjob(_sub(doc, "mainjob"), rec)
    machine = _sub(doc, "machine")
    for src, dst in _MACHINE_KEYS:
        if src in machine:
            rec[dst] = machine[src]
    # a record cut before its files section has no size totals
    _map_files(_sub(doc, "files"), rec, totals="files" in doc)
    return rec


def _map_mainjob(mainjob: dict[Any, Any], rec: dict[str, Any]) -> None:
    """Start, duration, usage, status and executable of the main job."""
    if "start" in mainjob:
        rec["start"] = mainjob["start"]
    if "duration" in mainjob:
        rec["duration"] = mainjob["duration"]
    usage = _sub(mainjob, "usage")
    for key in ("utime", "stime", "maxrss"):
        if key in usage:
            rec[key] = usage[key]
    status = _sub(mainjob, "status")
    for src, dst in _STATUS_KEYS:
        if src in status:
            rec[dst] = status[src]
    executable = _sub(mainjob, "executable")
    if "file_name" in executable:
        rec["name"] = executable["file_name"]


def _map_files(files: dict[Any, Any], rec: dict[str, Any], *, totals: bool) -> None:
    """Captured stdout/stderr, the outputs' metadata and the input/output size totals."""
    for stream in ("stdout", "stderr"):
        entry = _sub(files, stream)
        if "data" in entry:
            rec[stream] = entry["data"]
    outputs: dict[str, dict[str, Any]] = {}
    input_bytes = 0
    output_bytes = 0
    for lfn, entry in files.items():
        if lfn in _EXCLUDED_FILES or not isinstance(entry, dict):
            continue
        is_output = entry.get("output")
        if is_output is None and "output" not in entry:
            input_bytes += _size(entry)
        elif is_output:
            output_bytes += _size(entry)
            meta: dict[str, Any] = {}
            for key in ("user", "size", "ctime"):
                if key in entry:
                    meta[key] = str(entry[key]) if key == "size" else entry[key]
            if "sha256" in entry:
                meta["checksum.type"] = "sha256"
                meta["checksum.value"] = entry["sha256"]
                if "checksum_timing" in entry:
                    meta["checksum.timing"] = str(entry["checksum_timing"])
            outputs[str(lfn)] = meta
    if outputs:
        rec["outputs"] = outputs
    if totals:
        rec["tot_ip_size_mb"] = round(input_bytes / _MB, 6)
        rec["tot_op_size_mb"] = round(output_bytes / _MB, 6)


def _size(entry: dict[Any, Any]) -> int:
    size = entry.get("size", 0)
    try:
        return int(size)
    except (TypeError, ValueError):
        return 0
