"""The catalogue of Stampede events: one entry per event kind, as data.

Everything that needs to know the event kinds derives from this table: the event
classes (``core/events.py``), the AMQP list of known events and its default filter
(``sinks/amqp/event_filter.py``), the JSON key spelling in both directions
(``sinks/encoding.py``: encode, and an exact, typed decode for an AMQP ingest) and the
SQL loader's dispatch (``sinks/sql/loader.py``).  A new event kind is one entry here
plus, if it writes rows, its loader function.

An entry's attributes are written ``name:TYPES`` with one letter per accepted value
type (``s`` str, ``i`` int, ``f`` float, ``b`` bool, ``n`` None, ``l`` list, ``d``
dict, ``v`` any JSON scalar) and a trailing ``!`` for a mandatory attribute (the
event cannot be built without it).  Attribute names are the reference's wire names,
in the reference's order.  Types are what monitord and the reference emit (doc §5).

``open`` kinds may carry attributes beyond their list: static.bp relays (the planner
may write any key), ``job_inst.composite`` (``metadata.<name>``, multipart keys) and
``task.monitoring`` (the payload's own keys).  Their extra keys are not type-checked
and decode from JSON under their wire spelling (no database column reads them).

On the wire an event's attributes come in the order of its list, then the fixed ones,
then an open kind's extra keys; ``@fixed`` and ``@extra`` in a list put those groups
where the reference does (``job_inst.composite``: ``main.end``'s attributes, the fixed
ones, its own, the extra keys, then ``invocations app wf``).
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PREFIX = "stampede."

_TYPES: dict[str, tuple[type, ...]] = {
    "s": (str,),
    "i": (int,),
    "f": (float,),
    "b": (bool,),
    "n": (type(None),),
    "l": (list,),
    "d": (dict,),
    "v": (str, int, float, bool, type(None)),
}

#: The loader key of kinds that write no row (their ``loader``).
NO_ROWS = ""


@dataclass(frozen=True, slots=True)
class Attr:
    """One attribute of an event kind: wire name, accepted value types, mandatory or not."""

    name: str
    types: tuple[type, ...]
    required: bool = False

    @property
    def json_key(self) -> str:
        return json_key(self.name)

    @property
    def field(self) -> str:
        return field_name(self.name)


@dataclass(frozen=True)
class EventSpec:
    """One event kind.

    ``loader``: the name of the SQL loader's function for this kind (``_<loader>`` of
    ``BatchLoader``), or :data:`NO_ROWS`.  ``amqp_default``: published by an AMQP endpoint
    without an ``events`` property.  ``amqp_listed``: in the reference's fixed list that an
    ``events`` pattern is matched against (``*`` selects unlisted kinds too).  ``fixed``:
    carries the workflow's fixed attributes (doc §5.1).  ``dashboard``: the dashboard database
    (``~/.pegasus/workflow.db``) gets the root workflow's events of this kind (doc §7.5).
    """

    name: str
    own: tuple[Attr, ...]
    loader: str
    amqp_default: bool = False
    amqp_listed: bool = True
    dashboard: bool = False
    fixed: bool = True
    open: bool = False
    #: Where the fixed attributes and an open kind's extra keys go on the wire: before the
    #: own attribute of that index (``None``: after all of them).
    fixed_at: int | None = None
    extra_at: int | None = None
    attrs: Mapping[str, Attr] = field(init=False, repr=False, compare=False)
    required: tuple[str, ...] = field(init=False, repr=False, compare=False)
    from_json: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        attrs = {a.name: a for a in self.own}
        if self.fixed:
            for a in FIXED:
                attrs.setdefault(a.name, a)
        set_ = object.__setattr__
        set_(self, "attrs", attrs)
        set_(self, "required", tuple(a.name for a in self.own if a.required))
        set_(self, "from_json", {a.json_key: a.name for a in attrs.values()})

    @property
    def wire_name(self) -> str:
        return PREFIX + self.name


def json_key(name: str) -> str:
    """An attribute's JSON key: ``__`` and ``.`` become ``_`` (doc §6.2)."""
    return name.replace("__", "_").replace(".", "_")


#: Names an event class uses itself; an attribute spelt so gets a trailing ``_`` as its field
#: (``job_inst.tag``'s ``name`` is the field ``name_``).
RESERVED = frozenset(
    {"name", "spec", "fields", "required", "attrs", "extra", "fixed", "get", "wire_name"}
)


def field_name(name: str) -> str:
    """An attribute's Python field on its event class: its JSON key (``job_inst.id`` ->
    ``job_inst_id``), with a trailing ``_`` when that is a keyword or reserved."""
    key = json_key(name)
    if key in RESERVED or keyword.iskeyword(key):
        key += "_"
    if not key.isidentifier():
        raise ValueError(f"attribute {name!r} has no Python field name")
    return key


def _attrs(text: str) -> tuple[Attr, ...]:
    out = []
    for item in text.split():
        name, _, letters = item.partition(":")
        required = letters.endswith("!")
        letters = letters.rstrip("!")
        types = tuple(dict.fromkeys(t for letter in letters for t in _TYPES[letter]))
        out.append(Attr(name, types, required))
    return tuple(out)


# Attribute groups shared by many kinds (doc §5.1, §5.3).
FIXED = _attrs(
    "xwf.id:s! root.xwf.id:sn dax:v dag:v wf.ts:in submit.dir:v pegasus.version:v "
    "submit.hostname:v wf.user:v"
)
_XWF = "xwf.id:s!"
_JOB = "xwf.id:s! job.id:s! job_inst.id:i!"
_STATE = _JOB + " ts:i! js.id:i!"
_BRIEF = _STATE + " reason:sn sched.id:s"
_STATUS = " status:i! level:s"
_STATIC_TS = " ts:is"  # static.bp relays: epoch, or the text when it is no ISO stamp
_MAIN_END = (
    _STATE + " site:s user:v local.dur:i stdin_file:s multiplier_factor:s exitcode:s "
    "sched.id:s" + _STATUS + " work_dir:sn cluster.start:i cluster.dur:sif stdout.file:s "
    "stderr.file:s stdout.text:s stderr.text:s"
)
# Kickstart's machine record as YAML typed it (a release "6.1" is a float), and the submit
# file's request_* classad text.
_MACHINE = (
    " cpu_count:ifs cpu_speed:ifs cpu_vendor:sif cpu_model:sif ram:ifs system:sif release:sif"
    " machine:sif req_cpus:s req_gpus:s req_memory_mb:s req_diskspace_mb:s"
)


def _e(name: str, attrs: str, loader: str, **flags: Any) -> EventSpec:
    words = attrs.split()
    for marker in ("@fixed", "@extra"):
        if marker in words:
            flags[marker[1:] + "_at"] = words.index(marker)
            words.remove(marker)
    return EventSpec(name, _attrs(" ".join(words)), loader, **flags)


#: Every event kind, in the order of the reference's list of known events (doc §6.5).
CATALOGUE: tuple[EventSpec, ...] = (
    _e(
        "wf.plan",
        _XWF + " dax.label:v dax.version:v dax.index:v dax.file:v dag.file.name:v ts:in "
        "submit.hostname:v submit.dir:v argv:v user:v grid_dn:v planner.version:v "
        "parent.xwf.id:s root.xwf.id:sn db_url:s",
        "wf_plan",
        amqp_default=True,
        dashboard=True,
    ),
    _e("wf.map.task_job", _XWF + " job.id:s! task.id:s!" + _STATIC_TS, "map_task_job", open=True),
    _e("static.start", _XWF, NO_ROWS),
    _e("static.end", _XWF, NO_ROWS),
    _e("xwf.start", _XWF + " ts:if! reason:sn restart_count:i!", "wf_state", dashboard=True),
    _e(
        "xwf.end",
        _XWF + " ts:if! reason:sn restart_count:i! status:i! level:s",
        "wf_state",
        dashboard=True,
    ),
    _e(
        "xwf.map.subwf_job",
        _XWF + " ts:in subwf.id:s! job.id:s! job_inst.id:i!",
        "map_subwf_job",
        fixed=False,
    ),
    _e(
        "task.info",
        _XWF + " task.id:s!" + _STATIC_TS + " type:s type_desc:s transformation:s argv:s",
        "task_info",
        open=True,
    ),
    _e(
        "task.edge",
        _XWF + " parent.task.id:s! child.task.id:s!" + _STATIC_TS,
        "task_edge",
        open=True,
    ),
    _e(
        "job.info",
        _XWF + " job.id:s!" + _STATIC_TS + " submit_file:s type:s type_desc:s clustered:s "
        "max_retries:s executable:s argv:s task_count:s",
        "job_info",
        open=True,
    ),
    _e(
        "job.edge",
        _XWF + " parent.job.id:s! child.job.id:s!" + _STATIC_TS,
        "job_edge",
        open=True,
    ),
    _e("job_inst.pre.start", _BRIEF, "instance_start"),
    _e("job_inst.pre.term", _BRIEF, "jobstate_only"),
    _e("job_inst.pre.end", _BRIEF + _STATUS + " exitcode:s", "jobstate_only"),
    _e("job_inst.submit.start", _BRIEF + " site:s", "instance_start"),
    _e("job_inst.submit.end", _BRIEF + _STATUS, "jobstate_only"),
    _e("job_inst.held.start", _BRIEF, "jobstate_only"),
    _e("job_inst.held.end", _BRIEF + _STATUS, "jobstate_only"),
    _e(
        "job_inst.main.start",
        _STATE + " stdin.file:s stdout.file:s stderr.file:s sched.id:s",
        "jobstate_only",
    ),
    _e("job_inst.main.term", _BRIEF + _STATUS, "jobstate_only"),
    _e("job_inst.main.end", _MAIN_END, "instance_end"),
    _e("job_inst.post.start", _BRIEF, "jobstate_only"),
    _e("job_inst.post.term", _BRIEF, "jobstate_only"),
    _e("job_inst.post.end", _BRIEF + _STATUS + " exitcode:s", "instance_end"),
    _e(
        "job_inst.host.info",
        _JOB + " hostname:s! ip:s! site:s! total_memory:ifs uname:s ts:if",
        "host_info",
    ),
    _e("job_inst.image.info", _BRIEF, "jobstate_only"),
    _e("job_inst.abort.info", _BRIEF, "jobstate_only"),
    # Not in the reference's list: an ``events`` pattern never selects it, ``*`` does.
    _e("job_inst.remote_error", _BRIEF, "jobstate_only", amqp_listed=False),
    _e("job_inst.grid.submit.start", _BRIEF, NO_ROWS),
    _e("job_inst.grid.submit.end", _BRIEF + _STATUS, "jobstate_only"),
    _e("job_inst.globus.submit.start", _BRIEF, NO_ROWS),
    _e("job_inst.globus.submit.end", _BRIEF + _STATUS, "jobstate_only"),
    _e("job_inst.tag", _JOB + " count:i! ts:if name:s!", "tag", amqp_default=True),
    _e(
        "job_inst.composite",
        _MAIN_END + " @fixed int_error_count:i hostname:s jobtype:s" + _MACHINE + " @extra "
        "invocations:l app:v wf:v",
        NO_ROWS,
        amqp_default=True,
        open=True,
    ),
    _e("inv.start", _JOB + " inv.id:i! ts:i", NO_ROWS),
    _e(
        "inv.end",
        _JOB + " inv.id:i! transformation:s task.id:s start_time:ifn dur:ifs "
        "remote_cpu_time:if avg_cpu:f maxrss:ifs ts:i exitcode:is! executable:s argv:s level:s",
        "inv_end",
        amqp_default=True,
    ),
    _e("static.meta.start", _XWF + _STATIC_TS, NO_ROWS, open=True),
    _e("xwf.meta", _XWF + " key:s! value:s!" + _STATIC_TS, "xwf_meta", open=True),
    _e("task.meta", _XWF + " task.id:s! key:s! value:s!" + _STATIC_TS, "task_meta", open=True),
    _e("rc.meta", _XWF + " lfn.id:s! ts:ifs key:s! value:s!", "rc_meta", open=True),
    _e(
        "int.metric",
        _JOB + " type:s! file_type:s! count:i! duration:ifs! ts:if",
        "int_metric",
    ),
    _e("rc.pfn", _XWF + " lfn.id:s! pfn:s! site:sn", "rc_pfn"),
    _e("wf.map.file", _XWF + " task.id:s! lfn.id:s!" + _STATIC_TS, "map_file", open=True),
    _e("static.meta.end", _XWF + _STATIC_TS, NO_ROWS, open=True),
    _e(
        "task.monitoring",
        _JOB + " sched.id:s monitoring_event:s! ts:v",
        NO_ROWS,
        open=True,
    ),
)

BY_NAME: dict[str, EventSpec] = {spec.name: spec for spec in CATALOGUE}
#: Full names (``stampede.<name>``) an AMQP ``events`` pattern is matched against.
AMQP_LISTED: tuple[str, ...] = tuple(s.wire_name for s in CATALOGUE if s.amqp_listed)
AMQP_DEFAULT: frozenset[str] = frozenset(s.wire_name for s in CATALOGUE if s.amqp_default)
DASHBOARD: frozenset[str] = frozenset(s.name for s in CATALOGUE if s.dashboard)


def spec_errors(catalogue: Iterable[EventSpec] = CATALOGUE) -> list[str]:
    """What makes a catalogue unusable: duplicate kinds, attributes whose JSON keys collide
    (the inverse mapping would be ambiguous), unknown type letters already fail at import."""
    errors = []
    seen: set[str] = set()
    for spec in catalogue:
        if spec.name in seen:
            errors.append(f"{spec.name}: listed twice")
        seen.add(spec.name)
        if len(spec.from_json) != len(spec.attrs):
            keys = [a.json_key for a in spec.attrs.values()]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            errors.append(f"{spec.name}: attributes share the JSON keys {twice}")
    return errors


def attr_errors(name: str, attrs: Mapping[str, Any]) -> list[str]:
    """Why ``attrs`` is not a valid ``name`` event: unknown kind or attribute, wrong value
    type, missing mandatory attribute.  Empty when valid.  Not on the hot path: for tests
    and for an ingest's validation of received events."""
    spec = BY_NAME.get(name)
    if spec is None:
        return [f"{name}: not in the catalogue"]
    errors = [f"{name}: missing mandatory {key!r}" for key in spec.required if key not in attrs]
    known = spec.attrs
    for key, value in attrs.items():
        attr = known.get(key)
        if attr is None:
            if not spec.open:
                errors.append(f"{name}: unknown attribute {key!r}")
        elif type(value) not in attr.types:
            want = "|".join(t.__name__ for t in attr.types)
            errors.append(f"{name}: {key!r} is {type(value).__name__} {value!r:.40}, not {want}")
    return errors
