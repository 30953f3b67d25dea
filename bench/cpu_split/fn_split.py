"""The thread CPU spent in named functions of a replay's daemon, measured in place (issue 30,
daemon30h).

With ``bench/cpu_split`` on ``PYTHONPATH``, ``MONITORD_FN_SPLIT=FILE`` and
``MONITORD_FN_LIST=module:Qual.name,...`` (its ``sitecustomize`` imports this module then):
each function named is wrapped as its module is imported, and the daemon (the process that
imported ``monitord.cli``) appends to FILE as it ends one line per function: the thread CPU
(``time.thread_time``) spent in it, its callees included (a call within itself counted
once), its calls, and the CPU per call.

Why not only py-spy: its ``--gil`` samples count a thread holding the GIL while the machine
has it waiting for a core (most of the time at a load of 10), these are CPU seconds of the
thread itself.  Each call costs two clock readings (a system call each, ~0.3 µs), so a
function of a few µs reads high.  A function taken by name before the wrap (a module
imported earlier that did ``from m import f``) or kept in a table when its class was made
(``Workflow._handlers``) runs unwrapped.  A bench tool: the product has no switch for it.

    MONITORD_FN_SPLIT=/tmp/fn.log MONITORD_FN_LIST=monitord.core.dagman:classify_line,\\
    monitord.core.jobactions:JobActions.send_main_end PYTHONPATH=TREE:bench/cpu_split \\
        python -m monitord.cli replay ...
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_LOG = os.environ.get("MONITORD_FN_SPLIT")
_spent: dict[str, list[float]] = {}  # label -> [CPU seconds, calls]


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    clock = time.thread_time
    spent = _spent.setdefault(label, [0.0, 0])
    inside = [0]  # a call within a call of the same function is the outer one's

    def wrapper(*args: Any, **kw: Any) -> Any:
        if inside[0]:
            return fn(*args, **kw)
        inside[0] += 1
        began = clock()
        try:
            return fn(*args, **kw)
        finally:
            spent[0] += clock() - began
            spent[1] += 1
            inside[0] -= 1

    return wrapper


def _wrap(module: ModuleType, qualname: str) -> None:
    *path, name = qualname.split(".")
    owner: Any = module
    for part in path:
        owner = getattr(owner, part)
    raw = owner.__dict__[name]
    label = f"{module.__name__.rsplit('.', 1)[-1]}:{qualname}"
    if isinstance(raw, classmethod | staticmethod):
        setattr(owner, name, type(raw)(_timed(label, raw.__func__)))
    else:
        setattr(owner, name, _timed(label, raw))


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the named functions of a module once it has run."""

    def __init__(self, wanted: dict[str, list[str]]) -> None:
        self.wanted = wanted

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        names = self.wanted.pop(fullname, None)
        if names is None:
            return None
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            for qualname in names:
                _wrap(module, qualname)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _report() -> None:
    if "monitord.cli" not in sys.modules or not _LOG:
        return
    with open(_LOG, "a") as out:
        for label, (cpu, calls) in sorted(_spent.items(), key=lambda kv: -kv[1][0]):
            per = cpu / calls * 1e6 if calls else 0.0
            out.write(f"{label:56s} {cpu:8.3f} s {int(calls):9d} calls {per:9.2f} us\n")


def _exit(status: int, _real: Callable[[int], Any] = os._exit) -> None:
    try:
        _report()
    finally:
        _real(status)


def _install(spec: str) -> None:
    wanted: dict[str, list[str]] = {}
    for item in filter(None, spec.split(",")):
        module, qualname = item.strip().split(":")
        wanted.setdefault(module, []).append(qualname)
    sys.meta_path.insert(0, _Finder(wanted))
    atexit.register(_report)
    os._exit = _exit  # type: ignore[assignment]  # the daemon skips the interpreter's teardown


if _LOG and os.environ.get("MONITORD_FN_LIST"):
    _install(os.environ["MONITORD_FN_LIST"])
