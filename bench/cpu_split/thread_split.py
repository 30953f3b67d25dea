"""The daemon's CPU by thread, and the cyclic collector's, as it ends (issue 30, daemon30j).

With ``bench/cpu_split`` on ``PYTHONPATH`` and ``MONITORD_THREAD_LOG=FILE`` (its
``sitecustomize`` imports this module then): a thread of the process that imports
``monitord.cli`` (the daemon, not its helpers) reads every thread's CPU seconds from
``/proc/self/task/TID/stat`` every 50 ms (the helpers poll nothing), named as ``threading`` names them (the kernel's
names are all ``python``), and the daemon appends one line to FILE as it ends: each thread's
last figure (``parser_0``, ``sink-sql`` the feeder, ``MainThread``; ``cpu-poll`` is this
one's own cost), then the collector's collections by thread and generation (``gc.callbacks``,
thread CPU).  A thread that ended loses at most its last 50 ms.  ``bench/timeline.py`` says
the same from outside, per time bin; this is one line per run, to put beside the processes'
figures of ``MONITORD_CPU_LOG``.  A bench tool: the product has no switch for it.

    MONITORD_CPU_LOG=/tmp/cpu.log MONITORD_THREAD_LOG=/tmp/thr.log \\
    PYTHONPATH=TREE:bench/cpu_split python -m monitord.cli replay ...
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

_LOG = os.environ.get("MONITORD_THREAD_LOG")
_PERIOD = 0.05
_last: dict[str, tuple[str, float]] = {}  # tid -> (thread name, CPU seconds)
_collected: dict[tuple[str, int], list[float]] = {}  # (thread, generation) -> [n, seconds]
_began = [0.0]


def _poll() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    names = {str(t.native_id): t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        name = names.get(tid) or _last.get(tid, ("?", 0.0))[0]
        _last[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)


def _loop() -> None:
    while True:
        _poll()
        time.sleep(_PERIOD)


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _began[0] = time.thread_time()
        return
    key = (threading.current_thread().name, info["generation"])
    spent = _collected.setdefault(key, [0, 0.0])
    spent[0] += 1
    spent[1] += time.thread_time() - _began[0]


def _report() -> None:
    if "monitord.cli" not in sys.modules or not _LOG:
        return
    _poll()
    threads = " ".join(f"{n}={s:.2f}" for n, s in sorted(_last.values(), key=lambda v: -v[1]))
    collections = " ".join(
        f"{name}/gen{gen}={int(n)}x{s:.3f}s" for (name, gen), (n, s) in sorted(_collected.items())
    )
    with open(_LOG, "a") as out:
        out.write(f"pid={os.getpid()} {threads} | gc {collections or 'none'}\n")


def _exit(status: int, _real: Callable[[int], Any] = os._exit) -> None:
    try:
        _report()
    finally:
        _real(status)


# the helpers (``sinks/runtime/child.py``: the SQL child, the read-ahead worker) poll nothing:
# the poller's CPU would be in their figures
_HELPER = sys.orig_argv[1:2] and sys.orig_argv[1].endswith("runtime/child.py")

if _LOG and not _HELPER:
    threading.Thread(target=_loop, name="cpu-poll", daemon=True).start()
    gc.callbacks.append(_on_collection)
    atexit.register(_report)
    os._exit = _exit  # type: ignore[assignment]  # the daemon skips the interpreter's teardown
