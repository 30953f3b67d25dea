"""Stampede event -> AMQP message parts (behaviour doc §6.5, §6.2).

The routing key is the full event name (``stampede.job_inst.composite``), so a
topic binding such as ``stampede.inv.*`` selects events by kind.  The body is
always the JSON encoding, whatever ``pegasus.monitord.encoding`` says: the shared
encoder already turns ``.`` and ``__`` in attribute names into ``_`` (Logstash and
Elasticsearch treat dots as object paths) and puts ``"event"`` last; the event catalogue
maps them back (:func:`decode_message`, for a consumer of the exchange).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from monitord.core.events import StampedeEvent
from sinks.amqp.decoder import decode_fast
from sinks.amqp.event_filter import EventFilter
from sinks.amqp.stream import spool_key
from sinks.encoding import FixedCache, decode_json, encode_json

CONTENT_TYPE = "application/json"


def routing_key(event: StampedeEvent) -> str:
    return event.wire_name


def encode_body(event: StampedeEvent) -> bytes:
    return encode_json(event)


def decode_message(
    routing_key: str | None, body: bytes, fixed: FixedCache | None = None
) -> StampedeEvent:
    """The event a message carries, attributes and types checked against the catalogue
    (:func:`sinks.encoding.decode_json`; raises its ``DecodeError``); ``fixed``: one shared
    ``Fixed`` per workflow, for a consumer decoding many messages.  A valid body takes the
    one-pass path (:func:`sinks.amqp.decoder.decode_fast`), any other ``decode_json``."""
    event = decode_fast(routing_key, body, fixed)
    if event is not None:
        return event
    return decode_json(body, routing_key=routing_key, fixed=fixed)


def encode_selected(
    events: Iterable[StampedeEvent],
    selected: EventFilter,
    numbered: tuple[str, Sequence[int]] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """``(routing key, body)`` of each event the endpoint's filter accepts, in order;
    ``numbered`` (the stream and each event's number in it): the key is the spool's
    (:func:`sinks.amqp.stream.spool_key`)."""
    stream, numbers = numbered if numbered is not None else (None, None)
    for i, event in enumerate(events):
        key = event.wire_name
        if selected.accepts(key):
            number = numbers[i] if numbers is not None else None
            yield spool_key(key, stream, number), encode_json(event)
