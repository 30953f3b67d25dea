"""BP and JSON encoders: value table, ts rendering, and a byte-exact round trip of the corpus."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from monitord.core.events import GenericEvent, MissingAttribute, StampedeEvent, make_event
from monitord.core.readers.bp import parse_bp_line
from sinks.encoding import bp_timestamp, bp_value, encode_bp, encode_json

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
NOW_TS_EVENTS = {"static.start", "static.end", "rc.pfn"}


def ev(name: str, **attrs: Any) -> StampedeEvent:
    return GenericEvent(name, {k.replace("__", "."): v for k, v in attrs.items()})


# ------------------------------------------------------------------ values
@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", "plain"),
        ("", '""'),
        ("a b", '"a b"'),
        ("a\tb", '"a\tb"'),
        ("k=v", '"k=v"'),
        ('say "hi"', '"say \\"hi\\""'),
        ('x"y', '"x\\"y"'),
        ("back\\slash", "back\\slash"),
        (2.222, "2.222000"),
        (0.0999459945994, "0.099946"),
        (1677911023.0, "1677911023.000000"),
        (3, "3"),
        (-1, "-1"),
        (True, "1"),
        (False, "0"),
        (None, "None"),
        ([], "[]"),
        ([{"a": 1}], "\"[{'a': 1}]\""),
        ({"k": "v"}, "\"{'k': 'v'}\""),
        (["x"], "['x']"),
    ],
)
def test_bp_value_table(value: Any, text: str) -> None:
    assert bp_value(value) == text


def test_bp_timestamp_forms() -> None:
    assert bp_timestamp(1677911060) == "2023-03-04T06:24:20.000000Z"
    assert bp_timestamp(1677911023.0) == "2023-03-04T06:23:43.000000Z"
    assert bp_timestamp(1677911023.25) == "2023-03-04T06:23:43.250000Z"
    assert bp_timestamp(3193169) == "1970-02-06T22:59:29.000000Z"
    assert bp_timestamp("garbage") == "garbage"
    for missing in (None, 0):
        assert re.fullmatch(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", bp_timestamp(missing))


def test_bp_line_layout() -> None:
    line = encode_bp(
        ev("inv.end", xwf__id="u", inv__id=-2, level="Error", ts=1677911060, argv=" -r x", dur=1)
    )
    assert line == (
        "ts=2023-03-04T06:24:20.000000Z event=stampede.inv.end level=Error "
        'xwf.id=u inv.id=-2 argv=" -r x" dur=1\n'
    )


def test_bp_level_defaults_to_info_and_internal_keys_are_dotted() -> None:
    line = encode_bp(GenericEvent("x.y", {"ts": 1, "__a__b": "v", "c__d": None}))
    assert line == "ts=1970-01-01T00:00:01.000000Z event=stampede.x.y level=Info a.b=v c.d=None\n"


# ------------------------------------------------------------------ JSON
def test_json_layout_matches_reference_conventions() -> None:
    event = ev(
        "job_inst.submit.start",
        xwf__id="f00c",
        job__id="create_dir",
        job_inst__id=1,
        ts=1677911024,
        js__id=1,
        reason=None,
        sched__id="2.0",
    )
    assert encode_json(event) == (
        b'{"xwf_id": "f00c", "job_id": "create_dir", "job_inst_id": 1, "ts": 1677911024, '
        b'"js_id": 1, "reason": null, "sched_id": "2.0", "event": "stampede.job_inst.submit.start"}'
    )


def test_json_no_ts_key_when_absent_level_kept_event_last_ascii_escapes() -> None:
    event = GenericEvent(
        "static.start",
        {"xwf.id": "u", "ts": None, "argv": 'é "q"', "level": "Error", "x__y": 1.0, "l": [1, 2]},
    )
    text = encode_json(event)
    assert text == (
        b'{"xwf_id": "u", "argv": "\\u00e9 \\"q\\"", "level": "Error", "x_y": 1.0, "l": [1, 2], '
        b'"event": "stampede.static.start"}'
    )


# ------------------------------------------------------------------ round trip
_INT = re.compile(r"-?\d+")
_FLOAT6 = re.compile(r"-?\d+\.\d{6}")


def typed(raw: str, quoted: bool) -> Any:
    """Test aid: the Python value a producer would have held for a BP text value."""
    if not quoted and raw == "None":
        return None
    if raw[:1] in "[{":
        try:
            return ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            return raw
    if _INT.fullmatch(raw):
        return int(raw)
    if _FLOAT6.fullmatch(raw):
        return float(raw)
    return raw


def rebuild(line: str) -> tuple[StampedeEvent, str]:
    """An event with typed values from one reference BP line, plus its short name."""
    fields = parse_bp_line(line)
    name = fields.pop("event").removeprefix("stampede.")
    ts_text = fields.pop("ts")
    level = fields.pop("level")
    attrs: dict[str, Any] = {}
    m = re.fullmatch(r"(.*)\.(\d{6})Z", ts_text)
    if name in NOW_TS_EVENTS:
        attrs["ts"] = None
    elif m:
        from calendar import timegm
        from time import strptime

        base = timegm(strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
        attrs["ts"] = base if m.group(2) == "000000" else base + int(m.group(2)) / 1e6
    else:
        attrs["ts"] = ts_text
    if level != "Info":
        attrs["level"] = level
    for key, raw in fields.items():
        attrs[key] = typed(raw, quoted=f'{key}="' in line)
    try:
        return make_event(name, attrs), name
    except MissingAttribute:
        return GenericEvent(name, attrs), name


def corpus_lines() -> list[str]:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    return [
        line
        for path in sorted(CORPUS.glob("*/expected/events.bp"))
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
    ]


def _drop_ts(line: str) -> str:
    return line.split(" ", 1)[1]


def test_corpus_round_trip_bp_is_byte_exact() -> None:
    lines = corpus_lines()
    assert len(lines) > 500
    mismatches = []
    for line in lines:
        event, name = rebuild(line)
        out = encode_bp(event)
        if name in NOW_TS_EVENTS:
            same = _drop_ts(out) == _drop_ts(line)
        else:
            same = out == line
        if not same:
            mismatches.append((line, out))
    assert not mismatches, mismatches[:3]


def test_corpus_json_keys_and_values() -> None:
    for line in corpus_lines():
        event, name = rebuild(line)
        obj = json.loads(encode_json(event))
        assert list(obj)[-1] == "event" and obj["event"] == "stampede." + name
        expected = {
            k.replace("__", "_").replace(".", "_"): v
            for k, v in event.wire_items()
            if not (v is None and k == "ts")
        }
        body = {k: v for k, v in obj.items() if k != "event"}
        assert list(body) == list(expected)
        assert body == json.loads(json.dumps(expected))
