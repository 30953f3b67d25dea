"""``monitord play SRC DEST``: the player's command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from monitord.tools.player.actions import Append
from monitord.tools.player.play import Player, PlayStats
from monitord.tools.player.source import PlayerError

REFRESH = 0.25  # seconds between two updates of the bar


def main(argv: Sequence[str]) -> int:
    """``monitord play SRC DEST``: re-enact a finished submit directory for a live daemon."""
    p = argparse.ArgumentParser(
        prog="monitord play",
        description="Write a finished Pegasus submit directory into DEST as DAGMan would, "
        "line by line, so that a live pegasus-monitord can follow it.",
    )
    p.add_argument("src", help="a finished submit directory (with <wf>.dag.dagman.out)")
    p.add_argument("dest", help="a new (or empty) directory to write into")
    p.add_argument(
        "--lines-per-second",
        type=float,
        default=200.0,
        metavar="N",
        help="pace of dagman.out (default %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=None, help="random (reproducible) gaps instead of even ones"
    )
    p.add_argument(
        "--pause", type=float, default=0.0, help="seconds between two DAGMan runs (rescue DAGs)"
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress display (shown on a terminal)"
    )
    args = p.parse_args(list(argv))
    if args.lines_per_second <= 0:
        p.error("--lines-per-second must be positive")
    if os.path.isdir(args.dest) and os.listdir(args.dest):
        print(f"monitord play: error: {args.dest} is not empty", file=sys.stderr)
        return 1
    try:
        player = Player(
            args.src,
            args.dest,
            lines_per_second=args.lines_per_second,
            pause=args.pause,
            seed=args.seed,
        )
        if args.quiet or not sys.stderr.isatty():
            stats = player.run()
        else:
            stats = _run_with_progress(player)
    except (PlayerError, OSError) as exc:
        print(f"monitord play: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 1
    print(f"played {stats.lines} lines and {stats.files} job files in {stats.seconds:.1f} s")
    return 0


def _run_with_progress(player: Player) -> PlayStats:
    """Play in a thread while a bar on the terminal shows the lines written (a play of a big
    workflow at the default pace takes minutes)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    total = sum(1 for action in player.actions if isinstance(action, Append))
    progress = Progress(
        TextColumn("playing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("lines"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
    with progress:
        task = progress.add_task("playing", total=total or None)
        player.start()
        try:
            while player.is_alive():
                progress.update(task, completed=player.stats.lines)
                time.sleep(REFRESH)
        except KeyboardInterrupt:
            player.stop.set()
            player.join(5)
            raise
        progress.update(task, completed=player.stats.lines)
    return player.join()
