"""A finished span as plain data, its deterministic ids, and its canonical JSON.

No OpenTelemetry package here: the model (:mod:`sinks.otlp.model`) builds these, the encoder
(:mod:`sinks.otlp.encode`) turns them into OTLP protobuf, and the golden traces of the tests
are the canonical JSON (:func:`canonical`), so a trace can be compared without a receiver.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

AttrValue = str | int | float | bool

# Span kinds and status codes by their OTLP names (the encoder maps them to the enums).
SERVER = "SERVER"
INTERNAL = "INTERNAL"
UNSET = "UNSET"
ERROR = "ERROR"


def _digest(*parts: object) -> bytes:
    """sha256 of the parts, each length-prefixed so ("a", "bc") and ("ab", "c") differ."""
    h = hashlib.sha256()
    for part in parts:
        data = str(part).encode("utf-8")
        h.update(len(data).to_bytes(4, "big"))
        h.update(data)
    return h.digest()


def trace_id(root_uuid: str, restart_count: int) -> bytes:
    """One trace per run of a root workflow (its DAGMan start: ``restart_count``)."""
    return _digest("trace", root_uuid, restart_count)[:16]


def workflow_span_id(wf_uuid: str, restart_count: int) -> bytes:
    return _digest("workflow", wf_uuid, restart_count)[:8]


def job_span_id(wf_uuid: str, job_id: str, submit_seq: int) -> bytes:
    """A job instance: (workflow, node name, job_submit_seq) is unique in Stampede too."""
    return _digest("job", wf_uuid, job_id, submit_seq)[:8]


def invocation_span_id(wf_uuid: str, job_id: str, submit_seq: int, inv_id: int) -> bytes:
    return _digest("invocation", wf_uuid, job_id, submit_seq, inv_id)[:8]


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)


@dataclass(frozen=True)
class SpanLink:
    trace_id: bytes
    span_id: bytes
    attributes: dict[str, AttrValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str = UNSET
    status_message: str = ""
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    links: tuple[SpanLink, ...] = ()


def canonical(span: Span) -> dict[str, Any]:
    """The span as JSON-able data with sorted attributes: what golden traces hold."""
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex() if span.parent_span_id else None,
        "name": span.name,
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status": {"code": span.status, "message": span.status_message},
        "attributes": dict(sorted(span.attributes.items())),
        "events": [
            {"name": e.name, "time_ns": e.time_ns, "attributes": dict(sorted(e.attributes.items()))}
            for e in span.events
        ],
        "links": [
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "attributes": dict(sorted(link.attributes.items())),
            }
            for link in span.links
        ],
    }


def from_canonical(data: dict[str, Any]) -> Span:
    """The inverse of :func:`canonical` (a kept outbox, a receiver's store)."""
    return Span(
        trace_id=bytes.fromhex(data["trace_id"]),
        span_id=bytes.fromhex(data["span_id"]),
        parent_span_id=bytes.fromhex(data["parent_span_id"]) if data["parent_span_id"] else None,
        name=data["name"],
        kind=data["kind"],
        start_ns=int(data["start_ns"]),
        end_ns=int(data["end_ns"]),
        status=data["status"]["code"],
        status_message=data["status"]["message"],
        attributes=dict(data["attributes"]),
        events=tuple(
            SpanEvent(e["name"], int(e["time_ns"]), dict(e["attributes"])) for e in data["events"]
        ),
        links=tuple(
            SpanLink(
                bytes.fromhex(lk["trace_id"]), bytes.fromhex(lk["span_id"]), dict(lk["attributes"])
            )
            for lk in data["links"]
        ),
    )


def canonical_trace(spans: list[Span]) -> list[dict[str, Any]]:
    """Every span in a stable order (trace, start, span id), whatever order they came in."""
    ordered = sorted(spans, key=lambda s: (s.trace_id, s.start_ns, s.span_id))
    return [canonical(s) for s in ordered]
