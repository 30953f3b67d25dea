"""The typed event model: one class per Stampede event kind, mandatory attributes checked."""

from __future__ import annotations

import glob

import pytest

from monitord.core.events import EVENT_CLASSES, GenericEvent, MissingAttribute, make_event
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
