"""monitord/system/heap.py: the freed heap given back to the OS, at most every few seconds."""

from __future__ import annotations

import pytest

from monitord.system.heap import HeapTrimmer


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_trim_at_most_every_period() -> None:
    now = [100.0]
    trimmer = HeapTrimmer(every=2.0, clock=lambda: now[0])
    if not trimmer.available:
        pytest.skip("no malloc_trim in this C library")
    assert not trimmer.due_trim()  # not before the first period
    now[0] = 102.0
    assert trimmer.due_trim()
    now[0] = 103.9
    assert not trimmer.due_trim()
    now[0] = 104.0
    assert trimmer.due_trim()
    assert trimmer.trims == 2


def test_a_trim_gives_freed_pages_back() -> None:
    """Objects freed among live ones leave their pages in RSS until the heap is trimmed (the
    daemon's batches and records freed among the jobs' state, issue 30)."""
    trimmer = HeapTrimmer(every=0.0)
    if not trimmer.available:
        pytest.skip("no malloc_trim in this C library")
    blocks = [bytes(2048) for _ in range(40_000)]  # ~80 MB, above pymalloc's small objects
    kept = blocks[::16]  # live ones scattered through the heap
    del blocks
    before = _rss_kb()
    assert trimmer.due_trim()
    after = _rss_kb()
    assert before - after > 40_000, (before, after)  # most of the freed ~75 MB
    assert len(kept) == 2500
