"""Workflow player: writes a finished submit directory into a fresh one as DAGMan would.

Live following can only be tested against a workflow that is still being written.  The
player takes a *finished* submit directory and re-enacts it: everything HTCondor and the
planner wrote before DAGMan started is copied first; then every ``dagman.out`` is appended
line by line at a chosen speed, and each job's ``.out[.NNN]``/``.err[.NNN]`` appears just
before the line saying that the job ended (as HTCondor transfers outputs before it logs
the termination).  A sub-workflow's ``dagman.out`` starts when its parent logs the submit
of the sub-workflow job and is played concurrently with the parent; the parent's
termination line for that job waits until the sub-workflow has been played through.  A
dagman.out holding several DAGMan runs (rescue DAGs) is played through, optionally with a
pause between the runs.

Layers: :func:`scan` reads the source directory into a :class:`Source`; :func:`plan` (no
I/O) turns it into the ordered list of write actions; :class:`Player` performs them at the
requested rate (``run`` blocks; ``start`` runs it in a thread; :func:`play_async` from a
coroutine).  ``monitord play SRC DEST`` is the command-line front end.

Modules: ``actions`` (what a plan is made of), ``source`` (``scan``), ``sequence``
(``plan``), ``play`` (``Player``, ``play_async``), ``cli`` (``monitord play``).
"""

from monitord.tools.player.actions import Action, Append, Copy, Pause, WriteFile
from monitord.tools.player.cli import main
from monitord.tools.player.play import TICK, Player, PlayStats, play_async
from monitord.tools.player.sequence import plan, run_starts
from monitord.tools.player.source import PlayerError, Source, SourceWorkflow, scan

__all__ = [
    "TICK",
    "Action",
    "Append",
    "Copy",
    "Pause",
    "PlayStats",
    "Player",
    "PlayerError",
    "Source",
    "SourceWorkflow",
    "WriteFile",
    "main",
    "plan",
    "play_async",
    "run_starts",
    "scan",
]
