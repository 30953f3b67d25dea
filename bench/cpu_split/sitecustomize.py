"""Each Python process's own CPU and its reaped children's, at its end (issue 30, cpu30f).

Put this directory on ``PYTHONPATH`` with ``MONITORD_CPU_LOG=FILE``: every interpreter started
with it (the daemon, the ``--sql-process`` child, ef281cf's forkserver and its child) appends
one line to FILE as it ends, through ``atexit`` or ``os._exit`` (the daemon and the child skip
the interpreter's teardown).  ``/usr/bin/time`` counts only the processes the daemon waits for:
ef281cf's SQL child, a child of the never-waited-for forkserver, was missing from its figures.

    MONITORD_CPU_LOG=/tmp/cpu.log PYTHONPATH=.:bench/cpu_split python -m monitord.cli replay ...
"""

from __future__ import annotations

import atexit
import os
import resource
import sys
from typing import NoReturn

_LOG = os.environ.get("MONITORD_CPU_LOG")
_real_exit = os._exit


def _report() -> None:
    own, reaped = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    line = (
        f"pid={os.getpid()} argv={' '.join(sys.argv[:3])[-48:]!r} "
        f"self={own.ru_utime + own.ru_stime:.2f} children={reaped.ru_utime + reaped.ru_stime:.2f} "
        f"maxrss_kb={own.ru_maxrss}\n"
    )
    with open(str(_LOG), "a") as fh:
        fh.write(line)


def _exit(status: int) -> NoReturn:
    try:
        split = sys.modules.get("child_split")
        if split is not None:  # its report is an atexit hook, which os._exit skips
            split._report()
        _report()
    finally:
        _real_exit(status)


if _LOG:
    atexit.register(_report)
    os._exit = _exit


if os.environ.get("MONITORD_CHILD_SPLIT"):
    import child_split  # noqa: F401  (the SQL child's CPU by stage: its docstring)

if os.environ.get("MONITORD_FN_SPLIT"):
    import fn_split  # noqa: F401  (the daemon's thread CPU in named functions: its docstring)

if os.environ.get("MONITORD_THREAD_LOG"):
    import thread_split  # noqa: F401  (the daemon's CPU by thread, and its collector's)
