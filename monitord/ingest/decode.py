"""One AMQP message -> the Stampede event it encodes: the only place the ingest decodes.

The JSON body is the encoder's (:func:`sinks.encoding.encode_json`): attribute names with
``.`` and ``__`` turned into ``_``, ``event`` last.  Turning a wire key back into the
attribute name needs the list of attribute names.

STOP-GAP, to be switched at merge time: the catalogue of Stampede events being built on the
``catalogue`` branch (names, attributes, types, with an exact inverse of the JSON encoding)
replaces :data:`_NAMES` and this module's body; :func:`decode` and :class:`DecodeError` stay
the ingest's only interface to it.  Until then the names are gathered from what exists (the
events' mandatory attributes, the SQL column maps) plus the few the loader reads besides;
a wire key not recognised is kept as it is (the loader ignores what it does not read).
"""

from __future__ import annotations

from typing import Any

import orjson

from monitord.core.events import (
    EVENT_CLASSES,
    PREFIX,
    MissingAttribute,
    StampedeEvent,
    make_event,
)
from sinks.sql import columns

# Names read by the loader and the dashboard that neither a mandatory attribute nor a column
# map lists (the stop-gap's only hand-kept part; see the module docstring).
_LOADER_READS = ("root.xwf.id", "parent.xwf.id", "parent.task.id", "child.task.id")


def _names() -> dict[str, str]:
    names: set[str] = set(_LOADER_READS)
    for cls in EVENT_CLASSES.values():
        names.update(cls.required)
    for value in vars(columns).values():
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            names.update(entry[0] for entry in value if isinstance(entry[0], str))
    return {n.replace("__", "_").replace(".", "_"): n for n in names if "." in n}


_NAMES = _names()


class DecodeError(ValueError):
    """A message that is not a Stampede event this ingest can load; ``kind`` names why
    (the dead-letter reason: ``malformed``, ``unknown-event``)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def decode(routing_key: str, body: bytes) -> StampedeEvent:
    """The event of one message; :class:`DecodeError` for a body that is not one."""
    try:
        doc: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise DecodeError("malformed", f"not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise DecodeError("malformed", "the body is not a JSON object")
    wire = doc.pop("event", routing_key)
    if not isinstance(wire, str) or not wire.startswith(PREFIX):
        raise DecodeError("malformed", f"event name {wire!r} is not stampede.*")
    if routing_key.startswith(PREFIX) and routing_key != wire:
        raise DecodeError("malformed", f"routing key {routing_key!r} but event {wire!r}")
    name = wire[len(PREFIX) :]
    if name not in EVENT_CLASSES:
        raise DecodeError("unknown-event", f"unknown event {wire!r}")
    attrs: dict[str, Any] = {_NAMES.get(str(key), str(key)): value for key, value in doc.items()}
    try:
        return make_event(name, attrs)
    except MissingAttribute as exc:
        raise DecodeError("malformed", str(exc)) from None
