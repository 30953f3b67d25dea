"""``[cluster-task ...]`` / ``[cluster-summary ...]`` lines of pegasus-cluster (and ``seqexec-``)."""

from __future__ import annotations

from typing import Any

import structlog

from monitord.core.readers.kickstart.records import (
    SUMMARY_PREFIXES,
    TASK_PREFIXES,
    KickstartRecord,
    RecordKind,
)

log = structlog.get_logger(__name__)


def parse_cluster_line(line: str) -> KickstartRecord | None:
    """``[cluster-task k=v, ...]`` → task record, ``[cluster-summary ...]`` → clustered.

    Values are strings with their surrounding quotes removed. Other
    ``[cluster-...`` lines and lines without ``]`` give ``None``.
    """
    if line.startswith(TASK_PREFIXES):
        kind: RecordKind = "task"
    elif line.startswith(SUMMARY_PREFIXES):
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
