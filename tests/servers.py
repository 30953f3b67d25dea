"""Where the real test servers are (started by ``scripts/services.sh``), and how to reach them.

``scripts/test.sh`` starts RabbitMQ, PostgreSQL and MariaDB and exports their URLs:

| kind       | environment variable          | URL                                     |
| ``amqp``   | ``MONITORD_TEST_AMQP_URL``     | ``amqp://USER:PASS@127.0.0.1:PORT/VHOST`` |
| ``postgres`` | ``MONITORD_TEST_POSTGRES_URL`` | ``postgresql://USER:PASS@127.0.0.1:PORT/DB`` |
| ``mysql``  | ``MONITORD_TEST_MYSQL_URL``    | ``mysql://USER:PASS@127.0.0.1:PORT/DB``   |

A test that needs a server calls ``require_server(kind)``: without the URL it is skipped, unless
``CI=true``, where a missing server is a failure (CI must never pass by skipping them).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SERVICES_SCRIPT = PROJECT / "scripts" / "services.sh"

ENV_VARS = {
    "amqp": "MONITORD_TEST_AMQP_URL",
    "postgres": "MONITORD_TEST_POSTGRES_URL",
    "mysql": "MONITORD_TEST_MYSQL_URL",
}
ALIASES = {"rabbitmq": "amqp", "postgresql": "postgres", "mariadb": "mysql"}
SERVICE_NAMES = {"amqp": "rabbitmq", "postgres": "postgres", "mysql": "mariadb"}


def _kind(kind: str) -> str:
    kind = ALIASES.get(kind, kind)
    if kind not in ENV_VARS:
        raise ValueError(f"unknown server kind {kind!r} (one of {sorted(ENV_VARS)})")
    return kind


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing(reason: str) -> NoReturn:
    """Skip the test for what it lacks; in CI (CI=true), which must never pass by skipping,
    fail instead."""
    if in_ci():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def side_venv(script: Path, what: str) -> Path:
    """The venv ``script`` (a scripts/*-venv.sh, a no-op when it is ready) makes, as the last
    line it prints; without it the test is skipped (:func:`missing`)."""
    try:
        proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        missing(f"{what} missing and cannot be created: {exc!r}")
    if proc.returncode != 0:
        missing(f"{what} missing: {script.name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def server_url(kind: str) -> str | None:
    """The URL of the test server of ``kind`` (amqp, postgres, mysql), or None if not set."""
    return os.environ.get(ENV_VARS[_kind(kind)]) or None


def require_server(kind: str) -> str:
    """The server URL; skips the test when it is unset (fails instead when CI=true)."""
    kind = _kind(kind)
    url = server_url(kind)
    if url:
        return url
    reason = (
        f"{ENV_VARS[kind]} is not set: no {kind} test server "
        f'(start one with: eval "$(scripts/services.sh start {SERVICE_NAMES[kind]})" '
        "and export the variable)"
    )
    missing(reason)


def service(action: str, kind: str, *, timeout: float = 180) -> str:
    """Run ``scripts/services.sh ACTION NAME`` (start, stop, restart) on the same SVC_DIR.

    Returns its stdout (the KEY=URL lines); raises if it fails.  Refused in a parallel run:
    the other workers' tests use the same servers (mark the test ``serial``, tests/conftest.py).
    """
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.fail(
            f"services.sh {action} in a parallel run: the test must be marked serial "
            '(scripts/test.sh runs `pytest -m "not serial" -n N`, then `pytest -m serial`)',
            pytrace=False,
        )
    name = SERVICE_NAMES[_kind(kind)]
    proc = subprocess.run(
        ["bash", str(SERVICES_SCRIPT), action, name],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"services.sh {action} {name} failed: {proc.stderr[-2000:]}")
    return proc.stdout


def scratch_url(base_url: str, name: str) -> str:
    """``base_url`` with its database replaced by ``name``."""
    from sqlalchemy.engine import make_url

    return make_url(base_url).set(database=name).render_as_string(hide_password=False)


def create_database(base_url: str, name: str) -> str:
    """A new, empty database ``name`` on the server of ``base_url`` (dropped first if present).

    The test user may create databases (PostgreSQL: CREATEDB; MariaDB: every database whose
    name starts with the one in the URL). Returns the URL of the new database.
    """
    drop_database(base_url, name)
    _admin(base_url, name, "CREATE DATABASE {}")
    return scratch_url(base_url, name)


def drop_database(base_url: str, name: str) -> None:
    _admin(base_url, name, "DROP DATABASE IF EXISTS {}")


def _quote(base_url: str, name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"unsafe database name {name!r}")
    return f"`{name}`" if base_url.startswith("mysql") else f'"{name}"'


def _admin(base_url: str, name: str, sql: str) -> None:
    from sqlalchemy import text

    from sinks.sql.database import make_engine, parse_url

    engine = make_engine(parse_url(base_url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            if base_url.startswith("postgres"):
                # other sessions (finished test daemons) must not keep the database busy;
                # only ours: an autovacuum worker on it is the server's (terminating it is
                # refused), and DROP DATABASE cancels it by itself
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :d AND pid <> pg_backend_pid() "
                        "AND usename = current_user"
                    ),
                    {"d": name},
                )
            conn.execute(text(sql.format(_quote(base_url, name))))
    finally:
        engine.dispose()
