"""One AMQP message -> the Stampede event it encodes: the only place the ingest decodes.

The body's keys map back to attribute names, and the values are checked against their types,
through the one catalogue of Stampede events (``monitord/core/catalogue.py``), the same one
the producers' encoder uses (:func:`sinks.amqp.encoder.decode_message`).  A message that is not a valid event
raises :class:`DecodeError`, whose ``kind`` is its dead-letter reason.  The workflows' fixed
attributes become one shared ``Fixed`` per workflow (:class:`sinks.encoding.FixedCache`:
decoded on the event loop only, so one cache for the process).
"""

from __future__ import annotations

from monitord.core.events import PREFIX, StampedeEvent
from sinks.amqp.encoder import decode_message
from sinks.encoding import DecodeError, FixedCache

__all__ = ["DecodeError", "decode"]

_FIXED = FixedCache()


def decode(routing_key: str, body: bytes) -> StampedeEvent:
    """The event of one message; :class:`DecodeError` for a body that is not one.

    A routing key outside ``stampede.*`` (a message routed by other means) is not compared
    with the body's event name.  A body nested deeper than ``json`` recurses is refused too
    (``decode_json`` says so): raised on, it would fail its lane in every session,
    redelivered for ever.
    """
    key = routing_key if routing_key.startswith(PREFIX) else None
    return decode_message(key, body, _FIXED)
