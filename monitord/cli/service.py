"""Command-line entry points of the service: ``monitord serve``, ``monitord attach``, and the
``pegasus-monitord -N`` hand-over (called from :func:`monitord.cli.main`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from monitord.daemon.config import MonitorConfig


def serve_main(argv: Sequence[str]) -> int:
    from monitord.service.config import ConfigError, configured_path, load_config
    from monitord.service.discovery import watch_root_warnings
    from monitord.service.logs import configure_service_logging
    from monitord.service.service import ServiceError, serve

    p = argparse.ArgumentParser(
        prog="monitord serve", description="Follow every workflow of this host in one service."
    )
    p.add_argument(
        "--config",
        help="service configuration (default $MONITORD_SERVICE_CONFIG or /etc/monitord/service.toml)",
    )
    p.add_argument("--check", action="store_true", help="validate the configuration and exit")
    args = p.parse_args(list(argv))
    path = configured_path(args.config)
    if path is None:
        print("monitord serve: error: no configuration (use --config FILE)", file=sys.stderr)
        return 1
    try:
        cfg = load_config(path)
    except ConfigError as exc:
        print(f"monitord serve: error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        # a missing root is no error: the service waits for it (the start-up log says so too)
        for line in watch_root_warnings(cfg):
            print(f"monitord serve: warning: {line}", file=sys.stderr)
        print(f"{path}: OK")
        return 0
    configure_service_logging(cfg.log_format, cfg.log_level)
    try:
        return asyncio.run(serve(cfg))
    except ServiceError as exc:
        print(f"monitord serve: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 1


CONFIG_OPTIONS = ("--config", "--service-config")  # the service's configuration file


@dataclass
class AttachOptions:
    wait: bool = False
    config: str | None = None


def split_attach_options(argv: Sequence[str]) -> tuple[AttachOptions, list[str]]:
    """``monitord attach [--wait] [--config F] <daemon options> <wf>.dag.dagman.out``.

    ``--config`` names the service's configuration, as for ``serve`` and ``status``;
    ``--service-config``, its former name, is still accepted (not shown in --help).
    """
    opts = AttachOptions()
    rest: list[str] = []
    items = list(argv)
    while items:
        item = items.pop(0)
        name, eq, value = item.partition("=")
        if item == "--wait":
            opts.wait = True
        elif name in CONFIG_OPTIONS and eq:
            opts.config = value
        elif item in CONFIG_OPTIONS and items:
            opts.config = items.pop(0)
        else:
            rest.append(item)
    return opts, rest


def _attach_socket(config_path: str | None) -> tuple[str, str]:
    """The service's socket for ``monitord attach``, or why there is none to hand over to."""
    from monitord.service.client import service_answers
    from monitord.service.config import ConfigError, configured_path, load_config

    path = configured_path(config_path)
    if path is None:
        return "", "no service configuration (give --config FILE or set $MONITORD_SERVICE_CONFIG)"
    try:
        sock = load_config(path).socket
    except ConfigError as exc:
        return "", str(exc)
    if not service_answers(sock):
        return "", f"no monitord service answers on {sock} (configured in {path})"
    return sock, ""


def handover(
    config: MonitorConfig, attach: AttachOptions | None, *, quiet: bool = False
) -> int | None:
    """Give the workflow to the service; the exit code, or None to run the daemon here.

    ``attach`` None means the ``-N`` drop-in: used only when a service is configured and
    answers, and waits for the workflow's end.  ``monitord attach`` insists on a service;
    with ``--wait`` on a terminal (unless ``quiet``) a spinner shows while it waits.
    """
    from monitord.service.client import attach as attach_to
    from monitord.service.client import service_answers, service_socket

    if attach is None:
        sock = service_socket(None, quiet=True)
        if sock is None or not service_answers(sock):
            return None
    else:
        sock, error = _attach_socket(attach.config)
        if error:
            print(f"monitord attach: error: {error}", file=sys.stderr)
            return 1
    dashboard_url = config.dashboard_url
    if config.dashboard and not dashboard_url:
        from sinks.sql.dashboard import default_dashboard_url

        dashboard_url = default_dashboard_url()
    config = dataclasses.replace(
        config, dagman_out=os.path.abspath(config.dagman_out), dashboard_url=dashboard_url
    )
    if config.output_dir and not os.path.isabs(config.output_dir):
        config = dataclasses.replace(
            config, output_dir=os.path.join(os.path.dirname(config.dagman_out), config.output_dir)
        )
    wait = True if attach is None else attach.wait
    source = "dropin" if attach is None else "attach"
    from monitord.cli.progress import working

    show = attach is not None and wait and not quiet and sys.stderr.isatty()
    what = f"the service follows {os.path.basename(config.dagman_out)}; waiting for its end"
    try:
        with working(what, sys.stderr, show=show):
            return asyncio.run(attach_to(sock, config, wait=wait, source=source))
    except KeyboardInterrupt:
        return 1
