"""The typed event model: one class per Stampede event kind, mandatory attributes checked."""

from __future__ import annotations

import glob

import pytest

from monitord.core.events import (
    EVENT_CLASSES,
    Fixed,
    GenericEvent,
    MissingAttribute,
    make_event,
    relay_builder,
)
from monitord.core.readers.bp import parse_bp_line
from tests.conftest import CORPUS, require_corpus

# Every event kind the Stampede schema (behaviour doc §5.3 and §6.5's list) defines.
SCHEMA_KINDS = {
    "wf.plan",
    "wf.map.task_job",
    "static.start",
    "static.end",
    "xwf.start",
    "xwf.end",
    "xwf.map.subwf_job",
    "task.info",
    "task.edge",
    "job.info",
    "job.edge",
    "job_inst.pre.start",
    "job_inst.pre.term",
    "job_inst.pre.end",
    "job_inst.submit.start",
    "job_inst.submit.end",
    "job_inst.held.start",
    "job_inst.held.end",
    "job_inst.main.start",
    "job_inst.main.term",
    "job_inst.main.end",
    "job_inst.post.start",
    "job_inst.post.term",
    "job_inst.post.end",
    "job_inst.host.info",
    "job_inst.image.info",
    "job_inst.abort.info",
    "job_inst.grid.submit.start",
    "job_inst.grid.submit.end",
    "job_inst.globus.submit.start",
    "job_inst.globus.submit.end",
    "job_inst.tag",
    "job_inst.composite",
    "job_inst.remote_error",
    "inv.start",
    "inv.end",
    "static.meta.start",
    "xwf.meta",
    "task.meta",
    "rc.meta",
    "int.metric",
    "rc.pfn",
    "wf.map.file",
    "static.meta.end",
    "task.monitoring",
}


def test_every_schema_kind_has_its_class():
    assert SCHEMA_KINDS <= set(EVENT_CLASSES)
    for name in SCHEMA_KINDS:
        cls = EVENT_CLASSES[name]
        assert cls.name == name and cls.required, name


def test_mandatory_attributes_are_checked():
    with pytest.raises(MissingAttribute, match="js.id"):
        make_event(
            "job_inst.submit.start", {"xwf.id": "x", "job.id": "j", "job_inst.id": 1, "ts": 1}
        )
    ev = make_event("xwf.start", {"xwf.id": "x", "ts": 1.0, "restart_count": 0, "reason": None})
    assert ev.wire_name == "stampede.xwf.start" and ev.ts == 1.0


def test_unknown_kinds_stay_generic():
    ev = make_event("something.new", {"xwf.id": "x"})
    assert isinstance(ev, GenericEvent) and ev.name == "something.new"


def test_a_relay_builder_makes_what_make_event_makes():
    fixed = Fixed(xwf_id="x", dag="d.dag", wf_ts=5)
    for name, attrs in (
        ("task.info", {"xwf.id": "y", "task.id": "t", "argv": "-a", "odd": "1"}),
        ("something.new", {"xwf.id": "x", "k": "v"}),
    ):
        made, built = make_event(name, dict(attrs), fixed), relay_builder(name, fixed)(dict(attrs))
        assert type(made) is type(built) and made.name == built.name == name
        assert made.wire_items() == built.wire_items() and made.extra == built.extra
        assert [getattr(made, f) for f in made.fields] == [getattr(built, f) for f in built.fields]


def test_every_reference_event_builds_as_its_typed_class():
    require_corpus()
    seen = set()
    for path in glob.glob(str(CORPUS / "*" / "expected" / "events.bp")):
        for line in open(path, encoding="utf-8"):
            attrs = parse_bp_line(line)
            name = attrs.pop("event")[len("stampede.") :]
            ev = make_event(name, attrs)
            assert type(ev) is EVENT_CLASSES[name]
            seen.add(name)
    assert len(seen) >= 30


def test_fields_are_the_attributes_under_python_names():
    from monitord.core.events import UNSET, JobInstSubmitStart, JobInstTag

    ev = make_event(
        "job_inst.submit.start",
        {"xwf.id": "x", "job.id": "j", "job_inst.id": 3, "ts": 1, "js.id": 2, "reason": None},
    )
    assert type(ev) is JobInstSubmitStart
    assert (ev.xwf_id, ev.job_id, ev.job_inst_id, ev.js_id) == ("x", "j", 3, 2)
    # Sent as None is not absent: the reference sends reason=None but no sched.id.
    assert ev.reason is None and ev.sched_id is UNSET and ev.sched_id is not None
    assert "name_" in JobInstTag.fields  # ``name`` is the class's own: the field gets a ``_``


def test_events_are_frozen_and_slotted():
    from monitord.core.events import XwfStart

    ev = XwfStart(xwf_id="x", ts=1, restart_count=0, reason=None)
    with pytest.raises(AttributeError, match="frozen"):
        ev.ts = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        ev.__dict__  # noqa: B018 - slotted: no instance dict


def test_an_event_has_fields_only_no_wire_key_view():
    """No ``attrs`` dict or ``get("job.id")``: a consumer reads ``job_id`` (a typo fails),
    the encoders ``wire_items()``."""
    from monitord.core.events import JobInstTag

    ev = JobInstTag(xwf_id="x", job_id="j", job_inst_id=1, count=2, name_="t")
    assert not hasattr(ev, "attrs") and not hasattr(ev, "get")
    assert ev.job_id == "j" and ("job.id", "j") in ev.wire_items()


def test_a_misspelt_or_missing_field_fails_at_construction():
    from monitord.core.events import XwfStart

    with pytest.raises(TypeError, match="restart_cout"):
        XwfStart(xwf_id="x", ts=1, restart_count=0, restart_cout=0)
    with pytest.raises(TypeError, match="restart_count"):
        XwfStart(xwf_id="x", ts=1)  # type: ignore[call-arg]
    with pytest.raises(ImportError):
        from monitord.core.events import XwfStrat  # noqa: F401


def test_keyword_events_go_on_the_wire_in_catalogue_order_then_fixed_then_extra():
    from monitord.core.events import UNSET, Fixed, JobInstSubmitStart, TaskInfo

    fixed = Fixed(xwf_id="x", root_xwf_id="r", dax="d.yml", wf_user="u")
    ev = JobInstSubmitStart(
        site="s", ts=1, job_inst_id=1, job_id="j", js_id=1, xwf_id="x", reason=None, fixed=fixed
    )
    assert [k for k, _ in ev.wire_items()] == [
        "xwf.id", "job.id", "job_inst.id", "ts", "js.id", "reason", "site",
        "root.xwf.id", "dax", "wf.user",
    ]  # fmt: skip
    assert ev.root_xwf_id == "r" and ev.dag is UNSET  # the fixed fields, through ``fixed``
    relay = TaskInfo(xwf_id="x", task_id="t", extra={"planner.key": "v"}, fixed=fixed)
    assert [k for k, _ in relay.wire_items()][-1] == "planner.key" and relay.extra == {
        "planner.key": "v"
    }


def test_of_builds_what_the_keyword_constructor_builds_for_every_kind():
    """The positional ``of`` of the hot producers takes every attribute in catalogue order:
    the same event, attribute for attribute and in the same wire order, as by keyword."""
    from monitord.core.events import EVENT_CLASSES, UNSET, Fixed

    fixed = Fixed(xwf_id="x", root_xwf_id="r")
    for name, cls in EVENT_CLASSES.items():
        required = {cls.by_wire[k] for k in cls.required}
        # distinct values, every other optional one left unset
        values = [
            f"v{i}" if i % 2 == 0 or f in required else UNSET for i, f in enumerate(cls.fields)
        ]
        extra = {"k.x": 1} if cls.spec is not None and cls.spec.open else {}
        by_kw = cls(**dict(zip(cls.fields, values, strict=True)), fixed=fixed, extra=extra)  # type: ignore[arg-type]
        by_pos = cls.of(*values, fixed, extra)  # type: ignore[attr-defined]
        assert type(by_pos) is cls, name
        assert by_pos.wire_items() == by_kw.wire_items(), name
        assert [getattr(by_pos, f) for f in cls.fields] == values, name
        assert (by_pos.fixed, by_pos.extra) == (by_kw.fixed, by_kw.extra), name


def test_sent_last_moves_own_fields_after_the_other_own_ones_before_the_fixed():
    from monitord.core.events import Fixed, InvEnd

    fixed = Fixed(xwf_id="x", root_xwf_id="r")
    ev = InvEnd(
        xwf_id="x", job_id="j", job_inst_id=1, inv_id=-1, ts=5, exitcode="0", argv="a",
        level="Info", fixed=fixed,
    )  # fmt: skip
    assert [k for k, _ in ev.sent_last("level", "ts").wire_items()] == [
        "xwf.id", "job.id", "job_inst.id", "inv.id", "exitcode", "argv", "level", "ts",
        "root.xwf.id",
    ]  # fmt: skip
    with pytest.raises(KeyError):
        ev.sent_last("no_such_field")


def test_relayed_and_decoded_events_keep_their_order_and_survive_pickling():
    import pickle

    attrs = {"ts": 5, "task.id": "t", "zz": 1, "xwf.id": "x", "root.xwf.id": "r"}
    ev = make_event("task.info", dict(attrs))
    assert (
        [k for k, _ in ev.wire_items()] == list(attrs)
        and ev.task_id == "t"
        and ev.extra == {"zz": 1}
    )
    back = pickle.loads(pickle.dumps(ev))
    assert (
        back == ev and [k for k, _ in back.wire_items()] == list(attrs) and back.root_xwf_id == "r"
    )


def test_a_relay_merges_the_workflows_fixed_attributes_in_the_order_of_dict_update():
    """make_event with a Fixed (a static.bp relay): a fixed kind's own keys checked before
    the fixed ones are merged in give the same event as checking the merged dict."""
    from monitord.core.events import Fixed, MissingAttribute

    fixed = Fixed(xwf_id="x", root_xwf_id="r", dax="d")
    usual = make_event("task.info", {"ts": 5, "xwf.id": "y", "task.id": "t"}, fixed)
    assert [k for k, _ in usual.wire_items()] == ["ts", "xwf.id", "task.id", "root.xwf.id", "dax"]
    assert (usual.xwf_id, usual.fixed, usual.extra) == ("x", fixed, {})
    odd = make_event("task.info", {"ts": 5, "task.id": "t", "zz": 1, "dax": "e"}, fixed)
    assert (odd.xwf_id, odd.fixed, odd.extra) == ("x", fixed, {"zz": 1})
    assert odd.wire_items() == [
        ("ts", 5), ("task.id", "t"), ("zz", 1), ("dax", "d"), ("xwf.id", "x"), ("root.xwf.id", "r"),
    ]  # fmt: skip
    with pytest.raises(MissingAttribute):
        make_event("task.info", {"ts": 5}, fixed)  # xwf.id comes from fixed, task.id from none
    subwf = {"xwf.id": "y", "subwf.id": "s", "job.id": "j", "job_inst.id": 1}
    plain = make_event("xwf.map.subwf_job", subwf, fixed)
    assert plain.fixed is None and plain.xwf_id == "x"
    assert dict(plain.extra) == {"root.xwf.id": "r", "dax": "d"}  # not a fixed kind: extra
