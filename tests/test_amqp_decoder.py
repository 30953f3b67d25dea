"""The ingest's one-pass decode (sinks/amqp/decoder.py): it takes every valid event of the
catalogue, and whatever it takes is the event ``decode_json`` gives; anything else it leaves
to ``decode_json``, so a message decodes (or is refused) as before.

Why two decoders stay (mend30m, bench/README.md "Issue 30, fifteenth session: mend30m"): the
one pass only ever accepts, in a loop with no branch for a reason; ``decode_json`` says why a
body is refused (the ``DecodeError`` kind and detail an ingest's rejected item keeps) and
reads what orjson cannot (NaN, a lone surrogate, an integer beyond 64 bits: ``json``'s
reading).  ``decode_message`` is the one entry, the one pass then the general one;
these tests pin that the two give the same event wherever the first accepts."""

from __future__ import annotations

from typing import Any

import pytest

from monitord.core.catalogue import CATALOGUE, EventSpec
from monitord.core.events import make_event
from sinks.amqp.decoder import decode_fast
from sinks.amqp.encoder import decode_message
from sinks.encoding import DecodeError, FixedCache, decode_json, encode_json

_SAMPLE: dict[type, Any] = {
    str: "x é",
    int: 7,
    float: 1.5,
    bool: True,
    type(None): None,
    list: [{"a": 1.5}],
    dict: {"a": [1]},
}


def _valid(spec: EventSpec) -> bytes:
    """A body with every attribute of ``spec``, each of the first type it takes."""
    attrs = {name: _SAMPLE[a.types[0]] for name, a in spec.attrs.items()}
    return encode_json(make_event(spec.name, attrs))


def _outcome(key: str | None, body: bytes, decoder: Any) -> tuple[Any, ...]:
    try:
        event = decoder(key, body)
    except DecodeError as exc:
        return ("refused", exc.kind, exc.detail)
    return (type(event), event, event.wire_items(), repr(event.fixed))


def _plain(key: str | None, body: bytes) -> Any:
    """What the ingest's decode gave before (a shared ``Fixed`` per workflow)."""
    return decode_json(body, routing_key=key, fixed=FixedCache())


def _message(key: str | None, body: bytes) -> Any:
    return decode_message(key, body, FixedCache())


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.name)
def test_every_valid_kind_takes_the_one_pass(spec: EventSpec) -> None:
    """Containers too (``job_inst.composite``'s ``invocations``): the same event."""
    body = _valid(spec)
    fast = decode_fast(spec.wire_name, body, FixedCache())
    plain = _outcome(spec.wire_name, body, _plain)
    assert _outcome(spec.wire_name, body, _message) == plain
    assert fast is not None
    assert _outcome(spec.wire_name, body, lambda k, b: fast) == plain


def _start(pairs: str) -> bytes:
    return ('{"xwf_id": "u", ' + pairs + ', "event": "stampede.xwf.start"}').encode()


def _meta(pairs: str) -> bytes:
    head = '"xwf_id": "u", "lfn_id": "l", "key": "k", "value": "v"'
    return ("{" + head + ", " + pairs + ', "event": "stampede.rc.meta"}').encode()


def _composite(invocations: str) -> bytes:
    head = '"xwf_id": "u", "job_id": "j", "job_inst_id": 1, "js_id": 1, "ts": 1, "status": 0'
    pairs = f'{head}, "invocations": {invocations}, "event": "stampede.job_inst.composite"'
    return ("{" + pairs + "}").encode()


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (None, _start('"ts": 1, "restart_count": 1')),
        (None, _start('"ts": 1e300, "restart_count": 1')),
        (None, _start('"ts": 1, "restart_count": 18446744073709551616')),
        (None, _start('"ts": NaN, "restart_count": 1')),
        (None, _start('"ts": 1, "restart_count": "1"')),
        (None, _start('"ts": 1, "restart_count": true')),
        (None, _start('"ts": "1", "restart_count": 1')),
        (None, _start('"ts": 1')),
        (None, _start('"ts": 1, "restart_count": 1, "other": 1')),
        (None, _start('"ts": 1, "restart_count": 1, "xwf.id": "v"')),
        (None, _start('"ts": 1, "restart_count": 1, "reason": [1]')),
        (None, _meta('"x": 1')),
        (None, _meta('"x": [1]')),
        (None, _meta('"x": {"a": 1e400}')),
        (None, _meta('"x": {"a": 1e300, "b": [2.5, {"c": null}]}')),
        (None, _meta('"x": [{"a": 18446744073709551616}]')),
        (None, _meta('"x": [[[{"a": -9223372036854775809}]]]')),
        (None, _meta('"x": [{"a": NaN}]')),
        (None, _meta('"x": [{"a": 1, "a": 2.5, "b": 1}]')),
        (None, _meta('"x": ' + "[" * 9 + "1" + "]" * 9)),
        (None, _composite('[{"exitcode": 0, "duration": 2.658, "maxrss": 861652}]')),
        (None, _composite('[{"duration": 1e19}]')),
        (None, _composite('[{"maxrss": 9223372036854775808}]')),
        (None, _composite('[{"maxrss": 99999999999999999999}]')),
        (None, _composite('{"a": 1}')),
        (None, _meta('"x": 1e400')),
        (None, _meta('"x": 18446744073709551616')),
        (None, _meta('"x": -9223372036854775809')),
        (None, _meta('"lfn.id": "m"')),
        (None, _meta('"lfn.id": 3')),
        (None, _meta('"lfn_id": 3')),
        (None, b'{"xwf_id": "u", "event": "stampede.no.such"}'),
        (None, b'{"xwf_id": "u", "event": 3}'),
        (None, b'{"xwf_id": "u"}'),
        (None, b"[1]"),
        (None, b"{not json"),
        (None, "\ufeff".encode() + _start('"ts": 1, "restart_count": 1')),
        ("stampede.xwf.end", _start('"ts": 1, "restart_count": 1')),
        ("stampede.xwf.start", _start('"ts": 1, "restart_count": 1')),
    ],
)
def test_what_the_one_pass_is_unsure_of_decodes_as_before(key: str | None, body: bytes) -> None:
    fast = decode_fast(key, body, FixedCache())
    plain = _outcome(key, body, _plain)
    if fast is not None:
        assert _outcome(key, body, lambda k, b: fast) == plain
    assert _outcome(key, body, _message) == plain
