"""Issue 30 (child30j): a ``--sql-process`` child reads a batch as views of the crossing's
values (``sinks/runtime/views.py``), not as events rebuilt slot by slot: every view must read
as its event does, and only a sink that says so gets views."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from monitord.core.eventbase import UNSET, Fixed, StampedeEvent
from monitord.core.events import make_event
from sinks.runtime.capabilities import Reads
from sinks.runtime.crossing import decode_views, encode_events
from sinks.runtime.views import VIEWS
from sinks.sql.sink import SQL_READS

_MISSING = object()
_KINDS = sorted(VIEWS, key=lambda c: c.name)
_FIXED = Fixed(xwf_id="u", root_xwf_id="r", wf_ts=7, submit_dir="/s", dax="d.yml")


def _events(cls: type[StampedeEvent]) -> list[StampedeEvent]:
    """An event of ``cls`` with every field set, one with its required ones only (the rest
    UNSET), each with and without the workflow's fixed attributes."""
    full = {f: f"{f}-value" for f in cls.fields}
    few = {f: f"{f}-value" for f in cls.fields if f in _required_fields(cls)}
    out = []
    for values in (full, few):
        for fixed in (_FIXED, None):
            out.append(cls(**values, fixed=fixed))  # type: ignore[call-arg]
    return out


def _required_fields(cls: type[StampedeEvent]) -> set[str]:
    return {cls.by_wire[k] for k in cls.required if k in cls.by_wire}


def _readable(obj: Any) -> dict[str, Any]:
    """Every attribute of ``obj`` but its methods and dunders, as ``getattr`` reads it."""
    out = {}
    for name in dir(obj):
        if name.startswith("__"):
            continue
        value = getattr(obj, name, _MISSING)
        if not callable(value) or isinstance(value, type):
            out[name] = value
    return out


@pytest.mark.quick
@pytest.mark.parametrize("cls", _KINDS, ids=[c.name for c in _KINDS])
def test_a_view_reads_as_its_event(cls: type[StampedeEvent]) -> None:
    """Each field, class attribute and property (the fixed attributes) of the event, the
    same through its view; nothing the event lacks (``count``, ``index``) reads otherwise."""
    for event in _events(cls):
        (view,) = decode_views(encode_events([event], wire=False))
        assert type(view) is VIEWS[cls]
        mine, theirs = _readable(view), _readable(event)
        assert {k: v for k, v in mine.items() if v is not _MISSING} == theirs
        for name in ("count", "index", "_fields", "no_such_field"):
            assert getattr(view, name, _MISSING) == getattr(event, name, _MISSING), name
        assert all(
            getattr(view, f) is getattr(event, f) for f in cls.fields if getattr(event, f) is UNSET
        )


@pytest.mark.quick
def test_only_a_sink_reading_views_gets_them() -> None:
    """The SQL sink reads views; a batch with the wire order (a sink that reads it) and an
    unknown kind are built as events."""
    assert SQL_READS.views and not Reads(kinds=frozenset()).views
    known = make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0})
    generic = make_event("no.such.kind", {"b": 2, "a": 1})
    views = decode_views(encode_events([known, generic], wire=False))
    assert [type(v) for v in views] == [VIEWS[type(known)], type(generic)]
    assert views[1] == generic
    (event,) = decode_views(encode_events([known], wire=True))
    assert type(event) is type(known) and event == known


@pytest.mark.quick
def test_a_view_of_the_wrong_width_is_refused() -> None:
    """A batch whose values do not fit its kind (a daemon and a child of two versions) is
    refused, not read shifted by a field: a tuple would take any length."""
    known = make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0})
    wire, items = pickle.loads(encode_events([known], wire=False))
    kind, values = items
    for other in (values[:-1], (*values, None)):
        with pytest.raises(ValueError, match="different versions"):
            decode_views(pickle.dumps((wire, [kind, other])))
