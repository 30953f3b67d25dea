"""The cyclic garbage collector paused while the program loads its modules.

Loading modules makes objects that live as long as the process (modules, classes, functions,
SQLAlchemy's constructs: ~95,000 for a replay into SQLite) and no garbage, yet each 700
allocations trigger a collection that walks the young ones, and every tenth of those the
older: 137 collections, ~7 % of a command's start-up CPU (~0.03 s of ~0.4 s; bench/README.md,
"Issue 30, ninth session: small30f"), which pegasus-run pays once per workflow.  The collector is
paused only while modules load, and restored as it was, even when the loading fails.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def loading() -> Iterator[None]:
    """Pause the cyclic collector for the block (module imports); restore it after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
