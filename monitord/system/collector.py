"""The cyclic garbage collector paused for a block that makes many objects and no garbage.

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
