"""The cyclic collector of a fresh interpreter once some code ran: a subprocess, so the test
process keeps its own collector (``monitord/system/collector.py`` ``settle`` and its callers)."""

from __future__ import annotations

import subprocess
import sys
from typing import NamedTuple


class Collector(NamedTuple):
    """What the code left: the frozen objects, the three thresholds, what else it printed."""

    frozen: int
    threshold: list[int]
    printed: list[str]


def collector_after(code: str) -> Collector:
    """Run ``code`` (``gc`` and ``sys`` imported) in a fresh interpreter, then read its
    collector."""
    program = f"import gc, sys\n{code}\nprint(gc.get_freeze_count(), *gc.get_threshold())\n"
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    *printed, last = proc.stdout.splitlines()
    frozen, *threshold = (int(each) for each in last.split())
    return Collector(frozen, threshold, printed)
