"""Functions built from generated source (monitord/core/generated.py) and the four sites that
build them: a traceback through generated code shows the line that failed."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pytest

from monitord.core import dagman
from monitord.core.events import UNSET
from monitord.core.generated import make_function
from sinks.runtime import crossing
from sinks.sql import columns


def _failure(call: Callable[[], object]) -> str:
    """The formatted traceback of ``call``, which must raise (the caller's line is in it: the
    text looked for must not be on that line)."""
    with pytest.raises(Exception) as info:
        call()
    return "".join(traceback.format_exception(info.value))


def test_the_function_is_its_body_with_its_scope() -> None:
    scope: dict[str, object] = {"K": 10}
    add = make_function("add", ["a", "b"], ["s = a + b", "return s * K"], scope)
    assert add(2, 3) == 50
    assert add.__name__ == "add"
    assert vars(add)["__source__"] == "def add(a, b):\n    s = a + b\n    return s * K\n"
    assert scope == {"K": 10}  # the caller's scope is left as it was


def test_a_traceback_shows_the_generated_line() -> None:
    div = make_function("div", ["x"], ["y = x + 1", "return 100 // (y - 1)"], {})
    text = _failure(lambda: div(0))
    assert "ZeroDivisionError" in text
    assert "return 100 // (y - 1)" in text  # the line, not only "line 2, in div"
    assert "<generated div #" in text


def test_two_functions_of_one_name_keep_their_own_lines() -> None:
    first = make_function("f", [], ["return 1 // 0  # first"], {})
    second = make_function("f", [], ["return 1 // 0  # second"], {})
    one, two = _failure(first), _failure(second)
    assert "# first" in one and "# second" not in one
    assert "# second" in two and "# first" not in two


def _boom(value: Any) -> Any:
    raise ValueError("bad value")


class _Ev:
    a = 1


_BOOM_COLS: columns.ColumnMap = (("a", "col_a", _boom),)


def test_a_column_map_values_failure_shows_its_generated_line() -> None:
    text = _failure(lambda: columns.values_of(_BOOM_COLS)(_Ev()))
    assert "c0(None if v is UNSET else v)" in text


def test_a_column_map_changes_failure_shows_its_generated_line() -> None:
    text = _failure(lambda: columns.changes_of(_BOOM_COLS)(_Ev()))
    assert "out['col_a'] = c0(v)" in text


class _Fields:
    """An event with some of a map's fields: unset, None, a float, a string or absent."""

    def __init__(self, cols: columns.ColumnMap, seed: int) -> None:
        kinds = (UNSET, None, 2.5, "7", "x", "1")
        for i, (field, _, _) in enumerate(cols):
            choice = (seed + i * 7) % (len(kinds) + 1)
            if choice < len(kinds):
                setattr(self, field, kinds[choice])


_MAPS = {name: cols for name, cols in vars(columns).items() if name.endswith("_COLS")}


@pytest.mark.parametrize("name", sorted(_MAPS))
def test_a_column_maps_functions_are_the_map_read_plainly(name: str) -> None:
    cols = _MAPS[name]
    for seed in range(30):
        ev = _Fields(cols, seed)
        got = [getattr(ev, field, None) for field, _, _ in cols]
        plain = tuple(
            conv(None if v is UNSET else v) for v, (_, _, conv) in zip(got, cols, strict=True)
        )
        assert columns.values_of(cols)(ev) == plain
        changes = {
            col: conv(getattr(ev, field))
            for field, col, conv in cols
            if getattr(ev, field, UNSET) is not UNSET
        }
        assert columns.changes_of(cols)(ev) == changes


def test_a_classifier_failure_shows_its_generated_line() -> None:
    def parse(line: str) -> Any:
        raise ValueError(line)

    classify = dagman._compiled((("needle", None, dagman.ULOG, parse),))
    assert classify("no match", 0.0) is None
    text = _failure(lambda: classify("a needle", 0.0))
    assert "fields = parse_0(line)" in text


def test_a_crossing_builder_failure_shows_its_generated_line() -> None:
    cls = crossing._KINDS[0]
    build = crossing._builder(cls)
    short = (None,) * len(cls.fields)  # one value too few for the kind's fields and Fixed
    text = _failure(lambda: build(short, None, None))
    assert "".join(f"_{i}, " for i in range(len(cls.fields))) + "fixed = v" in text
    assert vars(build)["__source__"].startswith("def build(v, extra, wire):")
