"""The daemon's command line: ``pegasus-monitord``'s options, and what ``monitord replay``,
``follow`` and ``attach`` add to them (:func:`build_parser`)."""

from __future__ import annotations

import argparse
from typing import Any

import structlog

from monitord.cli.checks import whole_number

log = structlog.get_logger("monitord")

_positive_or_zero = whole_number(0)


def version_text(prog: str) -> str:
    """``monitord 0.1.0`` (the installed distribution's version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("monitord")
    except PackageNotFoundError:  # running from a source tree that is not installed
        ours = "unknown"
    if prog == "pegasus-monitord":
        return f"pegasus-monitord (monitord {ours}, drop-in for Pegasus WMS 5.1.3)"
    return f"monitord {ours}"


# What the daemon's parser is for: the reference's options only, or a `monitord` command.
REFERENCE, REPLAY, FOLLOW, ATTACH, LEGACY = "reference", "replay", "follow", "attach", "legacy"

_DESCRIPTIONS = {
    REFERENCE: "Follow a Pegasus workflow's DAGMan log and record it in the Stampede database.",
    LEGACY: "Follow a Pegasus workflow's DAGMan log and record it in the Stampede database "
    "(pegasus-monitord's options; see `monitord --help` for the commands).",
    REPLAY: "Rebuild every output of a finished workflow (jobstate.log, the Stampede database, "
    "event files) from its submit directory; the same as pegasus-monitord -r.",
    FOLLOW: "Follow a running workflow until DAGMan and every sub-workflow have ended; "
    "catches up first with what is already written (pegasus-monitord without -r).",
    ATTACH: "Hand the workflow to the running monitord service (monitord serve), which follows "
    "it with every other workflow of this host; the daemon's options apply.",
}


class _SeveralDests(argparse.Action):
    """``monitord replay``/``follow``: the first ``-d`` is ``dest``, the others ``more_dests``."""

    def __call__(self, parser: Any, ns: argparse.Namespace, value: Any, opt: Any = None) -> None:
        if ns.dest is None:
            ns.dest = value
        else:
            ns.more_dests = (*getattr(ns, "more_dests", ()), value)


class _LastDest(argparse.Action):
    """The drop-in forms: one ``-d``, the last, as the reference; the others are remembered in
    ``dests_ignored`` for the warning (:func:`warn_ignored_dests`)."""

    def __call__(self, parser: Any, ns: argparse.Namespace, value: Any, opt: Any = None) -> None:
        if ns.dest is not None:
            ns.dests_ignored = (*getattr(ns, "dests_ignored", ()), ns.dest)
        ns.dest = value


def warn_ignored_dests(args: argparse.Namespace) -> None:
    ignored = getattr(args, "dests_ignored", ())
    if ignored:
        from monitord.system.secrets import mask_url_passwords as masked

        log.warning(
            "several -d given: pegasus-monitord writes to one, the last, as the reference "
            "(`monitord replay`/`follow` write to each)",
            used=masked(args.dest),
            ignored=[masked(d) for d in ignored],
        )


# One option: its flags and add_argument's keywords, in the order ``--help`` lists them.
Option = tuple[tuple[str, ...], dict[str, Any]]


def _opt(*flags: str, **kwargs: Any) -> Option:
    return flags, kwargs


# What every form takes, in three runs between which the mode-dependent -r and -d stand.
_RUN_OPTIONS: tuple[Option, ...] = (
    _opt(
        "-a",
        "--adjust",
        type=float,
        default=0.0,
        help="seconds added to every dagman.out timestamp",
    ),
    _opt(
        "-N",
        "--condor-daemon",
        action="store_true",
        help="started by pegasus-dagman (process-group leader)",
    ),
    _opt("-j", "--job", dest="jobstate", help="alternative jobstate file name"),
    _opt("-o", "--output-dir", help="directory for jobstate.log and monitord.* files"),
    _opt("--conf", help="properties file (default: the workflow's, then ~/.pegasusrc)"),
    _opt("--no-recursive", action="store_true", help="do not follow sub-workflows"),
    _opt(
        "--no-database",
        "--nodatabase",
        "--no-events",
        dest="no_events",
        action="store_true",
        help="no event sinks at all (jobstate.log only)",
    ),
    _opt(
        "--no-notifications",
        "--no-notification",
        dest="no_notifications",
        action="store_true",
        help="do not run the workflow's .notify scripts",
    ),
    _opt(
        "--notifications-max",
        type=_positive_or_zero,
        default=None,
        metavar="N",
        help="notification scripts running at once (default 10; 0 turns them off)",
    ),
    _opt(
        "--notifications-timeout",
        type=_positive_or_zero,
        default=None,
        metavar="SECONDS",
        help="kill a notification script after this long (default 0: never)",
    ),
    _opt(
        "-S",
        "--sim",
        type=int,
        default=None,
        help="sleep MS milliseconds after each line (developer)",
    ),
)
_STATE_OPTIONS: tuple[Option, ...] = (
    _opt(
        "--db-stats",
        action="store_true",
        help="accepted for compatibility (the reference's database statistics; no effect)",
    ),
    _opt("--keep-state", action="store_true", help="keep finished jobs when DAGMan restarts"),
    _opt("--skip-stdout", action="store_true", help="do not store job stdout/stderr text"),
    _opt("-f", "--force", action="store_true", help="skip the already-running check"),
    _opt(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more log detail: -v debug, -vv trace (SIGUSR1/SIGUSR2 change it while running)",
    ),
    _opt("--fast-start", action="store_true", help="accepted; fast start is the default"),
)
_OUTPUT_OPTIONS: tuple[Option, ...] = (
    _opt(
        "-e",
        "--encoding",
        choices=("bp", "json"),
        default=None,
        help="event file encoding: NetLogger bp (default) or JSON lines",
    ),
    _opt(
        "--no-dashboard",
        action="store_true",
        help="do not record the workflow in the dashboard database (~/.pegasus/workflow.db)",
    ),
    _opt(
        "--sql-process",
        action="store_const",
        const=True,
        default=None,
        help="replay only: write each SQL database (-d, the default one; not the dashboard) "
        "from a child process, beside the parser on another core (the default for a dagman.out "
        "of 3 MiB or more with two usable cores and a 1-minute load average at least half a "
        "core below them); following keeps the thread",
    ),
    _opt(
        "--sql-thread",
        dest="sql_process",
        action="store_const",
        const=False,
        help="replay only: write the SQL databases from a thread of the daemon, at any size",
    ),
    _opt(
        "--read-ahead",
        action="store_const",
        const=True,
        default=None,
        help="replay only: read and parse the jobs' files in a worker process, ahead of the "
        "parser, on another core (the default wherever a large replay's SQL writer is a child process)",
    ),
    _opt(
        "--no-read-ahead",
        dest="read_ahead",
        action="store_const",
        const=False,
        help="replay only: the parser reads the jobs' files itself, at any size",
    ),
    _opt(
        "--poll",
        action="store_true",
        help="live: poll dagman.out instead of using inotify (also MONITORD_FORCE_POLLING=1)",
    ),
    _opt(
        "--state-dir",
        help="live: where crash-resume snapshots are kept (default ~/.local/state/monitord)",
    ),
)
# `monitord` commands only (not the drop-in's reference options).
_QUIET = _opt(
    "-q",
    "--quiet",
    action="store_true",
    help="no progress display (shown on a terminal), no summary line, errors only in the log",
)
# `monitord attach`: taken out of argv by split_attach_options; listed here for --help.
_ATTACH_OPTIONS: tuple[Option, ...] = (
    _opt("--wait", action="store_true", help="wait until the service has followed it to its end"),
    _opt(
        "--config",
        metavar="FILE",
        help="the service's configuration, as for `monitord serve` (where its socket is)",
    ),
)


def _options(mode: str) -> list[Option]:
    """Every option of ``mode``'s parser, in order: -r is implied by ``monitord replay`` and
    ``follow`` (hidden), and -d repeats for the ``monitord`` commands."""
    several = mode in (REPLAY, FOLLOW, ATTACH)
    replay = _opt(
        "-r",
        "--replay",
        action="store_true",
        default=mode == REPLAY,
        help=argparse.SUPPRESS
        if mode in (REPLAY, FOLLOW)
        else "rebuild the outputs of a finished workflow",
    )
    dest = _opt(
        "-d",
        "--dest",
        action=_SeveralDests if several else _LastDest,
        help="event destination: SQLAlchemy URL, file:// URL, path, or - for stdout"
        + ("; repeat it for several, each gets every event" if several else ""),
    )
    return [
        *_RUN_OPTIONS,
        replay,
        *_STATE_OPTIONS,
        dest,
        *_OUTPUT_OPTIONS,
        *(() if mode == REFERENCE else (_QUIET,)),
        *(_ATTACH_OPTIONS if mode == ATTACH else ()),
    ]


def build_parser(prog: str = "pegasus-monitord", mode: str = REFERENCE) -> argparse.ArgumentParser:
    """The daemon's options; ``mode`` adds what a ``monitord`` command has beyond the reference."""
    p = argparse.ArgumentParser(
        prog=prog,
        description=_DESCRIPTIONS[mode],
        epilog="Java-style properties may come first: -Dpegasus.monitord.encoding=json ...",
    )
    p.add_argument("dagman_out", help="the workflow's <wf>.dag.dagman.out")
    p.add_argument("--version", action="version", version=version_text(prog))
    for flags, kwargs in _options(mode):
        p.add_argument(*flags, **kwargs)
    return p
