"""The program's start and end around a daemon run: what the interpreter would otherwise redo.

``settle``: once the command line is parsed and the sinks are loaded (SQLAlchemy when this
process builds a SQL sink: the run's next step anyway; a ``--sql-process`` replay's daemon
without the dashboard never loads it, bench/README.md "Issue 30, thirteenth session:
lazysql30k"), everything alive is start-up state (modules, classes, functions: ~65,000
objects) that lives as long as the process.  ``gc.freeze`` moves it out of the cyclic
collector's generations, so the full collections a replay's growing heap triggers no longer
walk it again and again (a 2,000-job replay: ~0.6 s of its ~3.9 s CPU; bench/README.md
"Issue 30, sixth session: start30").

``settle`` also raises the collector's young threshold (700 allocations net to
:data:`YOUNG`): a replay's events live until the sinks have written them, so at 700 most
outlived their young collection and were walked again by the older ones (20,000 jobs: 1,466
young, 134 middle and 12 full collections, ~0.7 s of the daemon's CPU; at 10,000: 19, 1, 0,
~0.1 s, and +2 MB peak RSS; bench/README.md "Issue 30, tenth session: daemon30g").

``end``: after a run every sink is closed and every thread joined; the interpreter's teardown
would then free the whole heap object by object (~0.1 s for a 10-job replay, more for a large
one) only to exit.  The process exits at once instead, its streams flushed, when no other
thread is left.

Both apply to the program only (``monitord``, ``pegasus-monitord``, ``python -m
monitord.cli``): a test calling :func:`monitord.cli.main` in-process keeps its collector and
its interpreter (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from monitord.system import collector

if TYPE_CHECKING:
    from monitord.daemon.config import MonitorConfig

_program = False
YOUNG = 10_000  # the collector's young threshold in the program (the interpreter's: 700)


def as_program() -> None:
    """This process is the command (its arguments are ``sys.argv``): settle and end apply."""
    global _program
    _program = True


def settle(config: MonitorConfig) -> None:
    """Load the sink factories (and the SQL sinks' modules if this process builds one: they
    are frozen too), then freeze the start-up state out of the collector's reach and make its
    young collections rarer."""
    if not _program:
        return
    from monitord.daemon.prestart import sql_in_daemon
    from sinks.registry import installed

    with collector.Paused():  # ~60,000 objects and no garbage (monitord/system/collector.py)
        installed()
        if sql_in_daemon(config):
            import sinks.sql.dashboard
            import sinks.sql.sink  # noqa: F401
    collector.settle(YOUNG)


def end(status: int) -> int:
    """Exit now with ``status`` when this is the program and no other thread runs; else return
    it (the caller exits through the interpreter)."""
    if _program and threading.active_count() == 1:
        from monitord.system.exiting import exit_at_once

        exit_at_once(status)
    return status
