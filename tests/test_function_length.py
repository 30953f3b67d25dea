"""No function of monitord, sinks or notifications grows past 60 lines (issue 27).

Functions that are longer today are listed in ``LONG`` with their length: none may grow, a new
one may not join, and one split below the limit (or removed) must leave the list, so the list
only shrinks.  Lines are counted from ``def`` to the function's last line, docstring included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import PROJECT

LIMIT = 60
ROOTS = ("monitord", "sinks", "notifications")

# "path:qualified name" -> its length now (a ceiling).  Split one, then remove its line.
LONG: dict[str, int] = {}


def long_functions(source: str, path: str) -> Iterator[tuple[str, int]]:
    """``(path:qualname, lines)`` of every function of ``source`` longer than LIMIT."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > LIMIT:
                    yield f"{path}:{name}", lines
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(source), "")


def tree_long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for root in ROOTS:
        for file in sorted((PROJECT / root).rglob("*.py")):
            if "examples" in file.relative_to(PROJECT).parts:
                continue
            path = file.relative_to(PROJECT).as_posix()
            source = file.read_text(encoding="utf-8")
            if "GENERATED: do not edit." in source[:200]:
                continue  # written by a generator from a table (its test checks it is current)
            found.update(long_functions(source, path))
    return found


def test_no_function_grows_past_the_limit_and_the_list_only_shrinks() -> None:
    found = tree_long_functions()
    new = {k: n for k, n in found.items() if k not in LONG}
    grown = {k: (LONG[k], n) for k, n in found.items() if k in LONG and n > LONG[k]}
    gone = sorted(k for k in LONG if k not in found)
    assert not new, f"functions over {LIMIT} lines (split them by responsibility): {new}"
    assert not grown, f"listed long functions grew (listed, now): {grown}"
    assert not gone, f"no longer over {LIMIT} lines (or gone): remove from LONG: {gone}"


def test_the_lister_finds_methods_and_nested_functions(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    source = (
        f"def short():\n    pass\n"
        f"class C:\n    async def m(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n"
        f"def outer():\n    def inner():\n    {body.replace(chr(10), chr(10) + '    ')}\n"
    )
    found = dict(long_functions(source, "x.py"))
    assert set(found) == {"x.py:C.m", "x.py:outer", "x.py:outer.inner"}, found
    assert found["x.py:C.m"] == LIMIT + 1
