"""Which producer and which position: the headers every monitord AMQP message carries.

The wire stays the reference's (routing key ``stampede.<event>``, the JSON body); these
headers are additions a Logstash consumer ignores and ``monitord ingest`` needs for exactly
once (docs/ingest.md):

* ``monitord-producer``: the spool's identity (``<run dir>/monitord.amqp-spool/<key>/id``),
  stable across daemon restarts, so a daemon that resumes from its spool is the same producer.
* ``monitord-seq``: the frame's position in that spool, ``segment << 32 | offset``.  It grows
  strictly along the spool (an offset never reaches 2**32: segments roll at 8 MiB and a frame
  is at most 1 GiB) and is written on disk, so a frame published again after a crash or a
  lost confirm carries the same number; the ingest skips what is at or below its mark.
* ``monitord-slot``: ``SLOTS`` buckets of producers, the key the ingest's headers exchange
  binds partition queues on (the routing key is fixed by the wire, and the broker's
  consistent-hash exchange is a plugin a site may not have).

The message's ``user_id`` property is the connection's user: RabbitMQ refuses a message
whose ``user_id`` is not the authenticated user, so the ingest can record it per producer.
"""

from __future__ import annotations

import hashlib

from aiormq.abc import FieldValue

from sinks.runtime.spool.segments import Position

PRODUCER = "monitord-producer"
SEQ = "monitord-seq"
SLOT = "monitord-slot"
SLOTS = 64  # a wire constant: the ingest's partitions are at most this many


def seq_of(position: Position) -> int:
    return position.segment << 32 | position.offset


def slot_of(producer: str) -> str:
    """The producer's bucket, a decimal string (headers-exchange bindings match typed values)."""
    return str(int.from_bytes(hashlib.sha256(producer.encode()).digest()[:4], "big") % SLOTS)


def stream_headers(producer: str, position: Position) -> dict[str, FieldValue]:
    return {PRODUCER: producer, SEQ: seq_of(position), SLOT: slot_of(producer)}
