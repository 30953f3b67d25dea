"""Typed Stampede events: one small class per event kind of the catalogue.

An event is its kind (the class, whose ``name`` is the event name without the
``stampede.`` prefix) plus an insertion-ordered mapping of wire attributes
(dotted keys such as ``xwf.id``, ``job_inst.id``).  Order matters: the BP and
JSON encodings print attributes in the order they were set, exactly as the
reference does, so the state machine builds ``attrs`` in reference order.

``ts`` and ``level`` live inside ``attrs`` like any other attribute; the
encoders know where each one goes on the wire.  Construction checks that the
mandatory attributes of the kind are present (a missing one is a bug in the
producer, so it raises), nothing more: the hot path builds millions of these.
"""

from __future__ import annotations

from typing import Any, ClassVar

from monitord.core.catalogue import CATALOGUE, PREFIX, EventSpec


class MissingAttribute(ValueError):
    """A producer built an event without one of its mandatory attributes."""


class StampedeEvent:
    """Base class; each kind's subclass carries its ``name``, ``required`` and catalogue ``spec``."""

    __slots__ = ("attrs",)
    name: ClassVar[str] = ""
    required: ClassVar[tuple[str, ...]] = ()
    spec: ClassVar[EventSpec | None] = None

    def __init__(self, attrs: dict[str, Any]) -> None:
        for key in self.required:
            if key not in attrs:
                raise MissingAttribute(f"{self.name}: missing mandatory attribute {key!r}")
        self.attrs = attrs

    @property
    def wire_name(self) -> str:
        return PREFIX + self.name

    @property
    def ts(self) -> Any:
        return self.attrs.get("ts")

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.attrs!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StampedeEvent)
            and other.name == self.name
            and other.attrs == self.attrs
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as (name, attrs): the classes are built at import, not module globals."""
        return make_event, (self.name, self.attrs)


class GenericEvent(StampedeEvent):
    """An event kind the catalogue does not know (relayed verbatim from static.bp)."""

    __slots__ = ("_name",)

    def __init__(self, name: str, attrs: dict[str, Any]) -> None:
        self._name = name
        self.attrs = attrs

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        return self._name


def _class_name(name: str) -> str:
    """``job_inst.main.end`` -> ``JobInstMainEnd`` (for reprs and tracebacks)."""
    return "".join(part.capitalize() for part in name.replace("_", ".").split("."))


def _event_class(spec: EventSpec) -> type[StampedeEvent]:
    attrs = {"__slots__": (), "name": spec.name, "required": spec.required, "spec": spec}
    return type(_class_name(spec.name), (StampedeEvent,), attrs)


#: One class per kind of the catalogue (core/catalogue.py), built from its entry.
EVENT_CLASSES: dict[str, type[StampedeEvent]] = {
    spec.name: _event_class(spec) for spec in CATALOGUE
}


def make_event(name: str, attrs: dict[str, Any]) -> StampedeEvent:
    """Build the typed event for ``name`` (without prefix); unknown kinds stay generic."""
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        return GenericEvent(name, attrs)
    return cls(attrs)
