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

from monitord.system.collector import Paused

with Paused():  # the command's modules: no garbage, no collection (monitord/system/collector.py)
    from monitord.cli import startup
    from monitord.cli.options import (
        ATTACH,
        FOLLOW,
        LEGACY,
        REFERENCE,
        REPLAY,
        build_parser,
        version_text,
        warn_ignored_dests,
    )
    from monitord.core.readers.workflow_properties import load_properties, split_properties
    from monitord.daemon.config import ConfigError, MonitorConfig, Options, monitor_config
    from monitord.daemon.config import destinations as config_destinations
    from monitord.daemon.config import notification_settings as config_notifications
    from monitord.daemon.errors import MonitordError
    from monitord.daemon.interrupt import ReplayInterrupted
    from monitord.daemon.prestart import prestart_helpers
    from monitord.daemon.run import run_follow, run_replay
    from monitord.system import loglevel
    from monitord.system.logs import configure_logging


PIPE_CLOSED = 141  # 128 + SIGPIPE: the events pipe's reader went away (``-d - | head``)


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
        startup.as_program()
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
        startup.as_program()
    args = list(sys.argv[1:] if argv is None else argv)
    status = run_daemon(args, prog="pegasus-monitord", mode=REFERENCE)
    return _ended(status) if argv is None else status


def _ended(status: int) -> int:
    """The daemon's status, as the program's: after an interrupted replay the process exits at
    once (:func:`~monitord.system.exiting.exit_at_once`), after any other run too when no
    thread is left (:func:`startup.end`)."""
    from monitord.daemon.interrupt import STATUSES
    from monitord.system.exiting import exit_at_once

    if status in STATUSES:
        exit_at_once(status)
    return startup.end(status)


class _Refused(Exception):
    """A command line refused before anything runs: one line on stderr, status 1."""


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
    from sinks.runtime.child import close_spares

    try:
        return _run_daemon(argv, prog=prog, mode=mode, attach=attach, progress=progress)
    finally:
        close_spares()  # a replay's helper the run did not take (its destination failed)


def _run_daemon(
    argv: Sequence[str], *, prog: str, mode: str, attach: Any | None, progress: bool
) -> int:
    """:func:`run_daemon` less the helpers' end: a replay's start as its options are read."""
    try:
        args, config = _prepare(argv, prog=prog, mode=mode, attach=attach)
    except _Refused as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _interrupted_before_running(prog)
    # --- service hand-over (issue 7): `monitord attach`, or -N with a service configured
    if not args.replay and (attach is not None or args.condor_daemon):
        from monitord.cli.service import handover

        handed = handover(config, attach, quiet=getattr(args, "quiet", False))
        if handed is not None:
            return handed
    # --- end service hand-over
    try:
        startup.settle(config)
    except KeyboardInterrupt:
        return _interrupted_before_running(prog)
    return _run_in_one_line(prog, args, config, mode=mode, progress=progress)


def _interrupted_before_running(prog: str) -> int:
    """Ctrl-C before the run's own handler exists (monitord/daemon/interrupt.py): nothing is
    open yet, so one line and the signal's status, never a traceback."""
    print(f"{prog}: interrupted before the run started; nothing was written", file=sys.stderr)
    return 130


def _prepare(
    argv: Sequence[str], *, prog: str, mode: str, attach: Any | None
) -> tuple[argparse.Namespace, MonitorConfig]:
    """The options and the one :class:`MonitorConfig`, checked before anything runs.

    Loading the sinks here takes a second or more on a busy machine, before the run's own
    Ctrl-C handler exists: :func:`run_daemon` turns an interrupt in this window into one line.
    """
    cli_props, rest = split_properties(argv)
    parser = build_parser(prog, mode)
    args = parser.parse_args(rest)
    configure_logging(args.verbose)
    if getattr(args, "quiet", False):
        loglevel.set_level(max(loglevel.level(), logging.ERROR))  # -q: errors only
    args, config = _configure(parser, args, rest, cli_props)
    config = prestart_helpers(config)  # they load their modules while this process does
    _check_before_running(args, config, mode=mode, attach=attach)
    return args, config


def _run_dir(args: argparse.Namespace) -> str:
    return os.path.dirname(os.path.abspath(args.dagman_out))


#: Options that change how a replay runs and mean nothing to a live run (refused there).
_REPLAY_ONLY = {"sql_process": "--sql-process", "read_ahead": "--read-ahead"}


def _configure(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    rest: list[str],
    cli_props: dict[str, str],
) -> tuple[argparse.Namespace, MonitorConfig]:
    """The options with the properties' (``pegasus.monitord.arguments`` parsed after the
    command line's), and the one :class:`MonitorConfig` of them."""
    if args.no_events and args.dest:
        raise _Refused("--no-events conflicts with --dest")
    for dest, option in _REPLAY_ONLY.items():
        if getattr(args, dest) and not args.replay:
            raise _Refused(f"{option} applies to a replay only (-r, monitord replay)")
    try:
        props = load_properties(args.conf, cli_props, _run_dir(args))
    except Exception as exc:
        raise _Refused(f"cannot read properties: {exc}") from None
    if props.get("pegasus.monitord.arguments"):
        extra = [a for a in props["pegasus.monitord.arguments"].split(" ") if a]
        args = parser.parse_args(rest + extra)
    warn_ignored_dests(args)
    if args.condor_daemon and not args.replay:
        try:
            os.setpgid(0, 0)  # pegasus-dagman's -N: lead our own process group
        except OSError:
            pass
    try:
        return args, monitor_config(Options.from_args(args), props)
    except ConfigError as exc:
        raise _Refused(str(exc)) from None


def _check_before_running(
    args: argparse.Namespace, config: MonitorConfig, *, mode: str, attach: Any | None
) -> None:
    """Refuse what cannot work (a malformed destination, a missing directory) before anything
    runs; makes ``-o``'s directory."""
    run_dir = _run_dir(args)
    if mode not in (REFERENCE, LEGACY):
        # refused before anything runs (the drop-in, as the reference, runs without it)
        from monitord.cli.checks import malformed_destination

        bad = malformed_destination(config, run_dir)
        if bad is not None:
            raise _Refused(bad)
    if attach is not None and not os.path.isdir(run_dir):  # the file itself may come later
        raise _Refused(f"{args.dagman_out}: no such directory {run_dir}")
    if args.output_dir:
        out = (
            args.output_dir
            if os.path.isabs(args.output_dir)
            else os.path.join(run_dir, args.output_dir)
        )
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            raise _Refused(f"cannot create {out}: {exc.strerror}") from None


def _run_in_one_line(
    prog: str, args: argparse.Namespace, config: MonitorConfig, *, mode: str, progress: bool
) -> int:
    """:func:`_run`, each way it can end said in one line on stderr (never a traceback)."""
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

    shown = progress or not quiet  # a bar (on a terminal) or the summary counts jobs
    counter = ProgressCounter(count_jobs=shown)
    monitor = daemon_monitor(config, observers=[counter])
    run = run_replay(config, monitor) if config.replay else run_follow(config, monitor)
    if shown and sys.stderr.isatty():
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
