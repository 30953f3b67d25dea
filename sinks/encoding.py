"""Wire encodings of Stampede events: NetLogger BP lines and JSON objects.

Both must match the reference byte for byte (downstream tools diff and parse
them), and both run once per event of a replay, so they are table driven:
per-type value renderers looked up by ``type(value)``, key spellings cached per
key, and the UTC date part of a BP ``ts`` cached per integer second.

JSON must equal ``json.dumps`` with default settings, which is what the
reference writes (``", "``/``": "`` separators, ``ensure_ascii`` escapes such
as ``\\u00e9``, Python float reprs, ``NaN``).  orjson differs on all four, and
rewriting its separators is unsafe (a string may end in ``\\",``), so the
object is assembled from the standard library's own C scalar renderers.

The JSON key spelling loses information (``job_inst.id`` and ``job.inst.id`` both
become ``job_inst_id``), so :func:`decode_json` maps keys back through the event
kind's catalogue entry, not by rewriting ``_``, and checks the values' types there.
"""

from __future__ import annotations

import json
import math
import operator
import os
import time
from collections.abc import Callable
from typing import Any

import orjson

from monitord.core.catalogue import BY_NAME, FIXED, PREFIX, attr_errors, json_key
from monitord.core.events import Fixed, StampedeEvent, make_event

# ---------------------------------------------------------------- BP values


def _bp_str(value: str) -> str:
    if not value:
        return '""'
    if " " in value or "\t" in value or '"' in value or "=" in value:
        return '"' + value.replace('"', '\\"') + '"'
    return value


def _bp_float(value: float) -> str:
    return f"{value:f}"


def _bp_int(value: int) -> str:
    return str(int(value))


def _bp_none(value: None) -> str:
    return "None"


def _bp_container(value: Any) -> str:
    text = repr(value)
    if " " in text or "\t" in text:
        return '"' + text + '"'
    return text


_BP_RENDER: dict[type, Callable[[Any], str]] = {
    str: _bp_str,
    float: _bp_float,
    int: _bp_int,
    bool: _bp_int,
    type(None): _bp_none,
    list: _bp_container,
    dict: _bp_container,
    tuple: _bp_container,
}


def bp_value(value: Any) -> str:
    """Render one attribute value as the reference's BP writer does."""
    render = _BP_RENDER.get(type(value))
    if render is not None:
        return render(value)
    # Subclasses (str enums, numpy-like ints) and anything exotic.
    if isinstance(value, str):
        return _bp_str(str(value))
    if isinstance(value, bool | int):
        return _bp_int(value)
    if isinstance(value, float):
        return _bp_float(value)
    if isinstance(value, list | dict | tuple | set):
        return _bp_container(value)
    return _bp_str(str(value))


# ---------------------------------------------------------------- BP keys

_BP_KEYS: dict[str, str] = {}


def _bp_key(key: str) -> str:
    wire = _BP_KEYS.get(key)
    if wire is None:
        wire = key[2:] if key.startswith("__") else key
        wire = wire.replace("__", ".")
        _BP_KEYS[key] = wire
    return wire


# ---------------------------------------------------------------- BP ts

_last_second: int | None = None
_last_prefix = ""


def _utc_prefix(second: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` for an epoch second, memoised for the last second seen."""
    global _last_second, _last_prefix
    if second != _last_second:
        _last_prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _last_second = second
    return _last_prefix


def bp_timestamp(ts: Any) -> str:
    """Render ``ts``: numbers as UTC ISO with microseconds, strings verbatim, else now."""
    if isinstance(ts, str):
        return ts
    if not ts or isinstance(ts, bool) or not isinstance(ts, int | float):
        ts = time.time()
    if type(ts) is int:
        return _utc_prefix(ts) + ".000000Z"
    if not math.isfinite(ts):
        ts = time.time()
    second = math.floor(ts)
    micro = round((ts - second) * 1_000_000)
    if micro >= 1_000_000:
        second += 1
        micro -= 1_000_000
    return f"{_utc_prefix(int(second))}.{micro:06d}Z"


_GUID = os.environ.get("NETLOGGER_GUID")


def encode_bp(event: StampedeEvent) -> str:
    """One BP line, ``\\n``-terminated: ts, event, level, then attrs in insertion order."""
    ts = level = None
    parts = ["", "event=stampede." + event.name, ""]
    render = _BP_RENDER
    for key, value in event.wire_items():
        if key == "ts":
            ts = value
            continue
        if key == "level":
            level = value
            continue
        fn = render.get(type(value))
        parts.append(_bp_key(key) + "=" + (fn(value) if fn is not None else bp_value(value)))
    parts[0] = "ts=" + bp_timestamp(ts)
    parts[2] = "level=" + (level if isinstance(level, str) and level else "Info")
    if _GUID is not None:
        parts.append("guid=" + _GUID)
    return " ".join(parts) + "\n"


# ---------------------------------------------------------------- JSON

_JSON = json.JSONEncoder()
_json_str: Callable[[str], str] = json.encoder.encode_basestring_ascii  # the C escaper of dumps


def _json_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def _json_bool(value: bool) -> str:
    return "true" if value else "false"


def _json_null(value: None) -> str:
    return "null"


# Scalars rendered exactly as json.dumps renders them; anything else goes through it.
_JSON_RENDER: dict[type, Callable[[Any], str]] = {
    str: _json_str,
    int: int.__repr__,
    bool: _json_bool,
    float: _json_float,
    type(None): _json_null,
}
_JSON_KEYS: dict[str, str] = {}
_JSON_PREFIX: dict[str, str] = {}


def _json_key(key: str) -> str:
    wire = _JSON_KEYS.get(key)
    if wire is None:
        wire = json_key(key)
        _JSON_KEYS[key] = wire
        _JSON_PREFIX[wire] = _json_str(wire) + ": "
    return wire


def encode_json_text(event: StampedeEvent) -> str:
    """The JSON object as text (no newline); ``event`` last, no null ``ts``/``level``.

    Identical to ``json.dumps`` of the renamed mapping, built from per-value
    renderings (the C string escaper, ``repr`` of numbers) with cached key
    prefixes: several times faster than ``json.dumps`` itself.
    """
    out: dict[str, Any] = {}
    keymap = _JSON_KEYS
    for key, value in event.wire_items():
        if value is None and (key == "ts" or key == "level"):
            continue
        wire = keymap.get(key)
        out[wire if wire is not None else _json_key(key)] = value
    out.pop("event", None)
    prefix = _JSON_PREFIX
    render = _JSON_RENDER
    parts = []
    for wire, value in out.items():
        fn = render.get(type(value))
        parts.append(prefix[wire] + (fn(value) if fn is not None else _JSON.encode(value)))
    parts.append('"event": ' + _json_str("stampede." + event.name))
    return "{" + ", ".join(parts) + "}"


def encode_json(event: StampedeEvent) -> bytes:
    """The JSON object as ASCII bytes, without a trailing newline (the sink adds it)."""
    return encode_json_text(event).encode("ascii")


_BIG = float(1 << 63)  # floats this large may be integers orjson could not hold


def _loads(body: bytes | str) -> Any:
    """``json.loads(body)``, through orjson when that gives the same object (a third of the
    time on an event's body; the ingest decodes every message).  Where the two differ,
    ``json`` decides: orjson refuses ``NaN``/``Infinity`` (which the reference writes), lone
    surrogates, a BOM and non-UTF-8 encodings, and turns integers beyond 64 bits into
    floats; containers (``job_inst.composite``'s ``invocations``) are left to ``json`` too."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)
    if type(obj) is dict:
        for value in obj.values():
            kind = type(value)
            if kind is float:
                if not -_BIG < value < _BIG:
                    return json.loads(body)
            elif kind is list or kind is dict:
                return json.loads(body)
    return obj


class DecodeError(ValueError):
    """A JSON body that is not a valid Stampede event; the message says why, ``kind`` names
    the class of fault (``malformed`` or ``unknown-event``: an ingest's dead-letter reason)."""

    def __init__(self, detail: str, kind: str = "malformed") -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class FixedCache:
    """The workflows' :class:`Fixed` a decoder has built, by their values: every event of a
    fixed kind carries its workflow's fixed attributes, and building their ``Fixed`` was a
    fifth of an ingest's decode (bench/README.md, ingest30b).  An event decoded with the
    cached one equals the event decoded without it, ``Fixed`` included: ``from_wire`` merges
    the same keys and values, and ``xwf.id`` (each kind's own first attribute) stays out of
    it as it does there.  Keyed by the values and their types (``1``, ``1.0`` and ``True``
    hash alike); an event without all eight keys gets its own; at most ``limit`` entries
    (then it starts over: a bound for a long-running consumer)."""

    _values = operator.itemgetter(*(a.name for a in FIXED[1:]))
    _fields = tuple(a.field for a in FIXED[1:])

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._held: dict[tuple[tuple[Any, ...], tuple[type, ...]], Fixed] = {}

    def get(self, attrs: dict[str, Any]) -> Fixed | None:
        """The shared Fixed of ``attrs``' fixed attributes; None: not all eight present, or a
        value that is not hashable (an unchecked body)."""
        try:
            values = self._values(attrs)
            key = (values, tuple(map(type, values)))
            fixed = self._held.get(key)
        except (KeyError, TypeError):
            return None
        if fixed is None:
            if len(self._held) >= self.limit:
                self._held.clear()
            fixed = self._held[key] = Fixed(**dict(zip(self._fields, values, strict=True)))
        return fixed


def decode_json(
    body: bytes | str,
    *,
    routing_key: str | None = None,
    check: bool = True,
    fixed: FixedCache | None = None,
) -> StampedeEvent:
    """The event a JSON object encodes: the inverse of :func:`encode_json_text`.

    Keys map back through the kind's catalogue entry (``job_inst_id`` -> ``job_inst.id``,
    ``stdin_file`` stays ``stdin_file``); keys an open kind carries beyond its list keep
    their wire spelling.  ``check``: unknown attributes, values of a type the catalogue
    does not name and missing mandatory attributes raise :class:`DecodeError`, as do a kind
    outside the catalogue and an ``event`` that differs from ``routing_key``.  ``fixed``:
    a fixed kind's :class:`Fixed` is taken from that cache (a consumer of many events).
    """
    try:
        obj = _loads(body)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise DecodeError(f"not JSON: {exc}") from None
    except RecursionError:  # ``json``'s, on a body nested deeper than it recurses
        raise DecodeError("JSON nested too deep") from None
    if not isinstance(obj, dict):
        raise DecodeError(f"not a JSON object but {type(obj).__name__}")
    wire_name = obj.pop("event", None)
    if not isinstance(wire_name, str) or not wire_name.startswith(PREFIX):
        raise DecodeError(f"no stampede event name: {wire_name!r:.80}")
    if routing_key is not None and routing_key != wire_name:
        raise DecodeError(f"routing key {routing_key!r:.80} is not the event {wire_name!r:.80}")
    name = wire_name[len(PREFIX) :]
    spec = BY_NAME.get(name)
    if spec is None:
        raise DecodeError(f"unknown event {wire_name!r:.80}", "unknown-event")
    keys = spec.from_json
    attrs = {keys.get(key, key): value for key, value in obj.items()}
    if check:
        errors = attr_errors(name, attrs)
        if errors:
            raise DecodeError("; ".join(errors))
    if fixed is not None and spec.fixed:
        return make_event(name, attrs, fixed.get(attrs))
    return make_event(name, attrs)
