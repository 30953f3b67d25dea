"""Functions built from generated source, for the few hot paths where a table is turned into
straight-line code once, at import or on first use.

Why generated: a loop over a table pays, per call, the unpacking of every entry and a call
per step; the same table written out as one function does not. Measured (bench/README.md,
"Issue 30" sections): the dagman.out classifier (``core/dagman.py``, parse30b: a line that
matches no rule paid the loop's unpacking of 17 rules, more than its substring tests), a
column map's values and changes (``sinks/sql/columns.py``, sql30b: part of the loader's
-19 % CPU), and rebuilding an event slot by slot in the ``--sql-process`` child
(``sinks/runtime/crossing.py``, proc27: decoding ~3.7 -> ~3.0 µs an event).

The source is only ever our own, written from tables in this tree, never from input.  Each
function keeps it (``__source__``) and registers it with :mod:`linecache` under a file name
of its own, so a traceback through generated code shows the line that failed.
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

_SERIAL = itertools.count(1)


def make_function(
    name: str,
    params: Sequence[str],
    body: Iterable[str],
    scope: Mapping[str, object],
) -> Callable[..., Any]:
    """``def name(*params):`` with the lines of ``body`` (each indented one level here),
    its global names ``scope`` (copied: the caller's mapping is left as it is).

    Meant for a bounded number of functions (one per table): each keeps its source in
    :mod:`linecache` for the life of the process.
    """
    lines = [f"def {name}({', '.join(params)}):", *(f"    {line}" for line in body)]
    source = "\n".join(lines) + "\n"
    filename = f"<generated {name} #{next(_SERIAL)}>"
    namespace: dict[str, Any] = dict(scope)
    exec(compile(source, filename, "exec"), namespace)
    func: Callable[..., Any] = namespace[name]
    # mtime None: linecache.checkcache leaves the entry alone (it has no file to check).
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    func.__source__ = source  # type: ignore[attr-defined]
    return func
