"""The cyclic garbage collector paused for a block that makes many objects and no garbage
(:class:`Paused`), and settled for the rest of a program's life (:func:`settle`).

Loading modules makes objects that live as long as the process (modules, classes, functions,
SQLAlchemy's constructs: ~95,000 for a replay into SQLite) and no garbage, yet each 700
allocations trigger a collection that walks the young ones, and every tenth of those the
older: 137 collections, ~7 % of a command's start-up CPU (~0.03 s of ~0.4 s; bench/README.md,
"Issue 30, ninth session: small30f"), which pegasus-run pays once per workflow.  Decoding a
batch in the SQL child is the same (``sinks/runtime/crossing.py``).  The collector is restored
as it was, even when the block fails.

A class, not a ``@contextmanager`` generator: the generator's exit raises and allocates its
``StopIteration`` after the collector is back on, and that allocation sets off a young
collection over everything the block just made (``tests/test_child_collector.py``).
"""

from __future__ import annotations

import gc
from types import TracebackType


class Paused:
    """``with Paused():`` the cyclic collector is off for the block, then as it was."""

    __slots__ = ("_collecting",)

    def __enter__(self) -> None:
        self._collecting = gc.isenabled()
        gc.disable()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._collecting:
            gc.enable()  # last: nothing is allocated after it


def settle(young: int) -> None:
    """Freeze what is alive now out of the collector's walks and collect the young generation
    every ``young`` allocations net (the interpreter's: 700); the older thresholds kept.

    For a program whose start-up state (modules, classes, SQLAlchemy's tables and engines)
    lives as long as the process and whose data waits a while before it is freed (a replay's
    events until the sinks wrote them, the ingest's messages until their batch commits): at
    700 most of it outlives its young collection and is walked again by the older ones.  The
    callers, each with its threshold and its figures: ``monitord/cli/startup.py`` ``settle``,
    ``monitord/ingest/run.py`` ``settle_collector``."""
    gc.freeze()
    gc.set_threshold(young, *gc.get_threshold()[1:])
