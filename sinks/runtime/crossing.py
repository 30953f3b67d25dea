"""A batch of typed events to bytes and back, for a sink run in a child process.

The cheapest crossing measured (bench/README.md, "Issue 30, fourth session: proc27", and
"eleventh session: child30h"): one ``pickle`` of a flat list, per event its kind's index and
one tuple of its fields' values and its :class:`Fixed` (C-fast: one C ``attrgetter`` call per
event, no tuple around it; the workflow's ``Fixed``, shared by the batch's events, is pickled
once).  The child rebuilds each event as the same class, slot by slot (``slot_setters``, a
function per kind), without ``from_wire``'s checks: they held when the parent built it.  With
``wire`` (a sink that reads the wire order) two more items per event follow: its extra
attributes and, for an event that keeps its wire order (built from wire attributes: a relayed
static.bp line), that dict.  An event whose kind the catalogue does not know crosses as
``-1, (name, attrs)``, rebuilt by :func:`make_event`.

A sink that declares what it reads (:class:`~sinks.runtime.capabilities.Reads`) is sent that
only (:func:`kept`, ``encode_events(wire=False)``): not the events it writes nothing for, and
without their wire order and extra attributes when it reads fields only (the SQL loader).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from monitord.core import event_classes
from monitord.core.eventbase import EMPTY, StampedeEvent, slot_setters
from monitord.core.events import make_event
from monitord.core.generated import make_function
from monitord.system.collector import Paused
from sinks.runtime.capabilities import Reads
from sinks.runtime.views import VIEWS

_KINDS: tuple[type[StampedeEvent], ...] = tuple(
    cls
    for name in event_classes.__all__
    if isinstance(cls := getattr(event_classes, name), type)
    and issubclass(cls, StampedeEvent)
    and cls.name
)
_INDEX: dict[type[StampedeEvent], int] = {cls: i for i, cls in enumerate(_KINDS)}


def _values_of(cls: type[StampedeEvent]) -> Callable[[Any], tuple[Any, ...]]:
    """The event's fields' values, then its ``fixed``: one tuple."""
    return attrgetter(*cls.fields, "fixed")


_set_fixed, _set_extra, _set_wire = (
    StampedeEvent.__dict__[slot].__set__ for slot in ("fixed", "extra", "_wire")
)


def _builder(cls: type[StampedeEvent]) -> Callable[..., StampedeEvent]:
    """``build(values, extra, wire)``: the event, its slots set one call each (a function
    written for the kind: 2.5 -> 2.0 µs an event against a loop over its setters);
    ``values`` ends with its ``fixed``."""
    assert tuple(cls.__dict__["__slots__"]) == cls.fields, cls  # its own slots: its fields
    n = len(cls.fields)
    setters = {f"_s{i}": setter for i, setter in enumerate(slot_setters(cls))}
    lines = [
        "e = _new(cls)",
        f"{''.join(f'_{i}, ' for i in range(n))}fixed = v",
        *(f"_s{i}(e, _{i})" for i in range(n)),
        "_sf(e, fixed)",
        "_se(e, extra or EMPTY)",
        "_sw(e, wire)",
        "return e",
    ]
    scope: dict[str, Any] = {
        **setters,
        "_new": object.__new__,
        "cls": cls,
        "EMPTY": EMPTY,
        "_sf": _set_fixed,
        "_se": _set_extra,
        "_sw": _set_wire,
    }
    return make_function("build", ["v", "extra", "wire"], lines, scope)


_VALUES = tuple(_values_of(cls) for cls in _KINDS)
_BUILD = tuple(_builder(cls) for cls in _KINDS)
_VIEW = tuple(VIEWS[cls] for cls in _KINDS)
#: each view's width: a tuple takes values of any length, so a batch from other code (a
#: daemon and a child of two versions) would be read shifted, not refused
_WIDTH = tuple(len(cls.fields) + 1 for cls in _KINDS)  # its fields, then `fixed`
_GENERIC = -1


def kept(events: Sequence[StampedeEvent], reads: Reads | None) -> Sequence[StampedeEvent]:
    """The events of kinds the sink reads (``reads``; None: all), in their order."""
    if reads is None:
        return events
    kinds = reads.kinds
    return [event for event in events if type(event) in kinds]


def encode_events(events: Sequence[StampedeEvent], *, wire: bool = True) -> bytes:
    """The batch as bytes; ``wire=False``: without each event's wire order and extra
    attributes (they come back as none: ``_wire`` None, ``extra`` empty)."""
    index, values = _INDEX.get, _VALUES
    items: list[Any] = []
    add = items.append
    for event in events:
        i = index(type(event))  # type: ignore[arg-type]
        if i is None:
            add(_GENERIC)
            add((event.name, dict(event.wire_items())))
            if wire:
                add(None)
                add(None)
        else:
            add(i)
            add(values[i](event))
            if wire:
                add(event.extra or None)
                add(event._wire)
    return pickle.dumps((wire, items), protocol=pickle.HIGHEST_PROTOCOL)


def decode_events(data: bytes) -> list[StampedeEvent]:
    """The batch's events; the cyclic collector paused meanwhile: the unpickled tuples and
    dicts and the events are new containers by the thousand, none of them garbage, and each
    700 of them set off a collection that walks the young ones again (4.5 -> 2.3 µs an event,
    bench/README.md "Issue 30, ninth session: cpu30f")."""
    build = _BUILD
    out: list[StampedeEvent] = []
    add = out.append
    with Paused():
        wire, items = pickle.loads(data)
        each = iter(items)
        if wire:
            for i, values, extra, attrs in zip(each, each, each, each, strict=True):
                if i == _GENERIC:
                    add(make_event(*values))  # (name, attrs), None, None
                else:
                    add(build[i](values, extra, attrs))
        else:
            for i, values in zip(each, each, strict=True):
                if i == _GENERIC:
                    add(make_event(*values))
                else:
                    add(build[i](values, None, None))
    return out


def decode_views(data: bytes) -> list[Any]:
    """The batch's events as views of their values (:mod:`sinks.runtime.views`), for a sink
    that reads their fields only: no event built (~1 µs an event); an event of a kind the
    catalogue does not know is built as :func:`decode_events` builds it, and so is a batch
    sent with its wire order (a sink that reads it is sent the events)."""
    with Paused():
        wire, items = pickle.loads(data)
        if wire:
            return decode_events(data)
        new, views, width = tuple.__new__, _VIEW, _WIDTH
        out: list[Any] = []
        add = out.append
        each = iter(items)
        for i, values in zip(each, each, strict=True):
            if i == _GENERIC:
                add(make_event(*values))
            elif len(values) == width[i]:
                add(new(views[i], values))
            else:
                raise ValueError(
                    f"{len(values)} values for a {_KINDS[i].name} event, not {width[i]}: "
                    "the daemon and its child run different versions"
                )
    return out
