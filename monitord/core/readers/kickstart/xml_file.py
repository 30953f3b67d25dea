"""Legacy XML kickstart files (4.x): one ``<invocation>`` document per record."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import structlog

from monitord.core.readers.kickstart.cluster import parse_cluster_line
from monitord.core.readers.kickstart.records import CLUSTER_PREFIXES, KickstartRecord

log = structlog.get_logger(__name__)


_XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'


def parse_xml_file(text: str) -> list[KickstartRecord]:
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
                elif line.startswith(CLUSTER_PREFIXES):
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
