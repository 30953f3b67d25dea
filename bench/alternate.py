"""Old against new on a shared machine: the benches' one way to time two sides (issue 30).

Each round runs every side once, in the order given, so a change in the machine's load (2
cores shared by several engineers) falls on both sides alike; a side's figure is the median
of its rounds, and CPU seconds (``time.process_time``) are counted rather than wall time.
A bench imports it from its own directory (``python bench/x.py`` puts ``bench/`` first on
``sys.path``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")


def options(
    doc: str | None, old: str, *, rounds: int, required: bool = False, path: bool = False
) -> argparse.ArgumentParser:
    """A bench's options on a generated workflow against another tree: ``--dir`` (the
    workflow), ``--old`` (described by ``old``), ``--rounds``; a bench adds its own."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--dir", type=Path, required=True, help="a generated workflow's submit dir")
    p.add_argument("--old", type=Path if path else str, required=required, help=old)
    p.add_argument("--rounds", type=int, default=rounds)
    return p


def alternate(sides: Mapping[str, Callable[[], T]], rounds: int) -> dict[str, list[T]]:
    """Per side, what it returned in each of ``rounds`` rounds (sides alternate in a round)."""
    got: dict[str, list[T]] = {side: [] for side in sides}
    for _ in range(rounds):
        for side, run in sides.items():
            got[side].append(run())
    return got


def cpu_seconds(fn: Callable[[], object]) -> Callable[[], float]:
    """``fn`` as a side of :func:`alternate`: the CPU seconds of one call of it."""

    def timed() -> float:
        start = time.process_time()
        fn()
        return time.process_time() - start

    return timed


def medians(rounds: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Figure by figure, the median over rounds (a child process's JSON line per round)."""
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def load_module(name: str, path: Path) -> ModuleType:
    """Another tree's copy of one module, loaded beside this tree's under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def run_child(tree: Path, code: str, *args: str) -> dict[str, Any]:
    """``code`` in a fresh interpreter importing from ``tree`` (a side's checkout) first,
    with ``args`` as its ``sys.argv[1:]``: the JSON object its last output line prints."""
    head = f"import sys; sys.path.insert(0, {str(tree)!r})\n"
    proc = subprocess.run(
        [sys.executable, "-c", head + code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
