"""The layer stack holds: no import cycle anywhere, and pyproject's contracts can fail.

``lint-imports`` (scripts/test.sh) checks the contracts on the tree; here the same
contracts are run on a skeleton of the layer packages with one forbidden import added,
so a contract that could never fail (a typo in a module name, a layer left out) shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import grimp
import pytest

from tests.conftest import PROJECT

ROOTS = ("monitord", "sinks", "notifications")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def import_cycles(graph: grimp.ImportGraph, modules: Iterable[str]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def _ours(graph: grimp.ImportGraph) -> set[str]:
    return {m for m in graph.modules if m.split(".")[0] in ROOTS and ".examples" not in m}


def test_the_tree_has_no_import_cycle() -> None:
    graph = grimp.build_graph(*ROOTS, cache_dir=None)
    assert len(_ours(graph)) > 100, "the graph lost the packages"
    assert import_cycles(graph, _ours(graph)) == []


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_cycle_check_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(
        tmp_path,
        {
            "loopy/__init__.py": "",
            "loopy/a.py": "from loopy import b\n",
            "loopy/b.py": "def f():\n    from loopy import c\n",
            "loopy/c.py": "from loopy.a import *\n",
            "loopy/d.py": "from loopy import a\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("loopy", cache_dir=None)
    assert import_cycles(graph, graph.modules) == [["loopy.a", "loopy.b", "loopy.c"]]


# --- the contracts of pyproject.toml, on a skeleton of the layer packages

SKELETON = [
    "monitord/cli",
    "monitord/tools",
    "monitord/service",
    "monitord/ingest",
    "monitord/daemon",
    "monitord/core",
    "monitord/system",
    "sinks/runtime",
    "sinks/sql",
    "sinks/amqp",
    "sinks/otlp",
    "sinks/plugins",
    "notifications",
]
# One module per layer file name (sinks.registry, sinks.file_sink, sinks.encoding).
SKELETON_MODULES = ["sinks/registry.py", "sinks/file_sink.py", "sinks/encoding.py"]


def _lint(tmp_path: Path, imports: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """lint-imports with pyproject's contracts on the skeleton plus ``imports``."""
    if not LINT_IMPORTS.exists():
        pytest.skip("lint-imports is not installed (scripts/setup.sh installs it)")
    tree = tmp_path / "tree"
    files = {"monitord/__init__.py": "", "sinks/__init__.py": ""}
    for package in SKELETON:
        files[f"{package}/__init__.py"] = ""
        files[f"{package}/mod.py"] = ""
    for module in SKELETON_MODULES:
        files[module] = ""
    for importer, imported in imports.items():
        files[importer.replace(".", "/") + ".py"] = f"import {imported}\n"
    _package(tree, files)
    config = tmp_path / "contracts.toml"
    shutil.copy(PROJECT / "pyproject.toml", config)
    assert "[[tool.importlinter.contracts]]" in config.read_text()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache", "--no-logo"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_contracts_keep_a_clean_skeleton(tmp_path: Path) -> None:
    proc = _lint(
        tmp_path,
        {
            "monitord.cli.run": "monitord.tools.mod",
            "monitord.service.run": "monitord.daemon.mod",
            "monitord.ingest.run": "sinks.sql.mod",
            "monitord.daemon.run": "sinks.registry",
            "sinks.sql.run": "sinks.runtime.mod",
            "sinks.otlp.run": "sinks.runtime.mod",
            "sinks.runtime.run": "monitord.system.mod",
            "notifications.run": "monitord.core.mod",
        },
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" in proc.stdout and " 0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("importer", "imported", "contract"),
    [
        ("monitord.core.run", "monitord.daemon.mod", "cli > tools"),
        ("monitord.daemon.run", "monitord.service.mod", "cli > tools"),
        ("monitord.service.run", "monitord.cli.mod", "cli > tools"),
        ("notifications.run", "sinks.sql.mod", "cli > tools"),
        ("monitord.system.run", "monitord.core.mod", "cli > tools"),
        ("sinks.runtime.run", "sinks.sql.mod", "the sinks sit on the delivery runtime"),
        ("sinks.amqp.run", "sinks.registry", "the sinks sit on the delivery runtime"),
        ("sinks.otlp.run", "sinks.amqp.mod", "the sinks sit on the delivery runtime"),
        ("sinks.runtime.run", "sinks.otlp.mod", "the sinks sit on the delivery runtime"),
        ("monitord.service.run", "monitord.tools.mod", "only the command line imports"),
        ("monitord.ingest.run", "monitord.service.mod", "cli > tools"),
        ("monitord.service.run", "monitord.ingest.mod", "cli > tools"),
        ("monitord.ingest.run", "monitord.daemon.mod", "the ingest is a consumer"),
        ("monitord.core.run", "asyncio", "the core is pure"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(
    tmp_path: Path, importer: str, imported: str, contract: str
) -> None:
    proc = _lint(tmp_path, {importer: imported})
    assert proc.returncode != 0, proc.stdout
    broken = [line for line in proc.stdout.splitlines() if line.endswith("BROKEN")]
    assert any(line.startswith(contract) for line in broken), proc.stdout
    assert importer in proc.stdout, proc.stdout
