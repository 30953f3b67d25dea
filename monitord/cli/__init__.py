"""Command lines: ``monitord <command> ...`` and the drop-in ``pegasus-monitord [options] <wf>.dag.dagman.out``.

``monitord --help`` lists the commands (replay, follow, attach, serve, status, play, plugins,
demo); ``monitord`` given the reference's options instead of a command runs the daemon as
``pegasus-monitord`` would.  ``pegasus-monitord`` accepts exactly the reference's options (behaviour
doc §9.1) and shows nothing the reference does not; ``monitord replay``/``follow`` add a progress
display on a terminal and a summary line (``-q`` for neither, and errors only in the log).
Errors end with one line on stderr and a non-zero status, never a traceback.

Exit status of ``monitord replay``: non-zero when a requested destination does not hold every
event at the end (refused, unreachable, only spooled: the line names it, the spool, and says
to rerun), when no DAGMan line was recognised, and for a malformed destination (refused before
anything runs).  The drop-in forms keep the reference's leniency (a bad destination disables
only itself) but fail when the events reached none.  A reader that closes the events pipe
(``-d - | head``) ends the output quietly, with status 141 (128 + SIGPIPE, as a tool the
signal ends) and a summary saying how many events it did not take.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from monitord.cli.checks import whole_number
from monitord.core.readers.workflow_properties import load_properties, split_properties
from monitord.daemon.config import ConfigError, MonitorConfig, Options, monitor_config
from monitord.daemon.config import destinations as config_destinations
from monitord.daemon.config import notification_settings as config_notifications
from monitord.daemon.errors import MonitordError
from monitord.daemon.interrupt import ReplayInterrupted
from monitord.daemon.run import run_follow, run_replay
from monitord.system import loglevel
from monitord.system.logs import configure_logging

log = structlog.get_logger("monitord")


_positive_or_zero = whole_number(0)
PIPE_CLOSED = 141  # 128 + SIGPIPE: the events pipe's reader went away (``-d - | head``)


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
    ``dests_ignored`` for the warning (:func:`_warn_ignored_dests`)."""

    def __call__(self, parser: Any, ns: argparse.Namespace, value: Any, opt: Any = None) -> None:
        if ns.dest is not None:
            ns.dests_ignored = (*getattr(ns, "dests_ignored", ()), ns.dest)
        ns.dest = value


def _warn_ignored_dests(args: argparse.Namespace) -> None:
    ignored = getattr(args, "dests_ignored", ())
    if ignored:
        from monitord.system.secrets import mask_url_passwords as masked

        log.warning(
            "several -d given: pegasus-monitord writes to one, the last, as the reference "
            "(`monitord replay`/`follow` write to each)",
            used=masked(args.dest),
            ignored=[masked(d) for d in ignored],
        )


def build_parser(prog: str = "pegasus-monitord", mode: str = REFERENCE) -> argparse.ArgumentParser:
    """The daemon's options; ``mode`` adds what a ``monitord`` command has beyond the reference."""
    p = argparse.ArgumentParser(
        prog=prog,
        description=_DESCRIPTIONS[mode],
        epilog="Java-style properties may come first: -Dpegasus.monitord.encoding=json ...",
    )
    p.add_argument("dagman_out", help="the workflow's <wf>.dag.dagman.out")
    p.add_argument("--version", action="version", version=version_text(prog))
    p.add_argument(
        "-a",
        "--adjust",
        type=float,
        default=0.0,
        help="seconds added to every dagman.out timestamp",
    )
    p.add_argument(
        "-N",
        "--condor-daemon",
        action="store_true",
        help="started by pegasus-dagman (process-group leader)",
    )
    p.add_argument("-j", "--job", dest="jobstate", help="alternative jobstate file name")
    p.add_argument("-o", "--output-dir", help="directory for jobstate.log and monitord.* files")
    p.add_argument("--conf", help="properties file (default: the workflow's, then ~/.pegasusrc)")
    p.add_argument("--no-recursive", action="store_true", help="do not follow sub-workflows")
    p.add_argument(
        "--no-database",
        "--nodatabase",
        "--no-events",
        dest="no_events",
        action="store_true",
        help="no event sinks at all (jobstate.log only)",
    )
    p.add_argument(
        "--no-notifications",
        "--no-notification",
        dest="no_notifications",
        action="store_true",
        help="do not run the workflow's .notify scripts",
    )
    p.add_argument(
        "--notifications-max",
        type=_positive_or_zero,
        default=None,
        metavar="N",
        help="notification scripts running at once (default 10; 0 turns them off)",
    )
    p.add_argument(
        "--notifications-timeout",
        type=_positive_or_zero,
        default=None,
        metavar="SECONDS",
        help="kill a notification script after this long (default 0: never)",
    )
    p.add_argument(
        "-S",
        "--sim",
        type=int,
        default=None,
        help="sleep MS milliseconds after each line (developer)",
    )
    replay_help = "rebuild the outputs of a finished workflow"
    p.add_argument(
        "-r",
        "--replay",
        action="store_true",
        default=mode == REPLAY,
        help=argparse.SUPPRESS if mode in (REPLAY, FOLLOW) else replay_help,
    )
    p.add_argument(
        "--db-stats",
        action="store_true",
        help="accepted for compatibility (the reference's database statistics; no effect)",
    )
    p.add_argument(
        "--keep-state", action="store_true", help="keep finished jobs when DAGMan restarts"
    )
    p.add_argument("--skip-stdout", action="store_true", help="do not store job stdout/stderr text")
    p.add_argument("-f", "--force", action="store_true", help="skip the already-running check")
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more log detail: -v debug, -vv trace (SIGUSR1/SIGUSR2 change it while running)",
    )
    p.add_argument("--fast-start", action="store_true", help="accepted; fast start is the default")
    several = mode in (REPLAY, FOLLOW, ATTACH)
    p.add_argument(
        "-d",
        "--dest",
        action=_SeveralDests if several else _LastDest,
        help="event destination: SQLAlchemy URL, file:// URL, path, or - for stdout"
        + ("; repeat it for several, each gets every event" if several else ""),
    )
    p.add_argument(
        "-e",
        "--encoding",
        choices=("bp", "json"),
        default=None,
        help="event file encoding: NetLogger bp (default) or JSON lines",
    )
    p.add_argument(
        "--no-dashboard",
        action="store_true",
        help="do not record the workflow in the dashboard database (~/.pegasus/workflow.db)",
    )
    p.add_argument(
        "--poll",
        action="store_true",
        help="live: poll dagman.out instead of using inotify (also MONITORD_FORCE_POLLING=1)",
    )
    p.add_argument(
        "--state-dir",
        help="live: where crash-resume snapshots are kept (default ~/.local/state/monitord)",
    )
    if mode != REFERENCE:
        p.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="no progress display (shown on a terminal), no summary line, errors only in the log",
        )
    if mode == ATTACH:  # taken out of argv by split_attach_options; listed here for --help
        p.add_argument(
            "--wait", action="store_true", help="wait until the service has followed it to its end"
        )
        p.add_argument(
            "--config",
            metavar="FILE",
            help="the service's configuration, as for `monitord serve` (where its socket is)",
        )
    return p


def destinations(args: argparse.Namespace, props: dict[str, str]) -> list[str | None]:
    """The event destinations of a parsed command line (see :mod:`monitord.daemon.config`)."""
    return config_destinations(Options.from_args(args), props)


def notification_settings(args: argparse.Namespace, props: dict[str, str]) -> dict[str, Any]:
    """The notification options of a parsed command line (see :mod:`monitord.daemon.config`)."""
    return config_notifications(Options.from_args(args), props)


@dataclass(frozen=True)
class Command:
    """One ``monitord <name>``: what ``monitord --help`` says of it, and what runs it."""

    name: str
    summary: str
    run: Callable[[list[str]], int]


def _replay(argv: list[str]) -> int:
    return run_daemon(argv, prog="monitord replay", mode=REPLAY)


def _follow(argv: list[str]) -> int:
    return run_daemon(argv, prog="monitord follow", mode=FOLLOW)


def _attach(argv: list[str]) -> int:
    from monitord.cli.service import split_attach_options

    attach_opts, rest = split_attach_options(argv)
    return run_daemon(rest, prog="monitord attach", mode=ATTACH, attach=attach_opts)


def _serve(argv: list[str]) -> int:
    from monitord.cli.service import serve_main

    return serve_main(argv)


def _ingest(argv: list[str]) -> int:
    from monitord.cli.ingest import ingest_main

    return ingest_main(argv)


def _status(argv: list[str]) -> int:
    from monitord.cli.status import main as status_main

    return status_main(argv)


def _play(argv: list[str]) -> int:
    from monitord.tools.player import main as play_main

    return play_main(argv)


def _plugins(argv: list[str]) -> int:
    try:
        from sinks.plugins.listing import main as plugins_main
    except ImportError as exc:
        print(f"monitord plugins: error: plugin support is not installed ({exc})", file=sys.stderr)
        return 1
    return int(plugins_main(argv))


def _demo(argv: list[str]) -> int:
    from monitord.cli.demo import demo

    def replay(args: list[str], progress: bool) -> int:
        return run_daemon(args, prog="monitord demo", mode=REPLAY, progress=progress)

    return demo(argv, replay)


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(
            "replay", "rebuild the outputs of a finished workflow (pegasus-monitord -r)", _replay
        ),
        Command("follow", "follow a running workflow to its end (pegasus-monitord)", _follow),
        Command("attach", "hand a workflow to the running service", _attach),
        Command("serve", "follow every workflow of this host in one service", _serve),
        Command("ingest", "load every host's events from RabbitMQ into one database", _ingest),
        Command("status", "show the workflows the service follows, with job counts", _status),
        Command("play", "re-enact a finished workflow line by line, for a live daemon", _play),
        Command("plugins", "list the event-sink plugins installed", _plugins),
        Command("demo", "make an example workflow, replay it, show what was recorded", _demo),
    )
}


def top_parser() -> argparse.ArgumentParser:
    """``monitord --help``: the commands, and the pegasus-monitord form."""
    p = argparse.ArgumentParser(
        prog="monitord",
        usage="monitord <command> [options] ...\n"
        "       monitord [pegasus-monitord options] <wf>.dag.dagman.out",
        description="Record Pegasus workflows in the Stampede database (a drop-in "
        "pegasus-monitord), one workflow at a time or all of a host's in one service.",
        epilog="`monitord <command> --help` shows a command's options.  Without a command, "
        "monitord takes pegasus-monitord's options (e.g. `monitord -r wf.dag.dagman.out`).",
    )
    p.add_argument("--version", action="version", version=version_text("monitord"))
    commands = p.add_subparsers(title="commands", metavar="<command>")
    for command in COMMANDS.values():
        commands.add_parser(command.name, help=command.summary, add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``monitord``: a command, or pegasus-monitord's options."""
    if argv is None:
        from monitord.daemon.proctitle import hide_secrets_in_title

        hide_secrets_in_title(sys.argv)
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        top_parser().print_help(sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "--version"):
        top_parser().parse_args(args[:1])  # prints, then exits 0
    command = COMMANDS.get(args[0])
    if command is not None:
        status = command.run(args[1:])
        return _ended(status) if argv is None and command.name == "replay" else status
    from monitord.cli.checks import not_a_command

    unknown = not_a_command(args[0], list(COMMANDS))
    if unknown is not None:
        print(unknown, file=sys.stderr)
        return 2
    status = run_daemon(args, prog="monitord", mode=LEGACY)
    return _ended(status) if argv is None else status


def pegasus_main(argv: Sequence[str] | None = None) -> int:
    """``pegasus-monitord``: the reference's options, nothing shown beyond what it shows."""
    if argv is None:
        from monitord.daemon.proctitle import hide_secrets_in_title

        hide_secrets_in_title(sys.argv)
    args = list(sys.argv[1:] if argv is None else argv)
    status = run_daemon(args, prog="pegasus-monitord", mode=REFERENCE)
    return _ended(status) if argv is None else status


def _ended(status: int) -> int:
    """The daemon's status, as the program's: after an interrupted replay the process exits at
    once (:func:`~monitord.daemon.interrupt.exit_at_once`)."""
    from monitord.daemon.interrupt import STATUSES, exit_at_once

    if status in STATUSES:
        exit_at_once(status)
    return status


def run_daemon(
    argv: Sequence[str],
    *,
    prog: str,
    mode: str,
    attach: Any | None = None,
    progress: bool = False,
) -> int:
    """Parse the daemon's options, then replay or follow the workflow (or hand it over).

    ``progress``: the progress display on a terminal even with ``-q`` (``monitord demo``).
    """
    cli_props, rest = split_properties(argv)
    parser = build_parser(prog, mode)
    args = parser.parse_args(rest)
    configure_logging(args.verbose)
    if getattr(args, "quiet", False):
        loglevel.set_level(max(loglevel.level(), logging.ERROR))  # -q: errors only
    if args.no_events and args.dest:
        print(f"{prog}: error: --no-events conflicts with --dest", file=sys.stderr)
        return 1
    run_dir = os.path.dirname(os.path.abspath(args.dagman_out))
    try:
        props = load_properties(args.conf, cli_props, run_dir)
    except Exception as exc:
        print(f"{prog}: error: cannot read properties: {exc}", file=sys.stderr)
        return 1
    if props.get("pegasus.monitord.arguments"):
        extra = [a for a in props["pegasus.monitord.arguments"].split(" ") if a]
        args = parser.parse_args(rest + extra)
    _warn_ignored_dests(args)
    if args.condor_daemon and not args.replay:
        try:
            os.setpgid(0, 0)  # pegasus-dagman's -N: lead our own process group
        except OSError:
            pass
    try:
        config = monitor_config(Options.from_args(args), props)
    except ConfigError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    if mode not in (REFERENCE, LEGACY):
        # refused before anything runs (the drop-in, as the reference, runs without it)
        from monitord.cli.checks import malformed_destination

        bad = malformed_destination(config, run_dir)
        if bad is not None:
            print(f"{prog}: error: {bad}", file=sys.stderr)
            return 1
    if attach is not None and not os.path.isdir(run_dir):  # the file itself may come later
        print(f"{prog}: error: {args.dagman_out}: no such directory {run_dir}", file=sys.stderr)
        return 1
    if args.output_dir:
        out = (
            args.output_dir
            if os.path.isabs(args.output_dir)
            else os.path.join(run_dir, args.output_dir)
        )
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            print(f"{prog}: error: cannot create {out}: {exc.strerror}", file=sys.stderr)
            return 1
    # --- service hand-over (issue 7): `monitord attach`, or -N with a service configured
    if not args.replay and (attach is not None or args.condor_daemon):
        from monitord.cli.service import handover

        handed = handover(config, attach, quiet=getattr(args, "quiet", False))
        if handed is not None:
            return handed
    # --- end service hand-over
    try:
        return _run(
            config,
            quiet=mode == REFERENCE or args.quiet,
            judged=mode in (REPLAY, FOLLOW, ATTACH),
            progress=progress,
        )
    except ReplayInterrupted as exc:  # not an error: the one line, the signal's status
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.exit_code
    except MonitordError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # outside the replay's own handler (monitord/daemon/interrupt.py)
        if not args.replay:
            return 1
        print(
            f"{prog}: replay interrupted; run the same command again to replay from the start",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (-vv shows it)
        from monitord.cli.checks import unexpected

        return unexpected(prog, exc, args.verbose)


def _run(config: MonitorConfig, *, quiet: bool, judged: bool, progress: bool = False) -> int:
    """Replay or follow; unless ``quiet``, with progress on a terminal and a summary line.

    ``judged`` (``monitord replay``, ``follow``, ``attach``): a replay fails when no DAGMan
    line was recognised or a requested destination lacks events.  The drop-in forms (``pegasus-monitord``,
    ``monitord [options] <dagman.out>``) end as the reference does, but fail when the events
    reached none of the destinations.
    """
    from monitord.daemon.undelivered import check_delivered, closed_by_reader

    if quiet and not judged:
        return asyncio.run(run_replay(config) if config.replay else run_follow(config))
    from monitord.cli.progress import (
        ProgressCounter,
        no_dagman_lines,
        run_with_progress,
        summary_line,
    )
    from monitord.daemon.run import daemon_monitor

    counter = ProgressCounter()
    monitor = daemon_monitor(config, observers=[counter])
    run = run_replay(config, monitor) if config.replay else run_follow(config, monitor)
    if (progress or not quiet) and sys.stderr.isatty():
        status = asyncio.run(
            run_with_progress(run, counter, replay=config.replay, stream=sys.stderr)
        )
    else:
        status = asyncio.run(run)
    if judged and config.replay:
        nothing = no_dagman_lines(counter)
        if nothing is not None:
            raise MonitordError(nothing)
        check_delivered(monitor, strict=True)
    if not quiet:
        print(summary_line(monitor, counter, replay=config.replay), file=sys.stderr)
    if judged and status == 0 and closed_by_reader(monitor.outputs.workers):
        return PIPE_CLOSED
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
