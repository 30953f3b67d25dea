"""The record a kickstart output file yields, and the marks that delimit records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from monitord.core.readers.pickled import by_fields

RecordKind = Literal["invocation", "task", "clustered", "multipart"]


@by_fields
@dataclass(slots=True)
class KickstartRecord:
    kind: RecordKind
    data: dict[str, Any]
    # "yaml" (5.x kickstart) or "xml" (legacy 4.x): composite machine attributes differ.
    fmt: str = "yaml"


INVOCATION_MARK = "- invocation:"
MULTIPART_MARK = "---------------pegasus-multipart"
CLUSTER_PREFIXES = ("[cluster-", "[seqexec-")
TASK_PREFIXES = ("[cluster-task", "[seqexec-task")
SUMMARY_PREFIXES = ("[cluster-summary", "[seqexec-summary")
# YAML record continuation lines start with one of these (#2096); "" is a bare newline.
CONTINUATION_FIRST = frozenset(" -l")  # line[:1] == "" is a blank line
CONTINUATION_FIRST_OR_BLANK = CONTINUATION_FIRST | {""}
