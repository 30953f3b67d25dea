"""Test helper: reference ``events.bp`` lines → typed Stampede events.

The reference's event stream is the best available model of what our producer
sends, so tests replay it into sinks.  BP flattens every value to text; this
module undoes that the way the producer types them (spec 5.3): ints for
sequence numbers and status flags, floats for durations, epoch ``ts``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from monitord.core.events import PREFIX, StampedeEvent, make_event
from monitord.core.readers.bp import parse_bp_line

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"
SAMPLES = (
    "process_wf_success",
    "process_wf_failure",
    "hierarchical_wf_success",
    "hierarchical_wf_failure",
)

INT_KEYS = frozenset(
    {
        "job_inst.id",
        "js.id",
        "inv.id",
        "status",
        "restart_count",
        "exitcode",
        "count",
        "maxrss",
        "local.dur",
        "int_error_count",
    }
)
FLOAT_KEYS = frozenset(
    {"dur", "start_time", "remote_cpu_time", "avg_cpu", "duration", "cluster.start", "cluster.dur"}
)
_INT = re.compile(r"-?\d+\Z")


def bp_ts_to_epoch(value: str) -> float:
    """``2023-03-04T06:23:33.000000Z`` → epoch seconds."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _typed(key: str, value: str) -> Any:
    if value == "None":
        return None
    if key in INT_KEYS and _INT.match(value):
        return int(value)
    if key in FLOAT_KEYS:
        try:
            return float(value)
        except ValueError:
            return value
    return value


def bp_record_to_event(record: dict[str, str]) -> StampedeEvent:
    name = record["event"]
    if name.startswith(PREFIX):
        name = name[len(PREFIX) :]
    attrs: dict[str, Any] = {}
    for key, value in record.items():
        if key == "event":
            continue
        if key == "level":
            if value == "Error":
                attrs["level"] = value
            continue
        if key == "ts":
            attrs["ts"] = bp_ts_to_epoch(value)
            continue
        attrs[key] = _typed(key, value)
    return make_event(name, attrs)


def bp_lines_to_events(lines: Iterable[str]) -> Iterator[StampedeEvent]:
    for line in lines:
        if line.strip():
            yield bp_record_to_event(parse_bp_line(line))


def load_bp_events(path: Path) -> list[StampedeEvent]:
    with open(path, encoding="utf-8") as fh:
        return list(bp_lines_to_events(fh))
