"""A batch of events as bytes: for the sink process's pipe and the on-disk spool.

JSON (orjson) when the attributes allow it, pickle otherwise; the first byte says which.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import orjson

from monitord.core.events import StampedeEvent, make_event

_JSON, _PICKLE = b"j", b"p"


def encode_batch(batch: Sequence[StampedeEvent]) -> bytes:
    items = [(e.name, e.attrs) for e in batch]
    try:
        return _JSON + orjson.dumps(items)
    except TypeError:
        return _PICKLE + pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)


def decode_batch(data: bytes) -> list[StampedeEvent]:
    items: Any = orjson.loads(data[1:]) if data[:1] == _JSON else pickle.loads(data[1:])
    return [make_event(name, attrs) for name, attrs in items]
