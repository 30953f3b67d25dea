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

The package: :mod:`.records` (the record type), :mod:`.fast` (the record
extractor for pegasus-kickstart's own layout), :mod:`.yaml_load` (a fast YAML
loader with PyYAML behind it), :mod:`.yaml_file` and :mod:`.xml_file` (whole
files), :mod:`.cluster` (cluster lines). :func:`parse_kickstart` is the entry:
it shows the order in which they are tried.
"""

from __future__ import annotations

import structlog

from monitord.core.readers.kickstart.cluster import parse_cluster_line
from monitord.core.readers.kickstart.fast import RECORD_START, extract_invocation, warmed_up
from monitord.core.readers.kickstart.records import INVOCATION_MARK, KickstartRecord
from monitord.core.readers.kickstart.xml_file import parse_xml_file
from monitord.core.readers.kickstart.yaml_file import map_yaml_invocation, parse_yaml_file

__all__ = [
    "KickstartRecord",
    "map_yaml_invocation",
    "parse_cluster_line",
    "parse_kickstart",
    "parse_kickstart_extracting",
    "parse_kickstart_generic",
]

log = structlog.get_logger(__name__)


def parse_kickstart(text: str) -> list[KickstartRecord]:
    """Parse the whole text of a kickstart output file. Never raises.

    Tried in order, each step only when the one before declines:

    1. the whole file is one YAML record in pegasus-kickstart's own layout:
       the record extractor (:func:`.fast.extract_invocation`), no YAML tree built;
    2. legacy XML records (an ``<?xml`` before any ``- invocation:``): :mod:`.xml_file`;
    3. YAML records cut at their structure lines (:func:`.yaml_file.parse_yaml_file`),
       each one again extractor first, then the fast loader, then PyYAML
       (:func:`.yaml_load.load_yaml`), then mapped.

    A process's first records (:data:`.fast.WARM_UP`) skip the extractor, whose patterns
    are then not compiled at all in a small replay: the paths give the same records.
    """
    return _parse(text, fast=warmed_up())


def parse_kickstart_extracting(text: str) -> list[KickstartRecord]:
    """:func:`parse_kickstart` with the extractor from the first record (no warm-up).

    What the tests compare with :func:`parse_kickstart_generic`.
    """
    return _parse(text, fast=True)


def parse_kickstart_generic(text: str) -> list[KickstartRecord]:
    """:func:`parse_kickstart` without the record extractor: every YAML record loaded, then mapped.

    The reference implementation the fast extractor is tested against.
    """
    return _parse(text, fast=False)


def _parse(text: str, fast: bool) -> list[KickstartRecord]:
    try:
        if fast and text.startswith(RECORD_START):
            # 1. The common file: one record and nothing else. If the extractor accepts
            # the whole text, every line after the first starts with a space or is
            # empty, so the split of step 3 would give this one record too.
            rec = extract_invocation(text)
            if rec is not None:
                return [KickstartRecord("invocation", rec)]
        # 2. Legacy XML.
        xml_at = text.find("<?xml")
        inv_at = text.find(INVOCATION_MARK)
        if xml_at >= 0 and (inv_at < 0 or xml_at < inv_at):
            return parse_xml_file(text)
        # 3. YAML, record by record.
        return parse_yaml_file(text, fast)
    except Exception:  # a parser bug must not take the daemon down
        log.exception("KICKSTART-PARSE-ERROR: unexpected failure")
        return []
