"""Kickstart output (``<job>.out[.NNN]``) → records (spec 1.6).

A file holds YAML (5.x) or XML (4.x) invocation records, optionally with
``[cluster-task ...]`` / ``[cluster-summary ...]`` lines (pegasus-cluster,
also ``seqexec-``) and ``---------------pegasus-multipart`` blocks.
:func:`parse_kickstart` turns the text into :class:`KickstartRecord` objects;
it is pure and never raises: bad input is logged and skipped as the spec says.

Invocation records carry the *internal* key names of the spec's mapping table
(``hostname``, ``start``, ``raw``, ``outputs``, ...) with the value types the
reference ends up with (YAML ``raw`` an int, ``size`` a string, timestamps
strings; XML values strings except the ``usage`` floats).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Literal

import structlog
import yaml

from monitord.core.readers.kickstart.fast import RECORD_START, extract_invocation
from monitord.core.readers.kickstart.yaml_load import load_yaml

__all__ = [
    "KickstartRecord",
    "map_yaml_invocation",
    "parse_cluster_line",
    "parse_kickstart",
    "parse_kickstart_generic",
]

log = structlog.get_logger(__name__)

RecordKind = Literal["invocation", "task", "clustered", "multipart"]


@dataclass(slots=True)
class KickstartRecord:
    kind: RecordKind
    data: dict[str, Any]
    # "yaml" (5.x kickstart) or "xml" (legacy 4.x): composite machine attributes differ.
    fmt: str = "yaml"


INVOCATION_MARK = "- invocation:"
MULTIPART_MARK = "---------------pegasus-multipart"
_CLUSTER_PREFIXES = ("[cluster-", "[seqexec-")
_TASK_PREFIXES = ("[cluster-task", "[seqexec-task")
_SUMMARY_PREFIXES = ("[cluster-summary", "[seqexec-summary")
# YAML record continuation lines start with one of these (#2096); "" is a bare newline.
_CONTINUATION_FIRST = frozenset(" -l")  # line[:1] == "" is a blank line
_CONTINUATION_FIRST_OR_BLANK = _CONTINUATION_FIRST | {""}


def parse_kickstart(text: str) -> list[KickstartRecord]:
    """Parse the whole text of a kickstart output file. Never raises.

    YAML invocation records in pegasus-kickstart's own layout go through the
    record extractor (kickstart.fast); anything else through the generic path.
    """
    return _parse(text, fast=True)


def parse_kickstart_generic(text: str) -> list[KickstartRecord]:
    """:func:`parse_kickstart` with every YAML record loaded and then mapped.

    The reference implementation the fast extractor is tested against.
    """
    return _parse(text, fast=False)


def _parse(text: str, fast: bool) -> list[KickstartRecord]:
    try:
        if fast and text.startswith(RECORD_START):
            # The common file: one record and nothing else. If the extractor accepts
            # the whole text, every line after the first starts with a space or is
            # empty, so the generic split below would give this one record too.
            rec = extract_invocation(text)
            if rec is not None:
                return [KickstartRecord("invocation", rec)]
        xml_at = text.find("<?xml")
        inv_at = text.find(INVOCATION_MARK)
        if xml_at >= 0 and (inv_at < 0 or xml_at < inv_at):
            return _parse_xml_file(text)
        return _parse_yaml_file(text, fast)
    except Exception:  # a parser bug must not take the daemon down
        log.exception("KICKSTART-PARSE-ERROR: unexpected failure")
        return []


# --- cluster lines -------------------------------------------------------------


def parse_cluster_line(line: str) -> KickstartRecord | None:
    """``[cluster-task k=v, ...]`` → task record, ``[cluster-summary ...]`` → clustered.

    Values are strings with their surrounding quotes removed. Other
    ``[cluster-...`` lines and lines without ``]`` give ``None``.
    """
    if line.startswith(_TASK_PREFIXES):
        kind: RecordKind = "task"
    elif line.startswith(_SUMMARY_PREFIXES):
        kind = "clustered"
    else:
        return None
    close = line.rfind("]")
    if close < 0:
        log.warning("cluster line without ']' ignored", line=line[:200])
        return None
    space = line.find(" ")
    if space < 0 or space > close:
        return KickstartRecord(kind, {})
    data: dict[str, Any] = {}
    for pair in line[space + 1 : close].split(", "):
        key, eq, value = pair.partition("=")
        if not eq:
            continue
        key = key.strip()
        if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
            value = value[1:-1]
        data[key] = value
    return KickstartRecord(kind, data)


# --- YAML ----------------------------------------------------------------------


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
    if text.startswith(_CLUSTER_PREFIXES) or text.startswith(MULTIPART_MARK):
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


def _parse_yaml_file(text: str, fast: bool) -> list[KickstartRecord]:
    records: list[KickstartRecord] = []
    # Inside an open record, a "- invocation:" line is just a continuation line
    # (it starts with "-"): without cluster lines between them, consecutive
    # records load as one YAML list of which only the first entry is used
    # (observed with the reference).
    marks: list[tuple[int, int, str]] = []
    open_record = False
    for line_start, line_end in _structure_lines(text):
        line = text[line_start:line_end]
        if line.startswith(_CLUSTER_PREFIXES):
            kind, open_record = "cluster", False
        elif line.startswith(MULTIPART_MARK):
            kind, open_record = "multipart", True
        elif open_record and line[:1] in _CONTINUATION_FIRST_OR_BLANK:
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


def map_yaml_invocation(doc: dict[Any, Any]) -> dict[str, Any]:
    """Map one loaded YAML invocation to the internal record keys (spec 1.6 table)."""
    rec: dict[str, Any] = {}
    for key in _TOP_KEYS:
        if key in doc:
            rec[key] = doc[key]
    mainjob = _sub(doc, "mainjob")
    if "start" in mainjob:
        rec["start"] = mainjob["start"]
    if "duration" in mainjob:
        rec["duration"] = mainjob["duration"]
    usage = _sub(mainjob, "usage")
    for key in ("utime", "stime", "maxrss"):
        if key in usage:
            rec[key] = usage[key]
    status = _sub(mainjob, "status")
    for src, dst in (
        ("raw", "raw"),
        ("regular_exitcode", "exitcode"),
        ("signalled_signal", "signal"),
        ("signalled_name", "action"),
        ("corefile", "corefile"),
    ):
        if src in status:
            rec[dst] = status[src]
    executable = _sub(mainjob, "executable")
    if "file_name" in executable:
        rec["name"] = executable["file_name"]
    machine = _sub(doc, "machine")
    for src, dst in (
        ("ram_total", "ram"),
        ("uname_system", "system"),
        ("uname_release", "release"),
        ("uname_machine", "machine"),
        ("cpu_count", "cpu_count"),
        ("cpu_speed", "cpu_speed"),
        ("cpu_vendor", "cpu_vendor"),
        ("cpu_model", "cpu_model"),
        ("cpu_name", "cpu_model"),
    ):
        if src in machine:
            rec[dst] = machine[src]
    files = _sub(doc, "files")
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
    if "files" in doc:  # a record cut before its files section has no size totals
        rec["tot_ip_size_mb"] = round(input_bytes / _MB, 6)
        rec["tot_op_size_mb"] = round(output_bytes / _MB, 6)
    return rec


def _size(entry: dict[Any, Any]) -> int:
    size = entry.get("size", 0)
    try:
        return int(size)
    except (TypeError, ValueError):
        return 0


# --- XML (legacy 4.x) -------------------------------------------------------------

_XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'


def _parse_xml_file(text: str) -> list[KickstartRecord]:
    records: list[KickstartRecord] = []
    current: list[str] | None = None
    try:
        for line in text.split("\n"):
            if current is None:
                if "<invocation" in line:
                    current = [line]
                    if "</invocation>" in line:
                        records.append(_xml_invocation("\n".join(current)))
                        current = None
                elif line.startswith(_CLUSTER_PREFIXES):
                    record = parse_cluster_line(line)
                    if record is not None:
                        records.append(record)
            else:
                current.append(line)
                if "</invocation>" in line:
                    records.append(_xml_invocation("\n".join(current)))
                    current = None
    except ET.ParseError as exc:
        log.warning(
            "KICKSTART-PARSE-ERROR: bad XML, all records of the file dropped", error=str(exc)
        )
        return []
    return records


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _xml_invocation(body: str) -> KickstartRecord:
    root = ET.fromstring(_XML_DECL + body.lstrip())
    rec: dict[str, Any] = {}
    for key in ("hostname", "resource", "user", "hostaddr", "transformation", "derivation"):
        if key in root.attrib:
            rec[key] = root.attrib[key]
    outputs: dict[str, dict[str, Any]] = {}
    for child in root:
        tag = _local(child.tag)
        if tag == "mainjob":
            _xml_mainjob(child, rec)
        elif tag == "machine":
            _xml_machine(child, rec)
        elif tag == "cwd":
            rec["cwd"] = child.text or ""
        elif tag == "statcall":
            _xml_statcall(child, rec, outputs)
    # status / regular / signalled may sit in any job element; the last one wins
    for elem in root.iter():
        tag = _local(elem.tag)
        if tag == "status":
            if "raw" in elem.attrib:
                rec["raw"] = elem.attrib["raw"]
        elif tag == "regular":
            if "exitcode" in elem.attrib:
                rec["exitcode"] = elem.attrib["exitcode"]
        elif tag == "signalled":
            signalled = dict(elem.attrib)
            signalled["action"] = elem.text or ""
            rec["signalled"] = signalled
    if outputs:
        rec["outputs"] = outputs
    return KickstartRecord("invocation", rec, "xml")


def _xml_mainjob(job: ET.Element, rec: dict[str, Any]) -> None:
    for key in ("start", "duration"):
        if key in job.attrib:
            rec[key] = job.attrib[key]
    for elem in job.iter():
        tag = _local(elem.tag)
        if tag == "usage":
            for key in ("utime", "stime", "maxrss"):
                if key in elem.attrib:
                    rec[key] = float(elem.attrib[key])
        elif tag == "file" and "name" in elem.attrib:
            rec["name"] = elem.attrib["name"]
        elif tag == "argument-vector":
            rec["argument-vector"] = _expat_joined(elem)


_NEWLINE_SPLIT = re.compile(r"(\n)")


def _expat_joined(elem: ET.Element) -> str:
    """The reference joins the stripped character-data pieces of the element with single
    spaces, pieces as an expat parser delivers them: every newline is a piece of its own,
    so indentation between child elements becomes empty pieces (and extra spaces)."""
    pieces: list[str] = []
    for text in elem.itertext():
        pieces.extend(p.strip() for p in _NEWLINE_SPLIT.split(text) if p)
    return " ".join(pieces)


def _xml_machine(machine: ET.Element, rec: dict[str, Any]) -> None:
    for elem in machine.iter():
        tag = _local(elem.tag)
        if tag == "ram" and "total" in elem.attrib:
            rec["total"] = elem.attrib["total"]
        elif tag == "uname":
            for key in ("system", "release", "machine"):
                if key in elem.attrib:
                    rec[key] = elem.attrib[key]
        elif tag == "cpu":
            for key in ("count", "speed", "vendor"):
                if key in elem.attrib:
                    rec["cpu_" + key] = elem.attrib[key]
            rec["cpu_model"] = (elem.text or "").strip()


def _xml_statcall(
    call: ET.Element, rec: dict[str, Any], outputs: dict[str, dict[str, Any]]
) -> None:
    ident = call.attrib.get("id")
    if ident in ("stdout", "stderr"):
        # A statcall without <data> still counts: an empty text (reference behaviour).
        rec[ident] = ""
        for elem in call:
            if _local(elem.tag) == "data":
                rec[ident] = elem.text or ""
    elif ident == "final" and "lfn" in call.attrib:
        checksum: dict[str, str] = {}
        meta: dict[str, Any] = {}
        for elem in call:
            tag = _local(elem.tag)
            if tag == "checksum":
                checksum = {f"checksum.{k}": v for k, v in elem.attrib.items()}
            elif tag == "statinfo":
                for key in ("lfn", "size", "ctime", "user"):
                    if key in elem.attrib:
                        meta[key] = elem.attrib[key]
        meta.update(checksum)
        outputs[call.attrib["lfn"]] = meta
