"""Command line: ``pegasus-monitord [options] <wf>.dag.dagman.out`` (drop-in), and ``monitord demo``.

Every option of the reference is accepted (behaviour doc §9.1); the ones that
belong to live following and notifications are parsed and stored for the
daemon.  Errors end with one line on stderr and a non-zero status, never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import structlog

from monitord.monitor import MonitorConfig, MonitordError, run_follow, run_replay

log = structlog.get_logger("monitord")


def _positive_or_zero(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pegasus-monitord",
        description="Follow a Pegasus workflow's DAGMan log and record it in the Stampede database.",
    )
    p.add_argument("dagman_out", help="the workflow's <wf>.dag.dagman.out")
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
    p.add_argument("--conf", help="properties file")
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
        "--no-notifications", "--no-notification", dest="no_notifications", action="store_true"
    )
    p.add_argument("--notifications-max", type=_positive_or_zero, default=None)
    p.add_argument("--notifications-timeout", type=_positive_or_zero, default=None)
    p.add_argument(
        "-S",
        "--sim",
        type=int,
        default=None,
        help="sleep MS milliseconds after each line (developer)",
    )
    p.add_argument(
        "-r", "--replay", action="store_true", help="rebuild the outputs of a finished workflow"
    )
    p.add_argument("--db-stats", action="store_true")
    p.add_argument(
        "--keep-state", action="store_true", help="keep finished jobs when DAGMan restarts"
    )
    p.add_argument("--skip-stdout", action="store_true", help="do not store job stdout/stderr text")
    p.add_argument("-f", "--force", action="store_true", help="skip the already-running check")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.add_argument("--fast-start", action="store_true", help="accepted; fast start is the default")
    p.add_argument(
        "-d", "--dest", help="event destination: SQLAlchemy URL, file:// URL, path, or - for stdout"
    )
    p.add_argument("-e", "--encoding", choices=("bp", "json"), default=None)
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
    return p


def split_properties(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Leading ``-Dkey=value`` / ``-D key=value`` arguments (Java style, doc §9.1)."""
    props: dict[str, str] = {}
    args = list(argv)
    while args and args[0].startswith("-D"):
        item = args.pop(0)[2:]
        if not item and args:
            item = args.pop(0)
        key, _, value = item.partition("=")
        if key in ("pegasus.properties", "pegasus.user.properties"):
            print(f"pegasus-monitord: warning: -D{key} is not supported, ignored", file=sys.stderr)
            continue
        props[key] = value
    return props, args


def configure_logging(verbosity: int) -> None:
    """Console logging at INFO (-v DEBUG, -vv TRACE); the level can change later (SIGUSR1/2).

    The threshold lives in :mod:`monitord.loglevel` and every logger reads it per call,
    so caching the loggers (fast) does not freeze the level.
    """
    from monitord import loglevel

    loglevel.set_level(loglevel.verbosity_level(verbosity))
    structlog.configure(
        processors=[
            loglevel.add_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=loglevel.GatedLogger,
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def load_properties(conf: str | None, cli_props: dict[str, str], run_dir: str) -> dict[str, str]:
    from monitord.readers.properties import read_properties

    props: dict[str, str] = {}
    candidates = []
    if conf:
        candidates.append(conf)
    else:
        try:
            from monitord.readers.braindump import read_braindump

            bd = read_braindump(run_dir)
            if bd.properties:
                candidates.append(os.path.join(run_dir, str(bd.properties)))
        except Exception:  # noqa: BLE001 - reported later by the daemon itself
            pass
        candidates.append(os.path.expanduser("~/.pegasusrc"))
    for path in candidates:
        try:
            props = read_properties(path)
            break
        except OSError:
            continue
    props.update(cli_props)
    return props


def destinations(args: argparse.Namespace, props: dict[str, str]) -> list[str | None]:
    """Event destinations: ``-d`` wins, then properties; None stands for the default DB (doc §6.4)."""
    primary = (
        args.dest
        or props.get("pegasus.catalog.workflow.url")
        or props.get("pegasus.monitord.output")
    )
    extra = [
        value
        for key, value in props.items()
        if key.startswith("pegasus.catalog.workflow.")
        and key.endswith(".url")
        and key != "pegasus.catalog.workflow.url"
        and value
    ]
    return [primary or None, *extra]


def notification_settings(args: argparse.Namespace, props: dict[str, str]) -> dict[str, Any]:
    """Notification options (doc §9.1, §10): the command line wins over the properties."""

    def count(option: int | None, key: str, default: int) -> int:
        if option is not None:
            return option
        text = props.get(key)
        if text is None or not text.strip():
            return default
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{key}: {text!r} is not an integer") from None
        if value < 0:
            raise ValueError(f"{key} must not be negative")
        return value

    enabled = not args.no_notifications and props.get(
        "pegasus.monitord.notifications", "true"
    ).strip().lower() not in ("false", "no", "off", "0")
    return {
        "notifications": enabled,
        "notifications_max": count(
            args.notifications_max, "pegasus.monitord.notifications.max", 10
        ),
        "notifications_timeout": float(
            count(args.notifications_timeout, "pegasus.monitord.notifications.timeout", 0)
        ),
    }


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        from monitord.proctitle import hide_secrets_in_title

        hide_secrets_in_title(sys.argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "demo":
        return demo(argv[1:])
    # --- service status (issue 7): monitord status [--config FILE | --url URL]
    if argv and argv[0] == "status":
        from monitord.service.status_cli import main as status_main

        return status_main(argv[1:])
    # --- end service status
    if argv and argv[0] == "play":
        from monitord.player import main as play_main

        return play_main(argv[1:])
    # --- service (issue 7): monitord serve / monitord attach
    if argv and argv[0] == "serve":
        from monitord.service.cli import serve_main

        return serve_main(argv[1:])
    attach_opts = None
    if argv and argv[0] == "attach":
        from monitord.service.cli import split_attach_options

        attach_opts, argv = split_attach_options(argv[1:])
    # --- end service
    cli_props, rest = split_properties(argv)
    parser = build_parser()
    args = parser.parse_args(rest)
    configure_logging(args.verbose)
    if args.no_events and args.dest:
        print("pegasus-monitord: error: --no-events conflicts with --dest", file=sys.stderr)
        return 1
    run_dir = os.path.dirname(os.path.abspath(args.dagman_out))
    try:
        props = load_properties(args.conf, cli_props, run_dir)
    except Exception as exc:  # noqa: BLE001
        print(f"pegasus-monitord: error: cannot read properties: {exc}", file=sys.stderr)
        return 1
    if props.get("pegasus.monitord.arguments"):
        extra = [a for a in props["pegasus.monitord.arguments"].split(" ") if a]
        args = parser.parse_args(rest + extra)
    if args.condor_daemon and not args.replay:
        try:
            os.setpgid(0, 0)  # pegasus-dagman's -N: lead our own process group
        except OSError:
            pass
    encoding = args.encoding or props.get("pegasus.monitord.encoding", "bp")
    events = not args.no_events
    if (
        events
        and not args.dest
        and props.get("pegasus.monitord.events", "true").lower() in ("false", "no", "off", "0")
    ):
        events = False
    skip_stdout = args.skip_stdout or props.get(
        "pegasus.monitord.stdout.disable.parsing", "false"
    ).lower() in ("true", "yes", "on", "1")
    try:
        notify_settings = notification_settings(args, props)
    except ValueError as exc:
        print(f"pegasus-monitord: error: {exc}", file=sys.stderr)
        return 1
    config = MonitorConfig(
        dagman_out=args.dagman_out,
        replay=args.replay,
        dests=destinations(args, props) if events else None,
        events=events,
        encoding=encoding,
        jobstate_name=args.jobstate,
        output_dir=args.output_dir,
        follow_subworkflows=not args.no_recursive,
        store_stdout=not skip_stdout,
        keep_state=args.keep_state,
        adjust=args.adjust,
        force=args.force,
        properties=props,
        dashboard=not args.no_dashboard,
        dashboard_url=props.get("pegasus.catalog.master.url")
        or props.get("pegasus.dashboard.output"),
        **notify_settings,  # notifications (issue 6)
        polling=args.poll,
    )
    if args.output_dir:
        out = (
            args.output_dir
            if os.path.isabs(args.output_dir)
            else os.path.join(run_dir, args.output_dir)
        )
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            print(f"pegasus-monitord: error: cannot create {out}: {exc.strerror}", file=sys.stderr)
            return 1
    # --- service hand-over (issue 7): `monitord attach`, or -N with a service configured
    if not args.replay and (attach_opts is not None or args.condor_daemon):
        from monitord.service.cli import handover

        handed = handover(config, attach_opts)
        if handed is not None:
            return handed
    # --- end service hand-over
    try:
        return asyncio.run(run_replay(config) if args.replay else run_follow(config))
    except MonitordError as exc:
        print(f"pegasus-monitord: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 1


def demo(argv: Sequence[str]) -> int:
    """Generate an example workflow, replay it into SQLite, print what was recorded."""
    import sqlite3

    from monitord.synthetic import generate_example

    p = argparse.ArgumentParser(prog="monitord demo", description=demo.__doc__)
    p.add_argument("--jobs", type=int, default=50)
    p.add_argument("--dir", help="where to create the example (default: a new temporary directory)")
    args = p.parse_args(list(argv))
    configure_logging(0)
    dest = args.dir or tempfile.mkdtemp(prefix="monitord-demo-")
    dagman_out = generate_example(__import__("pathlib").Path(dest), jobs=args.jobs)
    t0 = time.perf_counter()
    status = main(["--no-dashboard", "-r", str(dagman_out)])
    elapsed = time.perf_counter() - t0
    if status != 0:
        return status
    run_dir = os.path.dirname(str(dagman_out))
    dbs = [f for f in os.listdir(run_dir) if f.endswith(".stampede.db")]
    print(f"replayed {dagman_out} in {elapsed:.2f} s")
    for db in dbs:
        con = sqlite3.connect(os.path.join(run_dir, db))
        counts = {
            t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: S608
            for t in ("workflow", "job", "job_instance", "jobstate", "invocation")
        }
        con.close()
        print(
            f"database {os.path.join(run_dir, db)}: "
            + ", ".join(f"{k}={v}" for k, v in counts.items())
        )
    print(f"jobstate.log: {os.path.join(run_dir, 'jobstate.log')}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
