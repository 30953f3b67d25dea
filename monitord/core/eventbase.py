"""The base of the typed Stampede events: :class:`StampedeEvent`, :data:`UNSET`, :class:`Fixed`.

The per-kind classes are generated from the catalogue into ``core/event_classes.py``;
``core/events.py`` is what the rest of the code imports (the classes and :func:`make_event`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from monitord.core.catalogue import FIXED, PREFIX, EventSpec, field_name


class MissingAttribute(ValueError):
    """A producer built an event without one of its mandatory attributes."""


class _Unset:
    """The value of an attribute an event does not carry (never sent, unlike ``None``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNSET"  # pickled by name: the one instance survives a spool or snapshot


UNSET: Any = _Unset()
EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(self: object, name: str, value: Any = None) -> None:
    raise AttributeError(f"{type(self).__name__} is frozen: cannot set or delete {name!r}")


class Fixed:
    """The workflow's fixed attributes (doc §5.1), shared by every event it sends."""

    __slots__ = (*(a.field for a in FIXED), "items", "tail", "mapping")
    _wire: ClassVar[tuple[tuple[str, str], ...]] = tuple((a.field, a.name) for a in FIXED)
    #: The attributes set, as (wire key, value) in the catalogue's order; ``tail``: without
    #: ``xwf.id``, what follows a kind's own attributes on the wire (each has its own xwf.id);
    #: ``mapping``: ``items`` as a dict, what a relay's ``from_wire`` merges (a dict's
    #: ``update`` from a dict copies its entries, from pairs unpacks each one).
    items: tuple[tuple[str, Any], ...]
    tail: tuple[tuple[str, Any], ...]
    mapping: dict[str, Any]
    # The catalogue's FIXED, spelt out for mypy (tests/test_event_classes.py keeps them equal).
    xwf_id: str
    root_xwf_id: str | None
    dax: str | int | float | bool | None
    dag: str | int | float | bool | None
    wf_ts: int | None
    submit_dir: str | int | float | bool | None
    pegasus_version: str | int | float | bool | None
    submit_hostname: str | int | float | bool | None
    wf_user: str | int | float | bool | None

    def __init__(self, **values: Any) -> None:
        for attr, _ in self._wire:
            object.__setattr__(self, attr, values.pop(attr, UNSET))
        if values:
            raise TypeError(f"Fixed: unknown attributes {sorted(values)}")
        items = tuple(
            (key, v) for attr, key in self._wire if (v := getattr(self, attr)) is not UNSET
        )
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "mapping", dict(items))  # read only, never changed
        object.__setattr__(self, "tail", tuple(kv for kv in items if kv[0] != _XWF_ID))

    __setattr__ = _frozen
    __delattr__ = _frozen

    def __repr__(self) -> str:
        return f"Fixed({', '.join(f'{a}={getattr(self, a)!r}' for a, _ in self._wire)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fixed) and all(
            getattr(self, a) == getattr(other, a) for a, _ in self._wire
        )

    __hash__ = None  # type: ignore[assignment]

    def wire_items(self) -> list[tuple[str, Any]]:
        """The attributes set, as (wire key, value) in the catalogue's order."""
        return list(self.items)

    def __reduce__(self) -> tuple[Any, ...]:
        return _fixed_of, (tuple(getattr(self, a) for a, _ in self._wire),)


def _fixed_of(values: tuple[Any, ...]) -> Fixed:
    return Fixed(**{a: v for (a, _), v in zip(Fixed._wire, values, strict=True)})


class StampedeEvent:
    """Base of the generated classes; ``name`` is the kind without the ``stampede.`` prefix."""

    __slots__ = ("fixed", "extra", "_wire")
    name: ClassVar[str] = ""
    spec: ClassVar[EventSpec | None] = None
    required: ClassVar[tuple[str, ...]] = ()
    #: The kind's own attributes' fields, in catalogue order.
    fields: ClassVar[tuple[str, ...]] = ()
    #: Wire key -> field of the kind's own attributes.
    by_wire: ClassVar[Mapping[str, str]] = EMPTY

    fixed: Fixed | None
    extra: Mapping[str, Any]
    _wire: dict[str, Any] | None
    xwf_id: Any  # every kind's first attribute (a generic event's, when it has one)

    __setattr__ = _frozen
    __delattr__ = _frozen

    @property
    def wire_name(self) -> str:
        return PREFIX + self.name

    def wire_items(self) -> list[tuple[str, Any]]:
        """The attributes as (wire key, value), in the order the encoders write them."""
        raise NotImplementedError  # generated per kind

    def sent_last(self, *fields: str) -> StampedeEvent:
        """This event with the own attributes ``fields`` moved after its other own ones: the
        order of a kind's second producer (a PRE/POST script's ``inv.end`` sends ``ts`` after
        ``argv``).  Call it on a new event, before it is sent."""
        own = self.by_wire
        last = _last_keys(type(self), fields)
        wire: dict[str, Any] = {}
        moved: dict[str, Any] = {}
        rest = []
        for k, v in self.wire_items():
            if k not in own:
                rest.append((k, v))
            elif k in last:
                moved[k] = v
            else:
                wire[k] = v
        for k in last:
            if k in moved:
                wire[k] = moved[k]
        wire.update(rest)
        object.__setattr__(self, "_wire", wire)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.wire_items())!r})"

    def __eq__(self, other: object) -> bool:
        """Same kind, same attributes (in any order: a relay's order is not its value)."""
        return (
            isinstance(other, StampedeEvent)
            and other.name == self.name
            and dict(other.wire_items()) == dict(self.wire_items())
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its class and wire attrs, rebuilt by :meth:`from_wire` in that order."""
        return type(self).from_wire, (dict(self.wire_items()),)

    @classmethod
    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> StampedeEvent:
        """This kind's event from wire attributes, keeping their order (``make_event``):
        ``fixed`` is merged into ``attrs`` as ``dict.update`` does; without it, a fixed
        kind's fixed attributes in ``attrs`` become its :class:`Fixed`."""
        raise NotImplementedError  # generated per kind


_LAST_KEYS: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}


def _last_keys(cls: type[StampedeEvent], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The wire keys of ``fields`` of ``cls`` (:meth:`StampedeEvent.sent_last`), found once
    per kind and fields: searching the kind's keys per event cost as much as the reordering."""
    keys = _LAST_KEYS.get((cls.name, fields))
    if keys is None:
        keys = tuple(k for f in fields for k, g in cls.by_wire.items() if g == f)
        if len(keys) != len(fields):
            raise KeyError(f"{cls.name}: not fields of this kind: {fields}")
        _LAST_KEYS[(cls.name, fields)] = keys
    return keys


_FIXED_FIELDS: dict[str, str] = {a.name: a.field for a in FIXED}
#: The fixed attributes' wire keys: ``rest`` of :func:`split_rest` leaves them out when the
#: event has a shared Fixed already.
FIXED_KEYS: frozenset[str] = frozenset(_FIXED_FIELDS)
_XWF_ID = FIXED[0].name  # every kind's own first attribute too


def missing(cls: type[StampedeEvent], attrs: Mapping[str, Any]) -> MissingAttribute:
    key = next(k for k in cls.required if k not in attrs)
    return MissingAttribute(f"{cls.name}: missing mandatory attribute {key!r}")


def split_rest(
    attrs: dict[str, Any], rest: set[str], fixed: Fixed | None, fixed_kind: bool
) -> tuple[Fixed | None, Mapping[str, Any]]:
    """A decoded event's keys beyond its own (``rest``), in their order: a fixed kind's fixed
    ones become its :class:`Fixed` (when it has none yet), the others its ``extra``."""
    fixed_kw: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in attrs.items():
        if key in rest:
            if fixed_kind and key in _FIXED_FIELDS:
                fixed_kw[_FIXED_FIELDS[key]] = value
            else:
                extra[key] = value
    if fixed_kw:
        fixed = Fixed(**fixed_kw)
    return (fixed if fixed_kind else None), (extra or EMPTY)


class GenericEvent(StampedeEvent):
    """An event kind the catalogue does not know (relayed verbatim from static.bp)."""

    __slots__ = ("_name",)
    _name: str

    def __init__(self, name: str, attrs: dict[str, Any]) -> None:
        set_ = object.__setattr__
        set_(self, "_name", name)
        set_(self, "fixed", None)
        set_(self, "extra", attrs)
        set_(self, "_wire", attrs)

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        return self._name

    def wire_items(self) -> list[tuple[str, Any]]:
        return list(self.extra.items())

    def __reduce__(self) -> tuple[Any, ...]:
        return GenericEvent, (self._name, dict(self.extra))

    def __getattr__(self, field: str) -> Any:
        """A field by its Python name (``job_inst_id``), :data:`UNSET` when absent: a loader
        reads an unknown ``job_inst.*`` kind as it reads the known ones."""
        if field.startswith("_"):
            raise AttributeError(field)
        for key, value in self.extra.items():
            if field_name(key) == field:
                return value
        return UNSET


def slot_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each of ``cls``'s own slots, in ``__slots__`` order: how a frozen
    class's constructor stores its fields (three times faster than ``object.__setattr__``)."""
    return tuple(cls.__dict__[slot].__set__ for slot in cls.__dict__["__slots__"])
