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

    __slots__ = tuple(a.field for a in FIXED)
    _wire: ClassVar[tuple[tuple[str, str], ...]] = tuple((a.field, a.name) for a in FIXED)
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
        return [(key, v) for attr, key in self._wire if (v := getattr(self, attr)) is not UNSET]

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
        by_field = {f: k for k, f in self.by_wire.items()}
        last = [by_field[f] for f in fields]  # KeyError: not a field of this kind
        items = self.wire_items()
        own = [(k, v) for k, v in items if k in self.by_wire and k not in last]
        moved = [(k, v) for k, v in items if k in last]
        moved.sort(key=lambda kv: last.index(kv[0]))
        rest = [(k, v) for k, v in items if k not in self.by_wire]
        object.__setattr__(self, "_wire", dict(own + moved + rest))
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
        """This kind's event from wire attributes, keeping their order (``make_event``)."""
        if fixed is not None:
            attrs.update(fixed.wire_items())  # then read back as the shared ``fixed`` below
        for key in cls.required:
            if key not in attrs:
                raise MissingAttribute(f"{cls.name}: missing mandatory attribute {key!r}")
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


_FIXED_FIELDS: dict[str, str] = {a.name: a.field for a in FIXED}


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
