"""A batch of typed events to bytes and back, for a sink run in a child process.

The cheapest crossing measured (bench/README.md, "Issue 30, fourth session: proc27"): each
event becomes a plain tuple, ``(kind's index, its fields' values, its Fixed, extra)``, and the
batch one ``pickle`` of those tuples (C-fast: no per-event Python call but a C ``attrgetter``;
the workflow's :class:`Fixed`, shared by the batch's events, is pickled once).  The child
rebuilds each event as the same class, slot by slot (``slot_setters``), without
``from_wire``'s checks: they held when the parent built it.  An event that keeps its wire order
(built from wire attributes: a relayed static.bp line) or whose kind the catalogue does not
know crosses as ``(-1, name, attrs)`` and is rebuilt by :func:`make_event`, keeping that order.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from monitord.core import event_classes
from monitord.core.eventbase import EMPTY, StampedeEvent, slot_setters
from monitord.core.events import make_event

_KINDS: tuple[type[StampedeEvent], ...] = tuple(
    cls
    for name in event_classes.__all__
    if isinstance(cls := getattr(event_classes, name), type)
    and issubclass(cls, StampedeEvent)
    and cls.name
)
_INDEX: dict[type[StampedeEvent], int] = {cls: i for i, cls in enumerate(_KINDS)}


def _values_of(cls: type[StampedeEvent]) -> Callable[[Any], tuple[Any, ...]]:
    get = attrgetter(*cls.fields)
    if len(cls.fields) == 1:
        return lambda event: (get(event),)
    return get  # type: ignore[return-value]


_VALUES = tuple(_values_of(cls) for cls in _KINDS)
_SETTERS = tuple(slot_setters(cls) for cls in _KINDS)
for _cls in _KINDS:  # each class's own slots are its fields, in order (what _SETTERS fill)
    assert tuple(_cls.__dict__["__slots__"]) == _cls.fields, _cls
_set_fixed, _set_extra, _set_wire = (
    StampedeEvent.__dict__[slot].__set__ for slot in ("fixed", "extra", "_wire")
)
_new = object.__new__
_GENERIC = -1


def encode_events(events: Sequence[StampedeEvent]) -> bytes:
    index, values = _INDEX.get, _VALUES
    items: list[tuple[Any, ...]] = []
    add = items.append
    for event in events:
        i = index(type(event))  # type: ignore[arg-type]
        if i is None or event._wire is not None:
            add((_GENERIC, event.name, dict(event.wire_items())))
        else:
            add((i, values[i](event), event.fixed, event.extra or None))
    return pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)


def decode_events(data: bytes) -> list[StampedeEvent]:
    kinds, setters = _KINDS, _SETTERS
    out: list[StampedeEvent] = []
    add = out.append
    for item in pickle.loads(data):
        i = item[0]
        if i == _GENERIC:
            add(make_event(item[1], item[2]))
            continue
        event = _new(kinds[i])
        for set_, value in zip(setters[i], item[1], strict=True):
            set_(event, value)
        _set_fixed(event, item[2])
        _set_extra(event, item[3] or EMPTY)
        _set_wire(event, None)
        add(event)
    return out
