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
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from sinks.otlp.model import SCHEMA_URL
from sinks.otlp.spans import AttrValue, Span, SpanEvent, SpanLink

SCOPE_NAME = "monitord"

_KINDS = {"INTERNAL": PbSpan.SPAN_KIND_INTERNAL, "SERVER": PbSpan.SPAN_KIND_SERVER}
_KIND_NAMES = {v: k for k, v in _KINDS.items()}
_STATUS = {"UNSET": Status.STATUS_CODE_UNSET, "ERROR": Status.STATUS_CODE_ERROR}
_STATUS_NAMES = {**{v: k for k, v in _STATUS.items()}, Status.STATUS_CODE_OK: "OK"}


def _fill(target: Any, attrs: Mapping[str, AttrValue]) -> None:
    """Append ``attrs`` to a repeated KeyValue field, sorted (built in place: the fast way)."""
    for key, value in sorted(attrs.items()):
        kv = target.add()
        kv.key = key
        if isinstance(value, bool):
            kv.value.bool_value = value
        elif isinstance(value, int):
            kv.value.int_value = value
        elif isinstance(value, float):
            kv.value.double_value = value
        else:
            kv.value.string_value = str(value)


def _span(pb: PbSpan, span: Span) -> None:
    pb.trace_id = span.trace_id
    pb.span_id = span.span_id
    if span.parent_span_id:
        pb.parent_span_id = span.parent_span_id
    pb.name = span.name
    pb.kind = _KINDS[span.kind]
    pb.start_time_unix_nano = span.start_ns
    pb.end_time_unix_nano = span.end_ns
    _fill(pb.attributes, span.attributes)
    for e in span.events:
        event = pb.events.add()
        event.time_unix_nano = e.time_ns
        event.name = e.name
        _fill(event.attributes, e.attributes)
    for lk in span.links:
        link = pb.links.add()
        link.trace_id = lk.trace_id
        link.span_id = lk.span_id
        _fill(link.attributes, lk.attributes)
    pb.status.code = _STATUS[span.status]
    pb.status.message = span.status_message


def encode_request(
    spans: Sequence[Span], resource: Mapping[str, AttrValue], scope_version: str
) -> bytes:
    """One request: one resource (the sink's), one scope (monitord), these spans."""
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.schema_url = SCHEMA_URL
    _fill(rs.resource.attributes, resource)
    ss = rs.scope_spans.add()
    ss.schema_url = SCHEMA_URL
    ss.scope.name = SCOPE_NAME
    ss.scope.version = scope_version
    add = ss.spans.add
    for span in spans:
        _span(add(), span)
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
