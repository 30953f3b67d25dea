"""Where the ``--sql-process`` child's CPU goes, by stage (issue 30, child30g).

With ``bench/cpu_split`` on ``PYTHONPATH`` and ``MONITORD_CHILD_SPLIT=FILE`` (its
``sitecustomize`` imports this module then): the SQL child
(``sinks/runtime/child.py`` serving ``sink-sql``) appends one line to FILE as it ends, with
its CPU seconds (``time.process_time``): all, decoding the batches (``decode_events``,
``decode_views``), ``SQLSink.write_batch``, of which the commit and the transaction (``commit_etc``: less
``BatchLoader.load``), the loader's look-ups ahead (their SELECTs included), its queued rows'
writes (``RawSQL._run_many``) and its other statements.  The handlers are ``load`` less
those three (less the look-ups' SELECTs, counted twice); the rest of ``total`` is start-up,
the pipe and freeing each batch.  A bench tool: it wraps the functions
from outside, the product has no switch for it.

    MONITORD_CHILD_SPLIT=/tmp/split.log PYTHONPATH=.:bench/cpu_split \\
        python -m monitord.cli replay --sql-process ...
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import time
from collections.abc import Callable
from typing import Any

_LOG = os.environ.get("MONITORD_CHILD_SPLIT")
_spent: dict[str, float] = {}
_calls: dict[str, int] = {}


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    clock = time.process_time

    def wrapper(*args: Any, **kw: Any) -> Any:
        began = clock()
        try:
            return fn(*args, **kw)
        finally:
            _spent[name] = _spent.get(name, 0.0) + clock() - began
            _calls[name] = _calls.get(name, 0) + 1

    return wrapper


def _gc_timer(phase: str, info: dict[str, Any]) -> None:
    """The cyclic collector's own CPU (``gc.callbacks``): its collections, not the frees."""
    if phase == "start":
        _spent["_gc_began"] = time.process_time()
    else:
        _spent["gc"] = _spent.get("gc", 0.0) + time.process_time() - _spent["_gc_began"]


def _report() -> None:
    if "write_batch" not in _spent:  # another child (the read-ahead worker)
        return
    s = _spent
    load, write = s.get("load", 0.0), s["write_batch"]
    parts = {
        "total": time.process_time(),
        "decode": s.get("decode", 0.0),
        "write_batch": write,
        "commit_etc": write - load,
        "load": load,
        "lookups_ahead": s.get("lookups_ahead", 0.0),  # its SELECTs included
        "sql_rows": s.get("run_many", 0.0),
        "sql_other": sum(s.get(k, 0.0) for k in ("rows", "scalar", "insert_id")),
        "gc": s.get("gc", 0.0),
        "sys": os.times().system,
        "batches": _calls.get("write_batch", 0),
    }
    with open(_LOG, "a") as out:  # type: ignore[arg-type]
        out.write(" ".join(f"{k}={v:.2f}" for k, v in parts.items()) + "\n")


def _install() -> None:
    from sinks.runtime import process_sink
    from sinks.sql import loader, rawsql, sink

    process_sink.decode_events = _timed("decode", process_sink.decode_events)
    if hasattr(process_sink, "decode_views"):  # the SQL sink's (child30j); not in older trees
        process_sink.decode_views = _timed("decode", process_sink.decode_views)
    sink.SQLSink.write_batch = _timed("write_batch", sink.SQLSink.write_batch)  # type: ignore[method-assign]
    loader.BatchLoader.load = _timed("load", loader.BatchLoader.load)  # type: ignore[method-assign]
    loader.BatchLoader._lookups_ahead = _timed(  # type: ignore[method-assign]
        "lookups_ahead", loader.BatchLoader._lookups_ahead
    )
    for name in ("_run_many", "rows", "scalar", "insert_id"):
        key = name.lstrip("_")
        setattr(rawsql.RawSQL, name, _timed(key, getattr(rawsql.RawSQL, name)))
    gc.callbacks.append(_gc_timer)
    atexit.register(_report)


if _LOG and "sinks.runtime.child" in sys.orig_argv:
    _install()
