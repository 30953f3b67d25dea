"""Spans <-> OTLP ``ExportTraceServiceRequest`` protobuf, with the official definitions.

``opentelemetry-proto`` (the ``otlp`` extra) is imported here only; the factory checks it is
installed before a sink is built.  :func:`decode_request` is the exact inverse, for a
receiver (the tests' one) and for checking that what goes on the wire is the canonical trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Status
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from sinks.otlp.model import SCHEMA_URL
from sinks.otlp.spans import AttrValue, Span, SpanEvent, SpanLink

SCOPE_NAME = "monitord"

_KINDS = {"INTERNAL": PbSpan.SPAN_KIND_INTERNAL, "SERVER": PbSpan.SPAN_KIND_SERVER}
_KIND_NAMES = {v: k for k, v in _KINDS.items()}
_STATUS = {"UNSET": Status.STATUS_CODE_UNSET, "ERROR": Status.STATUS_CODE_ERROR}
_STATUS_NAMES = {**{v: k for k, v in _STATUS.items()}, Status.STATUS_CODE_OK: "OK"}


def _value(value: AttrValue) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=str(value))


def _attributes(attrs: Mapping[str, AttrValue]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_value(v)) for k, v in sorted(attrs.items())]


def _span(span: Span) -> PbSpan:
    return PbSpan(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id or b"",
        name=span.name,
        kind=_KINDS[span.kind],
        start_time_unix_nano=span.start_ns,
        end_time_unix_nano=span.end_ns,
        attributes=_attributes(span.attributes),
        events=[
            PbSpan.Event(
                time_unix_nano=e.time_ns, name=e.name, attributes=_attributes(e.attributes)
            )
            for e in span.events
        ],
        links=[
            PbSpan.Link(
                trace_id=lk.trace_id, span_id=lk.span_id, attributes=_attributes(lk.attributes)
            )
            for lk in span.links
        ],
        status=Status(code=_STATUS[span.status], message=span.status_message),
    )


def encode_request(
    spans: Sequence[Span], resource: Mapping[str, AttrValue], scope_version: str
) -> bytes:
    """One request: one resource (the sink's), one scope (monitord), these spans."""
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=_attributes(resource)),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name=SCOPE_NAME, version=scope_version),
                        spans=[_span(s) for s in spans],
                        schema_url=SCHEMA_URL,
                    )
                ],
                schema_url=SCHEMA_URL,
            )
        ]
    )
    return request.SerializeToString()


def _plain(value: AnyValue) -> AttrValue:
    which = value.WhichOneof("value")
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    return value.string_value


def _attrs_of(kvs: Sequence[KeyValue]) -> dict[str, AttrValue]:
    return {kv.key: _plain(kv.value) for kv in kvs}


def decode_span(pb: PbSpan) -> Span:
    return Span(
        trace_id=pb.trace_id,
        span_id=pb.span_id,
        parent_span_id=pb.parent_span_id or None,
        name=pb.name,
        kind=_KIND_NAMES.get(pb.kind, str(pb.kind)),
        start_ns=pb.start_time_unix_nano,
        end_ns=pb.end_time_unix_nano,
        status=_STATUS_NAMES.get(pb.status.code, str(pb.status.code)),
        status_message=pb.status.message,
        attributes=_attrs_of(pb.attributes),
        events=tuple(
            SpanEvent(e.name, e.time_unix_nano, _attrs_of(e.attributes)) for e in pb.events
        ),
        links=tuple(SpanLink(lk.trace_id, lk.span_id, _attrs_of(lk.attributes)) for lk in pb.links),
    )


def decode_request(body: bytes) -> tuple[list[dict[str, AttrValue]], list[Span]]:
    """Each resource's attributes, and every span of the request."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    resources: list[dict[str, AttrValue]] = []
    spans: list[Span] = []
    for rs in request.resource_spans:
        resources.append(_attrs_of(rs.resource.attributes))
        for ss in rs.scope_spans:
            spans.extend(decode_span(s) for s in ss.spans)
    return resources, spans


def rejected_spans(body: bytes) -> tuple[int, str]:
    """A 2xx answer's partial success: spans the receiver dropped, and why ('' if none)."""
    if not body:
        return 0, ""
    response = ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:  # noqa: BLE001 - an answer that is not protobuf says nothing more
        return 0, ""
    partial: Any = response.partial_success
    return int(partial.rejected_spans), str(partial.error_message)


def response_body() -> bytes:
    """An empty, full-success answer (what a receiver sends back)."""
    return ExportTraceServiceResponse().SerializeToString()
