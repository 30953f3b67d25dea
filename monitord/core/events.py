"""Typed Stampede events: one frozen, slotted class per event kind of the catalogue.

Each kind's class is generated from its catalogue entry (``core/catalogue.py``): its
fields are the kind's attributes under their Python names (``xwf.id`` -> ``xwf_id``,
``job_inst.id`` -> ``job_inst_id``; :func:`monitord.core.catalogue.field_name`), and
its constructor takes them by keyword, the mandatory ones without a default.  So a
misspelt kind fails at import (``from monitord.core.events import JobInstMainEnd``)
and a misspelt field or a missing mandatory one at construction, not in a sink.

An absent optional attribute is :data:`UNSET`, distinct from ``None`` (the reference
sends ``reason=None``; an unset ``sched.id`` is not sent at all).  Kinds carrying the
workflow's fixed attributes (doc §5.1) hold them as one shared :class:`Fixed` in
``fixed``; ``open`` kinds keep attributes beyond their list in ``extra`` (wire keys).

The wire names and keys appear only here, in the catalogue and in the encoders: an
event's attributes in wire order are :meth:`StampedeEvent.wire_items` (own attributes
in catalogue order, then the fixed ones, then ``extra``; an event decoded or relayed
from a file by :func:`make_event` keeps the order it came in).  Consumers read fields;
only the encoders, the spool codec and the plugin adapter (which hands a plugin its ``kw``
dict, built once per event and plugin) read wire keys, through ``wire_items``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from monitord.core.catalogue import CATALOGUE, FIXED, PREFIX, Attr, EventSpec
from monitord.core.eventbase import (
    EMPTY,
    UNSET,
    Fixed,
    GenericEvent,
    MissingAttribute,
    StampedeEvent,
)

__all__ = [
    "EMPTY",
    "EVENT_CLASSES",
    "PREFIX",
    "UNSET",
    "Fixed",
    "GenericEvent",
    "MissingAttribute",
    "StampedeEvent",
    "class_name",
    "make_event",
]


_FIXED_FIELDS: dict[str, str] = {a.name: a.field for a in FIXED}


def class_name(name: str) -> str:
    """``job_inst.main.end`` -> ``JobInstMainEnd``: the kind's class in this module."""
    return "".join(part.capitalize() for part in name.replace("_", ".").split("."))


def _init_source(spec: EventSpec) -> str:
    """The constructor: every attribute by keyword, mandatory ones without a default.  It
    stores through the slots' own descriptors (``set_<field>``): three times faster than
    ``object.__setattr__``, which a frozen class would otherwise need for each field."""
    params = [a.field if a.required else f"{a.field}=UNSET" for a in spec.own]
    params += ["fixed=None", "extra=EMPTY"]
    body = [f"    set_{a.field}(self, {a.field})" for a in spec.own]
    body += [
        "    set__fixed(self, fixed)",
        "    set__extra(self, extra)",
        "    set___wire(self, None)",
    ]
    return f"def __init__(self, *, {', '.join(params)}):\n" + "\n".join(body) + "\n"


def _items_source(spec: EventSpec) -> str:
    """``wire_items``: own attributes in catalogue order, the fixed ones, then ``extra``
    (or where the catalogue's ``@fixed`` / ``@extra`` put those two groups)."""
    lines = [
        "def wire_items(self):",
        "    wire = self._wire",
        "    if wire is not None:",
        "        return list(wire.items())",
        "    out = []",
        "    add = out.append",
    ]
    own = {a.name for a in spec.own}
    fixed_group = ["    fx = self.fixed", "    if fx is not None:"]
    for fx in FIXED:
        # An attribute both own and fixed is sent once, where the kind puts it.
        guard = f"self.{fx.field} is UNSET and " if fx.name in own else ""
        fixed_group += [
            f"        v = fx.{fx.field}",
            f"        if {guard}v is not UNSET: add(({fx.name!r}, v))",
        ]
    extra_group = ["    if self.extra:", "        out.extend(self.extra.items())"]
    end = len(spec.own)
    fixed_at = end if spec.fixed_at is None else spec.fixed_at
    extra_at = end if spec.extra_at is None else spec.extra_at
    own_or_end: list[Attr | None] = [*spec.own, None]
    for i, attr in enumerate(own_or_end):
        if i == fixed_at and spec.fixed:
            lines += fixed_group
        if i == extra_at:
            lines += extra_group
        if attr is not None:
            lines += [
                f"    v = self.{attr.field}",
                f"    if v is not UNSET: add(({attr.name!r}, v))",
            ]
    lines += ["    return out"]
    return "\n".join(lines) + "\n"


def _event_class(spec: EventSpec) -> type[StampedeEvent]:
    scope: dict[str, Any] = {"UNSET": UNSET, "EMPTY": EMPTY}
    exec(_items_source(spec), scope)  # noqa: S102 - generated from the catalogue, not input
    namespace = {
        "__slots__": tuple(a.field for a in spec.own),
        "wire_items": scope["wire_items"],
        "name": spec.name,
        "spec": spec,
        "required": spec.required,
        "fields": tuple(a.field for a in spec.own),
        "by_wire": MappingProxyType({a.name: a.field for a in spec.own}),
        "__module__": __name__,
    }
    if spec.fixed:
        own = {a.name for a in spec.own}
        for a in FIXED:
            if a.name not in own:
                namespace[a.field] = _fixed_property(a.field)
    cls = type(class_name(spec.name), (StampedeEvent,), namespace)
    setters = {f"set_{a.field}": getattr(cls, a.field).__set__ for a in spec.own}
    base = StampedeEvent.__dict__
    setters.update({"set__" + slot: base[slot].__set__ for slot in ("fixed", "extra", "_wire")})
    scope.update(setters)
    exec(_init_source(spec), scope)  # noqa: S102
    cls.__init__ = scope["__init__"]  # type: ignore[misc]
    return cls


def _fixed_property(field: str) -> property:
    def get(self: StampedeEvent) -> Any:
        fx = self.fixed
        return UNSET if fx is None else getattr(fx, field)

    return property(get, doc=f"the workflow's fixed attribute {field}")


#: One class per kind of the catalogue (core/catalogue.py), built from its entry.
EVENT_CLASSES: dict[str, type[StampedeEvent]] = {
    spec.name: _event_class(spec) for spec in CATALOGUE
}
globals().update({cls.__name__: cls for cls in EVENT_CLASSES.values()})

if TYPE_CHECKING:  # the generated classes (JobInstMainEnd, ...) are module attributes

    def __getattr__(name: str) -> Any: ...


def make_event(name: str, attrs: dict[str, Any], fixed: Fixed | None = None) -> StampedeEvent:
    """The typed event of kind ``name`` (without prefix) from wire attributes, keeping their
    order: for decoders and relays (static.bp, a spool, JSON).  ``fixed``: the workflow's
    fixed attributes, merged as ``dict.update`` does (a relay's own ``xwf.id`` keeps its
    place).  Unknown kinds stay generic; a missing mandatory attribute raises
    :class:`MissingAttribute`."""
    if fixed is not None:
        attrs.update(fixed.wire_items())  # then read back as the shared ``fixed`` below
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        return GenericEvent(name, attrs)
    for key in cls.required:
        if key not in attrs:
            raise MissingAttribute(f"{name}: missing mandatory attribute {key!r}")
    by_wire = cls.by_wire
    fixed_kind = cls.spec is not None and cls.spec.fixed
    kw: dict[str, Any] = {}
    fixed_kw: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    for key, value in attrs.items():
        field = by_wire.get(key)
        if field is not None:
            kw[field] = value
        elif fixed_kind and key in _FIXED_FIELDS:
            if fixed is not None:
                continue
            if fixed_kw is None:
                fixed_kw = {}
            fixed_kw[_FIXED_FIELDS[key]] = value
        else:
            if extra is None:
                extra = {}
            extra[key] = value
    if fixed is None and fixed_kw is not None:
        fixed = Fixed(**fixed_kw)
    event = cls(**kw, fixed=fixed if fixed_kind else None, extra=extra or EMPTY)  # type: ignore[call-arg]
    object.__setattr__(event, "_wire", attrs)
    return event
