"""A batch of events as bytes: for the on-disk spool and a process-isolated plugin's pipe.

JSON (orjson) when the attributes allow it, pickle otherwise; the first byte says which.  A
batch with delivery marks (:mod:`sinks.runtime.marks`) is prefixed by them: ``m``, their
length (4 bytes, big-endian), their JSON, then the batch as above.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import orjson

from monitord.core.events import StampedeEvent, make_event
from sinks.runtime.marks import Marks

_JSON, _PICKLE, _MARKED = b"j", b"p", b"m"


def encode_batch(batch: Sequence[StampedeEvent], marks: Marks | None = None) -> bytes:
    items = [(e.name, dict(e.wire_items())) for e in batch]
    try:
        body = _JSON + orjson.dumps(items)
    except TypeError:
        body = _PICKLE + pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
    if marks is None:
        return body
    head = orjson.dumps(marks.to_json())
    return _MARKED + len(head).to_bytes(4, "big") + head + body


def decode_marked(data: bytes) -> tuple[list[StampedeEvent], Marks | None]:
    marks = None
    if data[:1] == _MARKED:
        size = int.from_bytes(data[1:5], "big")
        marks = Marks.from_json(orjson.loads(data[5 : 5 + size]))
        data = data[5 + size :]
    items: Any = orjson.loads(data[1:]) if data[:1] == _JSON else pickle.loads(data[1:])
    return [make_event(name, attrs) for name, attrs in items], marks


def decode_batch(data: bytes) -> list[StampedeEvent]:
    return decode_marked(data)[0]
