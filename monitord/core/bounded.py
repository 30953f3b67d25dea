"""The parsers' bounded tables: a plain dict of what repeats across files or lines, emptied
once full, so that it holds the recent and does not grow with the job count.

A plain dict, not a subclass: a dict's ``.get`` and ``[]`` keep CPython's fast paths (a
subclass's ``.get`` by attribute took ~40 % longer), and an LRU cache costs its hits
(``functools.lru_cache`` made the 20,000-job ``.sub`` parse ~20 % slower: bench/README.md,
"Issue 30, fourteenth session: mend30l").  Threads may share a table: a lookup, an addition
and a clear are each atomic, and a clear between costs only a few misses.
"""

from __future__ import annotations

from typing import Any


def make_room(table: dict[Any, Any], limit: int) -> None:
    """Empty ``table`` once it holds ``limit`` entries (call it before adding to it): what
    repeats comes back at its next use."""
    if len(table) >= limit:
        table.clear()
