"""Destination URL or path -> sink (behaviour doc §6.4).

| destination                      | sink                          |
| plain path (relative to run dir) | file (.bp or JSON lines)      |
| ``-``                            | stdout (the reference's 5.1 code made a file named ``-``) |
| ``file:///path``                 | file                          |
| ``amqp://``, ``amqps://``        | AMQP (not available yet)      |
| anything else with a scheme      | SQL database (SQLAlchemy URL) |
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from sinks.base import Sink, SinkError

SQL_SCHEMES = ("sqlite", "mysql", "postgresql", "postgres", "jdbc")


def _scheme(dest: str) -> str:
    head, sep, _ = dest.partition("://")
    if sep:
        return head.split("+", 1)[0].lower()
    if dest.startswith("jdbc:"):
        return "jdbc"
    return ""


def build_sink(
    dest: str,
    *,
    run_dir: str,
    restart: bool,
    encoding: str = "bp",
    root_wf_uuid: str | None = None,
    pegasus_version: str | None = None,
) -> Sink:
    """Resolve one destination to an unopened sink."""
    from sinks.file_sink import FileSink

    scheme = _scheme(dest)
    if dest == "-":
        return FileSink("-", encoding=encoding, overwrite=restart)
    if not scheme:
        path = dest if os.path.isabs(dest) else os.path.join(run_dir, dest)
        return FileSink(path, encoding=encoding, overwrite=restart)
    if scheme == "file":
        return FileSink(unquote(urlsplit(dest).path), encoding=encoding, overwrite=restart)
    if scheme in ("amqp", "amqps"):
        raise SinkError("AMQP destinations are not supported yet")
    if scheme == "x-tcp":
        raise SinkError("x-tcp destinations are not supported")
    from sinks.sql import SQLSink

    return SQLSink(
        dest, restart=restart, purge_wf_uuid=root_wf_uuid, pegasus_version=pegasus_version
    )
