"""Every file, module, class and function docs/architecture.md names exists (issue 27).

The page is read as the code's map: a name in backquotes that looks like a path must be a
file or directory of the project; ``path`` followed by ``name`` must define ``name`` (a
function, class, constant, or ``Class.method``) in that file; every ``Class.attr`` and every
class-like name must be defined somewhere in the project; the layer table's module names
must be modules (or packages) of the row's packages.  A rename that leaves the page behind
fails here, naming what the page still says.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import PROJECT

pytestmark = pytest.mark.quick

PAGE = PROJECT / "docs" / "architecture.md"
ROOTS = ("monitord", "sinks", "notifications", "tests", "bench", "scripts", "docs", "systemd")
# Where a path the page gives relative to a package (`cli/progress.py`, `spool/`) may live.
BASES = ("", "monitord/", "monitord/core/", "monitord/core/readers/", "sinks/", "sinks/runtime/")
_TICKED = re.compile(r"`([^`\n]+)`")
_PATH_THEN_NAME = re.compile(r"`([\w./-]+\.py)` `([^`\n]+)`")
_DOTTED = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b")
_CLASSLIKE = re.compile(r"^[A-Z][a-z0-9]+[A-Z]\w*$|^[A-Z][a-z]+$")


def _expand(path: str) -> list[str]:
    """`sinks/{sql,amqp}` → both paths."""
    m = re.search(r"\{([^}]+)\}", path)
    if m is None:
        return [path]
    return [path[: m.start()] + part + path[m.end() :] for part in m[1].split(",")]


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _sources() -> Iterator[Path]:
    for root in ("monitord", "sinks", "notifications"):
        yield from (PROJECT / root).rglob("*.py")


def _defined(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Names a module or class body binds: functions, classes, assignments."""
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out[name.id] = node
    return out


@cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    """Every class of the project's packages, by name."""
    out: dict[str, list[ast.ClassDef]] = {}
    for path in _sources():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(node)
    return out


@cache
def _top_names() -> set[str]:
    names: set[str] = set()
    for path in _sources():
        names.update(_defined(_tree(path).body))
    return names


def _has_attr(cls: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
    """``cls`` (or a project class it derives from) defines ``attr``."""
    for node in _classes().get(cls, []):
        if attr in _defined(node.body):
            return True
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if name and name not in seen and _has_attr(name, attr, seen | {cls}):
                return True
    return False


def _in_file(path: Path, name: str) -> bool:
    """``name`` (``f``, ``Class.attr``, ``TABLE["key"]``, ``f(args)``) is defined in ``path``."""
    name = re.split(r"[\[(]", name, maxsplit=1)[0]
    top = _defined(_tree(path).body)
    head, _, attr = name.partition(".")
    if not attr:
        return head in top
    node = top.get(head)
    return isinstance(node, ast.ClassDef) and (attr in _defined(node.body) or _has_attr(head, attr))


def _exists(path: str) -> bool:
    return any((PROJECT / (base + path)).exists() for base in BASES)


def _text() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_every_path_the_page_names_exists() -> None:
    paths = [
        p
        for token in _TICKED.findall(_text())
        for p in _expand(token)
        if "/" in p and " " not in p and not p.startswith("/") and re.fullmatch(r"[\w./{},-]+", p)
    ]
    assert len(paths) > 40  # the page's map: a parse that finds nothing proves nothing
    missing = sorted({p for p in paths if not _exists(p)})
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_function_named_after_its_file_is_defined_there() -> None:
    pairs = _PATH_THEN_NAME.findall(_text())
    assert len(pairs) > 15
    wrong = sorted(
        f"{path} {name}"
        for path, name in pairs
        if _exists(path) and not _in_file(next(PROJECT / (b + path) for b in BASES
                                                if (PROJECT / (b + path)).exists()), name)
    )  # fmt: skip
    assert not wrong, f"docs/architecture.md: not defined in the file it names: {wrong}"


def test_every_class_and_method_the_page_names_is_defined() -> None:
    tokens = set(_TICKED.findall(_text()))
    dotted = {
        (cls, attr)
        for token in tokens
        for cls, attr in _DOTTED.findall(token)
        if cls[0].isupper() and "/" not in token
    }
    assert len(dotted) > 20
    wrong = sorted(f"{c}.{a}" for c, a in dotted if not _has_attr(c, a))
    threads = {t for line in _text().splitlines() if line.startswith("Threads of")
               for t in _TICKED.findall(line)}  # fmt: skip
    classlike = {t for t in tokens if _CLASSLIKE.fullmatch(t)} - threads
    wrong += sorted(t for t in classlike if t not in _classes() and t not in _top_names())
    assert not wrong, f"docs/architecture.md names classes or methods that do not exist: {wrong}"


def test_module_qualified_names_are_defined_in_their_module() -> None:
    """`parts.WatchWaiter`, `run.run_follow`: a module of monitord/daemon (as the page uses them)."""
    tokens = set(_TICKED.findall(_text()))
    pairs = {
        (mod, name)
        for token in tokens
        for mod, name in _DOTTED.findall(token)
        if "/" not in token
        and mod[0].islower()
        and (PROJECT / "monitord" / "daemon" / f"{mod}.py").is_file()
    }
    assert len(pairs) > 5
    wrong = sorted(
        f"{m}.{n}" for m, n in pairs if not _in_file(PROJECT / "monitord/daemon" / f"{m}.py", n)
    )
    assert not wrong, f"docs/architecture.md: not in the daemon module it names: {wrong}"


def test_the_layer_tables_modules_are_modules_of_their_packages() -> None:
    scripts = set(tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"])
    rows = [r.split("|") for r in _text().splitlines() if re.match(r"\| \d \w", r)]
    assert len(rows) == 7, rows  # layers 1 to 7
    wrong = []
    for row in rows:
        packages = [p for t in _TICKED.findall(row[2]) for p in _expand(t) if p.endswith("/")]
        dirs = [PROJECT / p for p in packages if (PROJECT / p).is_dir()]
        dirs += [(PROJECT / p).parent for t in _TICKED.findall(row[2]) for p in _expand(t)
                 if not p.endswith("/") and (PROJECT / p).is_dir()]  # fmt: skip
        for name in _TICKED.findall(row[3]):
            if not re.fullmatch(r"\w+/?", name) or name in scripts or _CLASSLIKE.fullmatch(name):
                continue
            stem = name.rstrip("/")
            found = any(
                hit.stem == stem for d in dirs for hit in [*d.rglob(f"{stem}.py"), *d.rglob(stem)]
            )
            if not found:
                wrong.append(f"{row[1].strip()}: {name}")
    assert not wrong, f"docs/architecture.md's layer table names no such module: {wrong}"


def test_the_sizes_the_page_states_are_the_codes() -> None:
    from monitord.daemon.chunks import CHUNK
    from monitord.daemon.plan_events import BATCH

    text = _text()
    chunk = re.search(r"in (\d+) KiB chunks \(`CHUNK`\)", text)
    batch = re.search(r"batches of at most ([\d,]+) \(`BATCH`\)", text)
    assert chunk and batch, "the page no longer states CHUNK and BATCH as this test reads them"
    assert int(chunk[1]) * 1024 == CHUNK
    assert int(batch[1].replace(",", "")) == BATCH
