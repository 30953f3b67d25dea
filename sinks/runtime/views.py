"""An event read through the crossing's flat values: a view, for a sink that reads fields only.

A ``--sql-process`` child rebuilt every event of a batch slot by slot (``crossing._builder``:
~1 µs an event, ~0.4 s of the child's CPU at 20,000 jobs) for a loader that reads its fields
by name and nothing else.  A view is the crossing's tuple itself (the kind's field values,
then its ``fixed``) as an instance of a tuple class per kind, one C call to make
(``tuple.__new__``), its fields read by position (``namedtuple``'s C accessors), with
everything else the event's class offers to read (its class attributes, its properties: the
workflow's fixed attributes) taken from that class unchanged.  A sink says it reads views
(:attr:`~sinks.runtime.capabilities.Reads.views`) and keys by :data:`VIEWS` what it keys by
event class; every other sink is sent the events as before.
"""

from __future__ import annotations

from collections import namedtuple
from types import FunctionType, MemberDescriptorType
from typing import Any

from monitord.core import event_classes
from monitord.core.eventbase import EMPTY, StampedeEvent

_METHODS = (FunctionType, classmethod, staticmethod)


def _readable(cls: type[StampedeEvent]) -> dict[str, Any]:
    """What an event of ``cls`` offers to read besides its own fields: its classes'
    attributes and properties (not their methods, not their slots), the nearest one winning; a
    view's ``extra`` and ``_wire`` are what a fields-only crossing leaves (none)."""
    out: dict[str, Any] = {"extra": EMPTY, "_wire": None}
    for klass in reversed(cls.__mro__[:-1]):  # object's aside
        for name, value in vars(klass).items():
            if name.startswith("__") or isinstance(value, (*_METHODS, MemberDescriptorType)):
                continue
            out[name] = value
    return out


def _not_here(view: Any) -> Any:
    raise AttributeError("not an attribute of the event")


#: A tuple's own public names (``count``, ``index``) and a namedtuple's: absent from a view
#: unless the event has them, so that ``getattr(view, name, default)`` is the event's.
_NOT_HERE = property(_not_here)
_TUPLE_NAMES = ("count", "index", "_make", "_asdict", "_replace", "_fields", "_field_defaults")


def view_class(cls: type[StampedeEvent]) -> type[tuple[Any, ...]]:
    """The view of ``cls``'s events: its fields then ``fixed``, by position."""
    base = namedtuple(cls.__name__, (*cls.fields, "fixed"))  # type: ignore[misc]
    attrs = {k: _NOT_HERE for k in _TUPLE_NAMES if k not in cls.fields}
    attrs |= {k: v for k, v in _readable(cls).items() if k not in cls.fields}
    return type(f"{cls.__name__}View", (base,), {"__slots__": (), **attrs})


#: Each typed kind's view class.
VIEWS: dict[type[StampedeEvent], type[tuple[Any, ...]]] = {
    cls: view_class(cls)
    for name in event_classes.__all__
    if isinstance(cls := getattr(event_classes, name), type)
    and issubclass(cls, StampedeEvent)
    and cls.name
}


def with_views(table: dict[Any, Any]) -> dict[Any, Any]:
    """``table`` keyed by event classes, and by their views too (the same values)."""
    return {**table, **{VIEWS[cls]: value for cls, value in table.items() if cls in VIEWS}}


def kinds(*classes: type[StampedeEvent]) -> frozenset[type]:
    """``classes`` and their views: a test of an event's kind that a view passes too."""
    return frozenset((*classes, *(VIEWS[cls] for cls in classes)))
