"""Destination URL or path -> sink (behaviour doc §6.4).

| destination                      | sink                          |
| plain path (relative to run dir) | file (.bp or JSON lines)      |
| ``-``                            | stdout (the reference's 5.1 code made a file named ``-``) |
| ``file:///path``                 | file                          |
| ``amqp://``, ``amqps://``        | AMQP, spooled (sinks/amqp)    |
| anything else with a scheme      | SQL database (SQLAlchemy URL) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from sinks.runtime.base import Sink, SinkError

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
    properties: Mapping[str, str] | None = None,
) -> Sink:
    """Resolve one destination to an unopened sink (``properties``: the endpoint settings)."""
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
        from sinks.amqp import build_amqp_sink

        return build_amqp_sink(dest, run_dir=run_dir, properties=properties)
    if scheme == "x-tcp":
        raise SinkError("x-tcp destinations are not supported")
    from sinks.sql import SQLSink
    from sinks.sql.database import connect_timeout_args

    require_driver(dest)
    timeout = endpoint_property(properties or {}, dest, "timeout")
    return SQLSink(
        dest,
        restart=restart,
        purge_wf_uuid=root_wf_uuid,
        pegasus_version=pegasus_version,
        engine_kw=connect_timeout_args(dest, timeout) if timeout else None,
    )


# database backend -> the extra of monitord that installs its driver
DRIVER_EXTRAS = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}


def require_driver(dest: str) -> None:
    """A permanent :class:`SinkError` naming what to install when the database driver of
    ``dest`` is missing (found before any connection is tried)."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from sinks.sql.database import parse_url, safe_url

    try:
        url = parse_url(dest)
        dialect = url.get_dialect()
    except NoSuchModuleError:
        raise SinkError(f"{safe_url(dest)}: unknown database type {_scheme(dest)!r}") from None
    except ArgumentError:
        raise SinkError(f"invalid database URL {safe_url(dest)}") from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        backend = url.get_backend_name()
        extra = DRIVER_EXTRAS.get(backend)
        hint = f"; install it with: pip install 'monitord[{extra}]'" if extra else ""
        missing = exc.name or str(exc)
        raise SinkError(
            f"no {backend} database driver ({missing}) for {safe_url(dest)}{hint}"
        ) from None


WORKFLOW_PREFIX = "pegasus.catalog.workflow."
ANY_CATALOG_PREFIX = "pegasus.catalog.*."


def endpoint_property(props: Mapping[str, str], dest: str, prop: str) -> str | None:
    """``prop`` of the endpoint whose URL is ``dest`` (doc §6.4, §10).

    A named endpoint (``pegasus.catalog.workflow.<name>.url`` = ``dest``) reads
    ``pegasus.catalog.workflow.<name>.<prop>``; the default one (``-d`` or
    ``pegasus.catalog.workflow.url``) reads ``pegasus.catalog.workflow.<prop>``; both fall back
    to ``pegasus.catalog.*.<prop>``.
    """
    key = WORKFLOW_PREFIX + prop
    for name_key, value in props.items():
        if (
            value == dest
            and name_key.startswith(WORKFLOW_PREFIX)
            and name_key.endswith(".url")
            and name_key != WORKFLOW_PREFIX + "url"
        ):
            key = name_key[: -len("url")] + prop
            break
    return props.get(key) or props.get(ANY_CATALOG_PREFIX + prop) or None
