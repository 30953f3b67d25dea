"""One :class:`MonitorConfig` from a command line, the workflow's properties, the service's defaults.

The daemon's command line (:mod:`monitord.cli`) and the service (for the workflows it
picks up itself, :mod:`monitord.service`) state what they were told as :class:`Options`;
:func:`monitor_config` adds the workflow's properties and builds the one
:class:`MonitorConfig` the :class:`~monitord.daemon.monitor.Monitor` runs with.  The
service's wire protocol needs only this module, not the daemon.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.core.readers.workflow_properties import PropertyError, int_property

log = structlog.get_logger(__name__)

FALSE_WORDS = ("false", "no", "off", "0")
TRUE_WORDS = ("true", "yes", "on", "1")
ConfigError = PropertyError  # a property or option that makes no sense (one line, names the key)


@dataclass
class MonitorConfig:
    dagman_out: str
    replay: bool = True
    dests: list[str | None] | None = None  # None entries: the default SQLite DB
    events: bool = True
    encoding: str = "bp"
    jobstate_name: str | None = None
    output_dir: str | None = None
    follow_subworkflows: bool = True
    store_stdout: bool = True
    keep_state: bool = False
    adjust: float = 0.0
    force: bool = False
    properties: dict[str, str] = field(default_factory=dict)
    # Dashboard master DB (doc §7.5): None means the default ~/.pegasus/workflow.db.
    dashboard: bool = True
    dashboard_url: str | None = None
    # Live following: stat() polling instead of inotify (also MONITORD_FORCE_POLLING=1).
    polling: bool = False
    # Notifications (doc §11; live mode only): max concurrent scripts (0: none), timeout (0: never).
    notifications: bool = True
    notifications_max: int = 10
    notifications_timeout: float = 0.0
    notifications_full_log: bool = True  # full records (daemon at INFO or more verbose)
    # Live daemon: where crash-resume snapshots are kept (None: statedir.default_state_dir()).
    state_dir: str | None = None
    # Replay only: each SQL destination written by a child process (True: --sql-process), by
    # a thread of the daemon (False: --sql-thread), or as outputs.loader_in_process says (None).
    sql_process: bool | None = None
    # Replay only: job files read and parsed ahead by a worker process (True: --read-ahead),
    # by the parser (False: --no-read-ahead), or as outputs.helper_processes says (None).
    read_ahead: bool | None = None


@dataclass(frozen=True)
class Options:
    """What the command line said (the service's ``[defaults]`` stand in for it).

    Field names are the daemon's argparse ``dest`` names, so :meth:`from_args` copies them.
    """

    dagman_out: str = ""
    replay: bool = False
    dest: str | None = None  # -d: the first destination; the properties may add more
    more_dests: tuple[str, ...] = ()  # further -d of `monitord replay`/`follow`: each gets all
    dests: tuple[str, ...] = ()  # the service's destinations: these, and no others
    no_events: bool = False
    encoding: str | None = None  # -e; else the properties', else default_encoding
    default_encoding: str = "bp"
    jobstate: str | None = None
    output_dir: str | None = None
    no_recursive: bool = False
    skip_stdout: bool = False
    keep_state: bool = False
    adjust: float = 0.0
    force: bool = False
    no_dashboard: bool = False
    dashboard_url: str | None = None  # None: the properties' (unless told not to look)
    dashboard_url_from_properties: bool = True
    poll: bool = False
    no_notifications: bool = False
    notifications_max: int | None = None
    notifications_timeout: int | None = None
    # False (the service): a bad notification property turns notifications off, with a
    # warning, instead of refusing to start.
    strict_notifications: bool = True
    state_dir: str | None = None  # --state-dir: the live daemon's snapshots (statedir.py)
    sql_process: bool | None = None  # --sql-process True, --sql-thread False, None: by size
    read_ahead: bool | None = None  # --read-ahead True, --no-read-ahead False, None: by size

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Options:
        """The daemon's parsed options (those a parser lacks keep their defaults)."""
        given = vars(args)
        return cls(**{f.name: given[f.name] for f in dataclasses.fields(cls) if f.name in given})


def destinations(opts: Options, props: Mapping[str, str]) -> list[str | None]:
    """Event destinations: ``-d`` wins, then properties; None stands for the default DB (doc §6.4)."""
    if opts.dests:
        return list(opts.dests)
    primary = (
        opts.dest
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
    return list(dict.fromkeys([primary or None, *opts.more_dests, *extra]))  # each once


def notification_settings(opts: Options, props: Mapping[str, str]) -> dict[str, Any]:
    """Notification options (doc §9.1, §10): the command line wins over the properties."""
    enabled = (
        not opts.no_notifications
        and props.get("pegasus.monitord.notifications", "true").strip().lower() not in FALSE_WORDS
    )
    max_ = opts.notifications_max
    timeout = opts.notifications_timeout
    return {
        "notifications": enabled,
        "notifications_max": (
            max_
            if max_ is not None
            else int_property(props, "pegasus.monitord.notifications.max", 10)
        ),
        "notifications_timeout": float(
            timeout
            if timeout is not None
            else int_property(props, "pegasus.monitord.notifications.timeout", 0)
        ),
    }


def monitor_config(opts: Options, props: dict[str, str]) -> MonitorConfig:
    """The one MonitorConfig for ``opts`` and the workflow's ``props`` (ConfigError if bad)."""
    events = not opts.no_events
    if (
        events
        and not (opts.dest or opts.dests)
        and props.get("pegasus.monitord.events", "true").lower() in FALSE_WORDS
    ):
        events = False
    skip_stdout = (
        opts.skip_stdout
        or props.get("pegasus.monitord.stdout.disable.parsing", "false").lower() in TRUE_WORDS
    )
    try:
        notify = notification_settings(opts, props)
    except ConfigError as exc:
        if opts.strict_notifications:
            raise
        log.warning("bad notification properties; notifications off", error=str(exc))
        notify = {"notifications": False}
    dashboard_url = opts.dashboard_url
    if dashboard_url is None and opts.dashboard_url_from_properties:
        dashboard_url = props.get("pegasus.catalog.master.url") or props.get(
            "pegasus.dashboard.output"
        )
    return MonitorConfig(
        dagman_out=opts.dagman_out,
        replay=opts.replay,
        dests=destinations(opts, props) if events else None,
        events=events,
        encoding=opts.encoding or props.get("pegasus.monitord.encoding", opts.default_encoding),
        jobstate_name=opts.jobstate,
        output_dir=opts.output_dir,
        follow_subworkflows=not opts.no_recursive,
        store_stdout=not skip_stdout,
        keep_state=opts.keep_state,
        adjust=opts.adjust,
        force=opts.force,
        properties=props,
        dashboard=not opts.no_dashboard,
        dashboard_url=dashboard_url,
        polling=opts.poll,
        state_dir=opts.state_dir or props.get("pegasus.monitord.state.dir") or None,
        sql_process=opts.sql_process if opts.replay else False,
        read_ahead=opts.read_ahead if opts.replay else False,
        **notify,
    )
