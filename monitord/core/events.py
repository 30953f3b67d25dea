"""Typed Stampede events: one frozen, slotted class per event kind of the catalogue.

Each kind's class is generated from its catalogue entry (``core/catalogue.py``) into
``core/event_classes.py`` by ``python -m monitord.core.eventgen`` (a test fails when that
file is stale): its fields are the kind's attributes under their Python names
(``xwf.id`` -> ``xwf_id``, ``job_inst.id`` -> ``job_inst_id``;
:func:`monitord.core.catalogue.field_name`), typed as the catalogue types them, and its
constructor takes them by keyword, the mandatory ones without a default.  So a misspelt
kind fails at import (``from monitord.core.events import JobInstMainEnd``) and a misspelt
field or keyword in mypy, or at construction, not in a sink.  The daemon's hot producers
use each class's ``of`` instead: every attribute positionally, in catalogue order.

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

from collections.abc import Callable
from functools import partial
from typing import Any

from monitord.core import event_classes
from monitord.core.catalogue import PREFIX
from monitord.core.event_classes import *  # noqa: F403 - every kind's class, by name
from monitord.core.event_classes import CLASSES
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
    "make_event",
    "relay_builder",
]
__all__ += event_classes.__all__

#: One class per kind of the catalogue (core/catalogue.py), by kind name.
EVENT_CLASSES: dict[str, type[StampedeEvent]] = {cls.name: cls for cls in CLASSES}


def make_event(name: str, attrs: dict[str, Any], fixed: Fixed | None = None) -> StampedeEvent:
    """The typed event of kind ``name`` (without prefix) from wire attributes, keeping their
    order: for decoders and relays (static.bp, a spool, JSON).  ``fixed``: the workflow's
    fixed attributes, merged as ``dict.update`` does (a relay's own ``xwf.id`` keeps its
    place).  Unknown kinds stay generic; a missing mandatory attribute raises
    :class:`MissingAttribute`."""
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        if fixed is not None:
            attrs.update(fixed.wire_items())
        return GenericEvent(name, attrs)
    return cls.from_wire(attrs, fixed)


def relay_builder(name: str, fixed: Fixed | None) -> Callable[[dict[str, Any]], StampedeEvent]:
    """:func:`make_event` for one kind and one workflow's ``fixed``, looked up once: a relay
    of many lines of a few kinds (a static.bp's ~120,000 at 20,000 jobs) calls the kind's
    ``from_wire`` directly, the same event."""
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        return partial(make_event, name, fixed=fixed)
    return partial(cls.from_wire, fixed=fixed)
