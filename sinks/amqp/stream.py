"""Which producer and which position: the headers every monitord AMQP message carries.

The wire stays the reference's (routing key ``stampede.<event>``, the JSON body); two
headers are additions a Logstash consumer ignores and ``monitord ingest`` needs for exactly
once (docs/ingest.md): ``monitord-slot``, and ``monitord-id`` with the other four below as
``"<producer> <seq>[ <stream> <event>]"`` (:func:`stream_headers`; an earlier monitord sent
them as headers of their own, which the ingest still reads, :func:`read_identity`):

* producer (``monitord-producer``): the endpoint's identity in its run directory
  (``<run dir>/monitord.amqp-producer/<key>/id``, :mod:`sinks.amqp.producer`), stable across
  daemon restarts, so the producer keeps its partition.
* seq (``monitord-seq``): strictly growing along everything the producer publishes (reserved on
  disk ahead of use, so a later daemon starts past it); the ingest skips what is at or below
  its mark.  A batch published again takes new numbers: the event numbers below dedupe it.
* ``monitord-slot``: ``SLOTS`` buckets of producers, the key the ingest's headers exchange
  binds partition queues on (the routing key is fixed by the wire, and the broker's
  consistent-hash exchange is a plugin a site may not have).

* stream / event (``monitord-stream`` / ``monitord-event``): which workflow stream and which
  event of it the message carries: the event's number among its workflow's events (the
  body's ``xwf.id``) in the daemon's delivery-marks stream (:mod:`sinks.runtime.marks`).
  Unlike the spool position, this survives the event being *produced again*: a daemon
  resumed from a snapshot after ``kill -9`` numbers the events it regenerates as before, and
  every start from line 1 of a root workflow (first start, recovery, replay) counts in the
  same stream (:func:`~sinks.runtime.marks.line_one_stream`).  The ingest keeps its marks per
  (stream, workflow).  Encoded, both travel in the message's key:
  ``<routing key> <stream> <number>`` (:func:`spool_key`, :func:`split_key`).

The message's ``user_id`` property is the connection's user: RabbitMQ refuses a message
whose ``user_id`` is not the authenticated user, so the ingest can record it per producer.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from aiormq.abc import FieldValue

from monitord.core.events import StampedeEvent
from sinks.runtime.marks import line_one_stream, marks_of, numbers, workflow_of

PRODUCER = "monitord-producer"
SEQ = "monitord-seq"
SLOT = "monitord-slot"
STREAM = "monitord-stream"
EVENT = "monitord-event"
ID = "monitord-id"  # all four above in one header (see stream_headers)
SLOTS = 64  # a wire constant: the ingest's partitions are at most this many


def slot_of(producer: str) -> str:
    """The producer's bucket, a decimal string (headers-exchange bindings match typed values)."""
    return str(int.from_bytes(hashlib.sha256(producer.encode()).digest()[:4], "big") % SLOTS)


def spool_key(routing_key: str, stream: str | None, number: int | None) -> str:
    """The frame key a spooled message is kept under (a routing key has no space)."""
    if stream is None or number is None:
        return routing_key
    return f"{routing_key} {stream} {number}"


def split_key(key: str) -> tuple[str, dict[str, FieldValue]]:
    """A spooled frame's routing key and identity headers (none for a frame of an older
    monitord, spooled before an upgrade)."""
    routing_key, _, rest = key.partition(" ")
    stream, _, number = rest.partition(" ")
    if not stream or not number.isdigit():
        return routing_key, {}
    return routing_key, {STREAM: stream, EVENT: int(number)}


def stream_headers(
    producer: str, seq: int, identity: dict[str, FieldValue] | None = None
) -> dict[str, FieldValue]:
    """The slot (the headers exchange routes on it) and ``monitord-id``: ``"<producer> <seq>"``,
    then `` <stream> <event>`` for a numbered event.  One header, not the four of earlier
    monitord releases (still read, :func:`read_identity`): the consumer's client decodes a
    header table entry by entry, a cost on every message the ingest receives
    (bench/README.md, ingest30g)."""
    packed = f"{producer} {seq}"
    if identity:
        packed = " ".join((packed, str(identity[STREAM]), str(identity[EVENT])))
    return {SLOT: slot_of(producer), ID: packed}


class Identity(NamedTuple):
    """Who published a message and where it stands: all None for a stock producer's."""

    producer: str | None = None
    seq: int | None = None
    stream: str | None = None
    number: int | None = None


def _pair(
    headers: Mapping[str, Any], name_key: str, position_key: str, first: int
) -> tuple[str | None, int | None]:
    """A (name, position) header pair: both absent (a stock producer), or a name of at most
    64 characters and an integer position from ``first``; ValueError names the bad header."""
    name, position = headers.get(name_key), headers.get(position_key)
    if name is None and position is None:
        return None, None
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if not isinstance(name, str) or not name or len(name) > 64:
        raise ValueError(name_key)
    if not isinstance(position, int) or isinstance(position, bool) or position < first:
        raise ValueError(position_key)
    return name, position


def _name(value: str) -> str:
    if not value or len(value) > 64:
        raise ValueError(ID)
    return value


def _position(value: str, first: int) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) < first:
        raise ValueError(ID)
    return int(value)


def _unpack(packed: Any) -> Identity:
    """``monitord-id``'s four parts (:func:`stream_headers`), checked as :func:`_pair` checks
    the separate headers."""
    if isinstance(packed, bytes):
        packed = packed.decode("utf-8", "replace")
    parts = packed.split(" ") if isinstance(packed, str) else []
    if len(parts) == 2:
        return Identity(_name(parts[0]), _position(parts[1], 0))
    if len(parts) == 4:
        return Identity(
            _name(parts[0]), _position(parts[1], 0), _name(parts[2]), _position(parts[3], 1)
        )
    raise ValueError(ID)


def read_identity(headers: Mapping[str, Any]) -> Identity:
    """The producer, position, stream and event number a message's headers carry: its
    ``monitord-id``, else the separate headers an earlier monitord sent (a message it left in
    a queue or a spool); ValueError names a malformed header."""
    packed = headers.get(ID)
    if packed is not None:
        return _unpack(packed)
    producer, seq = _pair(headers, PRODUCER, SEQ, 0)
    stream, number = _pair(headers, STREAM, EVENT, 1)
    return Identity(producer, seq, stream, number)


class Numbering:
    """Each event's stream and number, for the spool.  A batch with delivery marks (a daemon
    that can resume: the service, the live daemon) is numbered by them; one without (a replay,
    a live daemon without a state dir) is counted here, in the root workflow's line-1 stream
    when the daemon starts from line 1 (``restart``: replay, recovery), else a fresh one."""

    def __init__(self, *, restart: bool, root_uuid: str | None) -> None:
        self.stream = line_one_stream(root_uuid) if restart and root_uuid else uuid.uuid4().hex
        self.counts: dict[str, int] = {}

    def of(self, events: Sequence[StampedeEvent]) -> tuple[str, list[int]]:
        marks = marks_of(events)
        if marks is not None:
            return marks.stream, numbers(events, marks)
        out = []
        for event in events:
            wf = workflow_of(event)
            out.append(self.counts.get(wf, 0) + 1)
            self.counts[wf] = out[-1]
        return self.stream, out
