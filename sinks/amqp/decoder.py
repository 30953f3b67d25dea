"""A message body -> its event in one pass over the keys, for the valid message.

:func:`sinks.encoding.decode_json` makes three passes over a body's values: ``_loads``
looks for what orjson and ``json`` would read differently (a float beyond 64 bits, a
container), the keys are mapped back to attribute names, and ``attr_errors`` checks each
value's type.  An ingest decodes every message it receives on its event loop, so
:func:`decode_fast` does the three in one loop over the keys (bench/README.md, ingest30k),
``job_inst.composite``'s ``invocations`` list included (ingest30l: parsed twice before).

It only ever *accepts*: any body it is not sure of (not JSON for orjson, a key or a value
the catalogue does not take as it comes, a missing attribute, a float beyond 64 bits at
any depth, a container nested deeper than ``_DEPTH``) gets ``None`` back, and the caller decodes it with ``decode_json`` (the
same event, or the same :class:`~sinks.encoding.DecodeError`).  What it accepts is built as
``decode_json`` builds it: the same attributes in the same order, the same ``make_event``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from monitord.core.catalogue import BY_NAME, PREFIX, EventSpec
from monitord.core.events import StampedeEvent, make_event
from sinks.encoding import FixedCache

__all__ = ["decode_fast"]

_BIG = float(1 << 63)  # (as sinks.encoding: beyond it, ``json`` decides)
_DEPTH = 8  # containers nested deeper are left to ``json`` (its own recursion limit decides)

#: per kind: its JSON keys -> (attribute name, accepted types), its mandatory attributes
_Keys = dict[str, tuple[str, tuple[type, ...]]]


def _table(spec: EventSpec) -> tuple[EventSpec, _Keys, frozenset[str]]:
    keys = {json: (name, spec.attrs[name].types) for json, name in spec.from_json.items()}
    return spec, keys, frozenset(spec.required)


_TABLES = {PREFIX + name: _table(spec) for name, spec in BY_NAME.items()}


def decode_fast(
    routing_key: str | None, body: bytes, fixed: FixedCache | None
) -> StampedeEvent | None:
    """The event of a valid ``body`` (routed as ``routing_key`` unless None); None: let
    ``decode_json`` decide."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    wire_name = obj.pop("event", None)
    if routing_key is not None and routing_key != wire_name:
        return None
    table = _TABLES.get(wire_name)  # type: ignore[arg-type]
    if table is None:
        return None
    spec, keys, required = table
    attrs = _attrs(obj, spec, keys)
    if attrs is None or not attrs.keys() >= required:
        return None
    if fixed is not None and spec.fixed:
        return make_event(spec.name, attrs, fixed.get(attrs))
    return make_event(spec.name, attrs)


def _attrs(obj: dict[str, Any], spec: EventSpec, keys: _Keys) -> dict[str, Any] | None:
    """``obj``'s keys as attribute names, each value of a type its attribute takes (an open
    kind's extra key: any); else None, as for a float beyond 64 bits, at the top or inside
    a container (``job_inst.composite``'s ``invocations``: :func:`_alike`)."""
    attrs: dict[str, Any] = {}
    for key, value in obj.items():
        kind = type(value)
        if kind is float:
            if not -_BIG < value < _BIG:
                return None
        elif (kind is list or kind is dict) and not _alike(value, 1):
            return None
        entry = keys.get(key)
        if entry is None:
            if not spec.open or key in spec.attrs:
                return None
            attrs[key] = value
        elif kind in entry[1]:
            attrs[entry[0]] = value
        else:
            return None
    return attrs


def _alike(value: list[Any] | dict[str, Any], depth: int) -> bool:
    """Whether ``json`` reads the container ``value`` as orjson did: no float beyond 64 bits
    in it at any depth (orjson's reading of an integer too large for it, or of a float
    ``json`` reads as such; what else the two read differently, orjson refuses: NaN, a lone
    surrogate, a float beyond a double), nested at most ``_DEPTH`` deep.  ``decode_json``
    gives ``json``'s reading of a body with a container; the one pass keeps orjson's where
    they are equal."""
    if depth > _DEPTH:
        return False
    items: Iterable[Any] = value.values() if isinstance(value, dict) else value
    for item in items:
        kind = type(item)
        if kind is float:
            if not -_BIG < item < _BIG:
                return False
        elif (kind is list or kind is dict) and not _alike(item, depth + 1):
            return False
    return True
