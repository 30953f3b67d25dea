"""The catalogue of Stampede events (monitord/core/catalogue.py) and what derives from it.

Every kind must be wired everywhere: an event class, a loader function (or the explicit
``NO_ROWS``), an AMQP mapping (routing key, the list a pattern selects from unless explicitly
unlisted) and a JSON round trip that gives back the same event, value types included.
:func:`problems` checks a catalogue for all of these; a test feeds it broken entries to show it
reports each kind of gap.  The values monitord emits are checked against the catalogue's types
by tests/event_check.py in the differential and fuzz replays, and here on the corpus replays.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from monitord.core.catalogue import (
    AMQP_DEFAULT,
    BY_NAME,
    CATALOGUE,
    NO_ROWS,
    EventSpec,
    _attrs,
    attr_errors,
    spec_errors,
)
from monitord.core.events import EVENT_CLASSES, JobInstTag, StampedeEvent, make_event
from monitord.core.jobactions import BRIEF, BRIEF_TAILS
from monitord.core.jobmachine import JOB_STATES
from monitord.tools.synthetic import generate
from sinks.amqp.encoder import decode_message, encode_body, routing_key
from sinks.amqp.event_filter import KNOWN_EVENTS, EventFilter
from sinks.encoding import DecodeError, decode_json, encode_json
from sinks.sql import columns
from sinks.sql.loader import JOBSTATE_NAMES, dispatch_errors
from tests import event_check
from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus
from tests.test_events import SCHEMA_KINDS

ROOT = Path(__file__).resolve().parents[1]
# One value per accepted type; strings with the characters the encoders treat specially.
SAMPLES: dict[type, Any] = {
    str: 'a "b"=c é',
    int: -7,
    float: 2.5,
    bool: True,
    type(None): None,
    list: [{"transformation": "ls", "exitcode": 0}],
    dict: {"k": [1, 2.0]},
}


def samples(spec: EventSpec) -> list[StampedeEvent]:
    """Events of ``spec`` with every attribute set, the i-th using each attribute's i-th type."""
    width = max(len(a.types) for a in spec.attrs.values())
    out = []
    for i in range(width):
        attrs = {name: SAMPLES[a.types[i % len(a.types)]] for name, a in spec.attrs.items()}
        if "ts" in attrs:  # the JSON encoder leaves out a null ts and level
            attrs["ts"] = 1677911023 + i if int in spec.attrs["ts"].types else "2023-03-04"
        if "level" in attrs:
            attrs["level"] = "Error"
        out.append(make_event(spec.name, attrs))
    return out


def typed(event: StampedeEvent) -> list[tuple[str, str, Any]]:
    return [(k, type(v).__name__, v) for k, v in event.wire_items()]


def problems(catalogue: Iterable[EventSpec]) -> list[str]:
    """Every kind of the catalogue that is not fully wired."""
    catalogue = list(catalogue)
    out = spec_errors(catalogue) + dispatch_errors(catalogue)
    everything = EventFilter.from_property("*")
    for spec in catalogue:
        if spec.name not in EVENT_CLASSES:
            out.append(f"{spec.name}: no event class")
        if spec.loader != NO_ROWS and not spec.loader:
            out.append(f"{spec.name}: no loader entry")
        if spec.amqp_listed != (spec.wire_name in KNOWN_EVENTS):
            out.append(f"{spec.name}: AMQP list disagrees (amqp_listed={spec.amqp_listed})")
        if not everything.accepts(spec.wire_name):
            out.append(f"{spec.name}: not published by an AMQP endpoint with events=*")
        for event in samples(spec):
            key, body = routing_key(event), encode_body(event)
            if key != spec.wire_name:
                out.append(f"{spec.name}: routing key {key}")
            try:
                back = decode_message(key, body)
            except DecodeError as exc:
                out.append(f"{spec.name}: no round trip: {exc}")
                continue
            if back != event or typed(back) != typed(event):
                out.append(f"{spec.name}: round trip gives {typed(back)}")
    return out


def test_every_kind_is_wired() -> None:
    assert {spec.name for spec in CATALOGUE} >= SCHEMA_KINDS
    assert problems(CATALOGUE) == []


def test_the_check_reports_each_gap() -> None:
    real = BY_NAME["job_inst.tag"]
    no_loader = EventSpec("job_inst.fake", real.own, "fake_loader")
    clash = EventSpec("xwf.meta", (*BY_NAME["xwf.meta"].own, *_attrs("a.b:s a_b:i")), "xwf_meta")
    found = problems([no_loader, clash])
    assert "job_inst.fake: no loader function _fake_loader" in found
    assert "job_inst.fake: no event class" in found
    assert "job_inst.fake: AMQP list disagrees (amqp_listed=True)" in found
    assert any(p.startswith("job_inst.fake: no round trip: unknown event") for p in found)
    assert "xwf.meta: attributes share the JSON keys ['a_b']" in found
    # Both attributes went out as one key "a_b": what comes back is not the event.
    assert any(p.startswith("xwf.meta: round trip gives") for p in found)


def test_decode_maps_keys_back_exactly() -> None:
    event = make_event(
        "job_inst.main.end",
        {
            "xwf.id": "u",
            "job.id": "ls_ID1",
            "job_inst.id": 2,
            "ts": 1677911060,
            "js.id": 4,
            "stdin_file": "in",
            "exitcode": "0",
            "status": 0,
            "wf.ts": 1677911013,
            "submit.dir": None,
        },
    )
    body = encode_json(event)
    assert b'"job_inst_id": 2' in body and b'"stdin_file": "in"' in body
    back = decode_json(body)
    assert [k for k, _ in back.wire_items()] == [k for k, _ in event.wire_items()] and type(
        back
    ) is type(event)


def test_decode_reports_why() -> None:
    good = json.loads(encode_json(make_event("rc.pfn", {"xwf.id": "u", "lfn.id": "f", "pfn": "p"})))
    cases = {
        b"{not json": "not JSON",
        b"[1]": "not a JSON object",
        json.dumps({**good, "event": "stampede.no.such"}).encode(): "unknown event",
        json.dumps({**good, "pfn": 3}).encode(): "'pfn' is int",
        json.dumps({k: v for k, v in good.items() if k != "lfn_id"}).encode(): "missing",
        json.dumps({**good, "extra_key": 1}).encode(): "unknown attribute 'extra_key'",
    }
    for body, why in cases.items():
        with pytest.raises(DecodeError, match=why):
            decode_json(body)
    with pytest.raises(DecodeError, match="routing key"):
        decode_message("stampede.rc.meta", json.dumps(good).encode())
    # An open kind keeps keys beyond its list, under their wire spelling.
    extra = make_event("task.monitoring", {**_job(), "monitoring_event": "x", "bytes.in": 3})
    assert dict(decode_json(encode_json(extra)).wire_items())["bytes_in"] == 3


def _job() -> dict[str, Any]:
    return {"xwf.id": "u", "job.id": "j", "job_inst.id": 1}


def test_attr_errors() -> None:
    assert attr_errors("job_inst.tag", {**_job(), "count": 1, "name": "int.error"}) == []
    assert attr_errors("job_inst.tag", {**_job(), "count": "1", "name": "x", "zz": 0}) == [
        "job_inst.tag: 'count' is str '1', not int",
        "job_inst.tag: unknown attribute 'zz'",
    ]
    assert attr_errors("job_inst.tag", _job()) == [
        "job_inst.tag: missing mandatory 'count'",
        "job_inst.tag: missing mandatory 'name'",
    ]
    assert attr_errors("no.such", {}) == ["no.such: not in the catalogue"]


def test_amqp_lists_follow_the_reference() -> None:
    assert AMQP_DEFAULT == {
        "stampede.job_inst.tag",
        "stampede.job_inst.composite",
        "stampede.inv.end",
        "stampede.wf.plan",
    }
    assert len(KNOWN_EVENTS) == 44 and "stampede.job_inst.remote_error" not in KNOWN_EVENTS
    assert EventFilter.from_property("*").accepts("stampede.job_inst.remote_error")
    assert not EventFilter.from_property("job_inst").accepts("stampede.job_inst.remote_error")


def test_job_state_table_names_catalogue_kinds() -> None:
    for state, row in JOB_STATES.items():
        for name, _status in row.events:
            assert name in BY_NAME, (state, name)
        if row.db is not None:
            assert row.db[0] in BY_NAME, (state, row.db)
    assert set(JOBSTATE_NAMES) <= set(BY_NAME)


_EMITTERS = {"_brief": 1}


def test_emitters_name_catalogue_kinds() -> None:
    """The job table's actions name their brief events (``_brief``); every other producer
    builds its event's class by keyword, so a misspelt kind fails at import."""
    seen = set()
    for path in [*ROOT.glob("monitord/core/*.py"), ROOT / "monitord/daemon/plan_events.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            pos = _EMITTERS.get(fname)
            if pos is None or len(node.args) <= pos:
                continue
            arg = node.args[pos]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                assert arg.value in BY_NAME, f"{path.name}:{node.lineno}: {arg.value}"
                seen.add(arg.value)
    assert len(seen) >= 4, seen  # pre.end, abort.info, held.start, post.end
    # _brief builds them positionally: each kind's attributes are BRIEF and a tail it knows.
    for name in seen | {ev for row in JOB_STATES.values() for ev, _ in row.events}:
        fields = EVENT_CLASSES[name].fields
        assert fields == BRIEF + BRIEF_TAILS[len(fields)], name


def test_event_check_catches_bad_values() -> None:
    events: list[StampedeEvent] = []
    undo = event_check.record(events)
    try:
        make_event("job_inst.tag", {**_job(), "count": 1.0, "name": "x"})
        JobInstTag.of("x", "j", 1, 2.0, 5, "y")  # type: ignore[arg-type]  # the positional build
        make_event("made.up", {})
    finally:
        undo()
    make_event("made.up", {})  # after undo: not recorded
    JobInstTag.of("x", "j", 1, 2.0, 5, "y")  # type: ignore[arg-type]
    assert dict(event_check.violations(events)) == {
        "job_inst.tag: 'count' is float 1.0, not int": 1,
        "job_inst.tag: 'count' is float 2.0, not int": 1,
        "made.up: not in the catalogue": 1,
    }


def _checked_replay(dagman_out: Path, home: Path) -> list[str]:
    home.mkdir()
    proc = subprocess.run(
        [*event_check.command(), "-r", dagman_out.name],
        cwd=dagman_out.parent,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return event_check.parse(proc.stderr)


@pytest.mark.parametrize("sample", ["process_wf_success", "hierarchical_wf_failure"])
def test_corpus_replay_emits_catalogue_values(sample: str, tmp_path: Path) -> None:
    """A corpus replay through tests/event_check.py: every event it built fits the catalogue."""
    require_corpus()
    dagman_out = copy_submit_dir(CORPUS / sample / "input", tmp_path / "run")
    assert _checked_replay(dagman_out, tmp_path / "home") == []


def test_generated_workflow_emits_catalogue_values(tmp_path: Path) -> None:
    """A generated workflow (retries, failures, clusters, register jobs) checked the same way."""
    gen = generate(tmp_path / "run", 80, seed=7, retry_fraction=0.2, fail_fraction=0.02)
    assert _checked_replay(gen.dagman_out, tmp_path / "home") == []


def test_events_pickle_as_their_kind() -> None:
    """The classes are built from the catalogue, not module globals: pickles name the kind."""
    for spec in CATALOGUE:
        event = samples(spec)[0]
        back = pickle.loads(pickle.dumps(event))
        assert type(back) is type(event) and back == event
    generic = make_event("not.a.kind", {"x": 1})
    assert pickle.loads(pickle.dumps(generic)) == generic


def test_column_maps_read_catalogue_attributes() -> None:
    """What the loader copies into columns is a field of the kind's class: a misspelt field
    would read NULL (``getattr`` with a default) instead of failing."""
    maps = {
        "wf.plan": columns.WORKFLOW_COLS,
        "job.info": columns.JOB_COLS,
        "task.info": columns.TASK_COLS,
        "inv.end": columns.INVOCATION_COLS,
        "job_inst.main.end": columns.MAIN_END_COLS,
        "job_inst.post.end": columns.POST_END_COLS,
    }
    for name, cols in maps.items():
        fields = {a.field for a in BY_NAME[name].attrs.values()}
        missing = [key for key, _col, _conv in cols if key not in fields]
        assert missing == [], name
