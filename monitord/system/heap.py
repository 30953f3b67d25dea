"""Giving the heap's freed memory back to the OS while a long replay or follow runs.

CPython frees what a batch of events, a kickstart record or a parsed chunk held, but glibc
keeps the freed pages of its heaps (one per thread that allocates: parser, each sink) until
``malloc_trim``; the pages stay in RSS, scattered among live objects, and a 20,000-job replay
ended ~11 MB higher for it (bench/README.md, "Issue 30, fourth session").  Elsewhere (musl,
macOS) there is no ``malloc_trim``: nothing is done.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


class HeapTrimmer:
    """Trims the heap at most once every ``every`` seconds (:meth:`due_trim`, called often:
    one clock reading when not due).  ctypes drops the GIL for the call, so the other threads
    go on meanwhile."""

    def __init__(self, every: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.trims = 0
        self._trim = _malloc_trim()
        self._next = clock() + every

    @property
    def available(self) -> bool:
        return self._trim is not None

    def due_trim(self) -> bool:
        """Trim now if ``every`` seconds went by since the last one; whether it trimmed."""
        now = self.clock()
        if self._trim is None or now < self._next:
            return False
        self._trim(0)
        self.trims += 1
        self._next = self.clock() + self.every
        return True
