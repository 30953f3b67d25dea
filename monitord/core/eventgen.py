"""Writes ``core/event_classes.py``, the event classes, from the catalogue.

The classes are source, not built at import, so that mypy sees every kind's fields and
constructor (a misspelt field or keyword is a type error) and their hot methods are plain
compiled functions.  ``python -m monitord.core.eventgen`` rewrites the file;
tests/test_event_classes.py fails when the checked-in file is not what :func:`source` makes
from the catalogue now.
"""

from __future__ import annotations

import sys
from pathlib import Path

from monitord.core.catalogue import CATALOGUE, FIXED, Attr, EventSpec

TARGET = Path(__file__).with_name("event_classes.py")

_TYPE_NAMES = {
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    type(None): "None",
    list: "list[Any]",
    dict: "dict[str, Any]",
}

HEADER = '''"""The Stampede event classes, one per kind of the catalogue.  GENERATED: do not edit.

Written by ``python -m monitord.core.eventgen`` from ``monitord/core/catalogue.py`` (see
there for the kinds and ``core/eventbase.py`` for what every event has); import them from
``monitord.core.events``.  An optional attribute the event does not carry is ``UNSET``.
"""

# fmt: off
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from monitord.core.catalogue import BY_NAME, EventSpec
from monitord.core.eventbase import (
    EMPTY,
    FIXED_KEYS,
    UNSET,
    Fixed,
    StampedeEvent,
    missing,
    slot_setters,
    split_rest,
)

_new = object.__new__
'''


def class_name(name: str) -> str:
    """``job_inst.main.end`` -> ``JobInstMainEnd``: the kind's class."""
    return "".join(part.capitalize() for part in name.replace("_", ".").split("."))


def _str(text: str) -> str:
    return '"' + text + '"'  # names and keys hold no quote or backslash


def _tuple(items: tuple[str, ...]) -> str:
    return "(" + ", ".join(_str(i) for i in items) + ("," if len(items) == 1 else "") + ")"


def annotation(attr: Attr) -> str:
    return " | ".join(_TYPE_NAMES[t] for t in attr.types)


def _wire_items(spec: EventSpec) -> list[str]:
    """``wire_items``: own attributes in catalogue order, the fixed ones, then ``extra``
    (or where the catalogue's ``@fixed`` / ``@extra`` put those two groups)."""
    lines = [
        "    def wire_items(self) -> list[tuple[str, Any]]:",
        "        wire = self._wire",
        "        if wire is not None:",
        "            return list(wire.items())",
        "        out: list[tuple[str, Any]] = []",
        "        v: Any",
        "        add = out.append",
    ]
    own = {a.name for a in spec.own}
    fixed_group = ["        fx = self.fixed", "        if fx is not None:"]
    if own & {a.name for a in FIXED} == {FIXED[0].name}:  # only xwf.id, its own
        fixed_group += ["            out.extend(fx.tail)"]
    for fx in FIXED if len(fixed_group) == 2 else ():
        # An attribute both own and fixed is sent once, where the kind puts it.
        guard = f"self.{fx.field} is UNSET and " if fx.name in own else ""
        fixed_group += [
            f"            v = fx.{fx.field}",
            f"            if {guard}v is not UNSET:",
            f"                add(({_str(fx.name)}, v))",
        ]
    extra_group = ["        if self.extra:", "            out.extend(self.extra.items())"]
    end = len(spec.own)
    fixed_at = end if spec.fixed_at is None else spec.fixed_at
    extra_at = end if spec.extra_at is None else spec.extra_at
    for i, attr in enumerate([*spec.own, None]):
        if i == fixed_at and spec.fixed:
            lines += fixed_group
        if i == extra_at:
            lines += extra_group
        if attr is not None:
            lines += [
                f"        v = self.{attr.field}",
                "        if v is not UNSET:",
                f"            add(({_str(attr.name)}, v))",
            ]
    return [*lines, "        return out"]


def _init(spec: EventSpec, cls: str) -> list[str]:
    """The constructor: every attribute by keyword, mandatory ones without a default.  It
    stores through the slots' own descriptors (``_<Class>_<field>``, bound after the class):
    three times faster than ``object.__setattr__``, which a frozen class would need."""
    params = [f"{a.field}: {annotation(a)}" + ("" if a.required else " = UNSET") for a in spec.own]
    params += ["fixed: Fixed | None = None", "extra: Mapping[str, Any] = EMPTY"]
    lines = ["    def __init__(", "        self,", "        *,"]
    lines += [f"        {p}," for p in params]
    lines += ["    ) -> None:"]
    lines += [f"        _{cls}_{a.field}(self, {a.field})" for a in spec.own]
    lines += ["        _set_fixed(self, fixed)", "        _set_extra(self, extra)"]
    lines += ["        _set_wire(self, None)"]
    return lines


def _of(spec: EventSpec, cls: str) -> list[str]:
    """``of``: the constructor's positional twin for the daemon's hot producers, every
    attribute in catalogue order (``UNSET`` for one not sent).  No keyword to match per
    argument: a 16-attribute ``inv.end`` costs about half its keyword build."""
    params = [f"{a.field}: {annotation(a)}" for a in spec.own]
    params += ["fixed: Fixed | None = None", "extra: Mapping[str, Any] = EMPTY"]
    lines = ["    @classmethod", "    def of(", "        cls,"]
    lines += [f"        {p}," for p in params]
    lines += [f"    ) -> {cls}:", "        self = _new(cls)"]
    lines += [f"        _{cls}_{a.field}(self, {a.field})" for a in spec.own]
    lines += ["        _set_fixed(self, fixed)", "        _set_extra(self, extra)"]
    lines += ["        _set_wire(self, None)", "        return self"]
    return lines


def _from_wire(spec: EventSpec, cls: str) -> list[str]:
    """``from_wire``: each own attribute straight from ``attrs`` into its slot (a mandatory
    one by subscript: it was just checked); only the keys beyond the kind's own (``rest``: a
    relay's planner keys, a decoded event's fixed ones) take the slower :func:`split_rest`.
    A fixed kind checks its keys before ``fixed`` is merged in (a relay's few, not the
    merged dozen): the fixed keys are known keys of its, so the answer is the same."""
    lines = [
        "    @classmethod",
        f"    def from_wire(cls, attrs: dict[str, Any], fixed: Fixed | None = None) -> {cls}:",
    ]
    merge = ["        if fixed is not None:", "            attrs.update(fixed.mapping)"]
    if spec.fixed:
        lines += [
            "        known = cls._keys_fixed if fixed is not None else cls._keys",
            "        usual = attrs.keys() <= known  # no set built for the usual event",
            *merge,
        ]
    else:
        lines += [*merge, "        known = cls._keys", "        usual = attrs.keys() <= known"]
    if spec.required:
        test = " or ".join(f"{_str(k)} not in attrs" for k in spec.required)
        lines += [f"        if {test}:", "            raise missing(cls, attrs)"]
    required = set(spec.required)
    lines += ["        self = _new(cls)"]
    if any(a.name not in required for a in spec.own):
        lines += ["        get = attrs.get"]
    lines += [
        f"        _{cls}_{a.field}(self, attrs[{_str(a.name)}])"
        if a.name in required
        else f"        _{cls}_{a.field}(self, get({_str(a.name)}, UNSET))"
        for a in spec.own
    ]
    lines += [
        "        if usual:",
        "            " + ("extra = EMPTY" if spec.fixed else "fixed, extra = None, EMPTY"),
        "        else:",
        f"            fixed, extra = split_rest(attrs, attrs.keys() - known, fixed, {spec.fixed})",
        "        _set_fixed(self, fixed)",
        "        _set_extra(self, extra)",
        "        _set_wire(self, attrs)",
        "        return self",
    ]
    return lines


def class_source(spec: EventSpec) -> str:
    cls = class_name(spec.name)
    base = "WithFixed" if spec.fixed else "StampedeEvent"
    fields = tuple(a.field for a in spec.own)
    wire = tuple(a.name for a in spec.own)
    by_wire = ", ".join(f"{_str(a.name)}: {_str(a.field)}" for a in spec.own)
    lines = [
        "",
        "",
        f"class {cls}({base}):",
        f'    """``stampede.{spec.name}``."""',
        "",
        f"    __slots__ = {_tuple(fields)}",
        f"    name: ClassVar[str] = {_str(spec.name)}",
        f"    spec: ClassVar[EventSpec | None] = BY_NAME[{_str(spec.name)}]",
        f"    required: ClassVar[tuple[str, ...]] = {_tuple(spec.required)}",
        f"    fields: ClassVar[tuple[str, ...]] = {_tuple(fields)}",
        f"    by_wire: ClassVar[Mapping[str, str]] = MappingProxyType({{{by_wire}}})",
        f"    _keys: ClassVar[frozenset[str]] = frozenset({_tuple(wire)})",
        *(["    _keys_fixed: ClassVar[frozenset[str]] = _keys | FIXED_KEYS"] if spec.fixed else []),
        "",
    ]
    lines += [f"    {a.field}: {annotation(a)}" for a in spec.own]
    lines += ["", *_init(spec, cls), "", *_of(spec, cls), "", *_from_wire(spec, cls)]
    lines += ["", *_wire_items(spec), "", ""]
    setters = ", ".join(f"_{cls}_{f}" for f in fields)
    lines += [f"{setters}{',' if len(fields) == 1 else ''} = slot_setters({cls})"]
    return "\n".join(lines) + "\n"


def with_fixed_source() -> str:
    """The base of the kinds carrying the workflow's fixed attributes: each a read-only
    field read through ``fixed`` (a kind's own attribute of that name, a slot, wins)."""
    lines = [
        "",
        "",
        "class WithFixed(StampedeEvent):",
        '    """A kind carrying the workflow\'s fixed attributes (doc §5.1), read through ``fixed``."""',
        "",
        "    __slots__ = ()",
    ]
    every = set.intersection(*({a.name for a in s.own} for s in CATALOGUE if s.fixed))
    for fx in FIXED:
        if fx.name in every:
            continue  # every such kind has it as its own (``xwf.id``): StampedeEvent's
        lines += [
            "",
            "    @property",
            f"    def {fx.field}(self) -> {annotation(fx)}:",
            "        fx = self.fixed",
            f"        return UNSET if fx is None else fx.{fx.field}",
        ]
    return "\n".join(lines) + "\n"


def source() -> str:
    """The whole of ``event_classes.py`` for the catalogue as it is now."""
    tail = [
        "",
        "",
        "_set_fixed, _set_extra, _set_wire = slot_setters(StampedeEvent)",
        "",
        "#: Every kind's class, in catalogue order.",
        "CLASSES: tuple[type[StampedeEvent], ...] = (",
        *[f"    {class_name(s.name)}," for s in CATALOGUE],
        ")",
        "",
        "__all__ = [",
        '    "CLASSES",',
        '    "WithFixed",',
        *[f'    "{class_name(s.name)}",' for s in CATALOGUE],
        "]",
    ]
    body = with_fixed_source() + "".join(class_source(spec) for spec in CATALOGUE)
    return HEADER + body + "\n".join(tail) + "\n"


def main() -> int:
    text = source()
    if TARGET.exists() and TARGET.read_text(encoding="utf-8") == text:
        print(f"{TARGET}: up to date")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"{TARGET}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
