"""The program's start and end around a daemon run: what the interpreter would otherwise redo.

``settle``: once the command line is parsed and the sinks are loaded (SQLAlchemy: the run's
next step anyway), everything alive is start-up state (modules, classes, functions: ~65,000
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

from monitord.system import collector

_program = False
YOUNG = 10_000  # the collector's young threshold in the program (the interpreter's: 700)


def as_program() -> None:
    """This process is the command (its arguments are ``sys.argv``): settle and end apply."""
    global _program
    _program = True


def settle() -> None:
    """Load the sink factories, then freeze the start-up state out of the collector's reach
    and make its young collections rarer."""
    if not _program:
        return
    from sinks.registry import installed

    installed()
    collector.settle(YOUNG)


def end(status: int) -> int:
    """Exit now with ``status`` when this is the program and no other thread runs; else return
    it (the caller exits through the interpreter)."""
    if _program and threading.active_count() == 1:
        from monitord.system.exiting import exit_at_once

        exit_at_once(status)
    return status
