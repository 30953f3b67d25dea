"""The ``sql`` and ``dashboard`` sink factories (entry points in pyproject.toml).

Light: the registry loads every factory at start-up, and a ``--sql-process`` replay's daemon
never needs SQLAlchemy (``sinks/sql/recipe.py``); the sinks' modules load when one is checked
or built."""

from __future__ import annotations

from sinks.runtime.base import Sink, SinkError
from sinks.runtime.factory import SinkRequest, scheme_of
from sinks.sql.declared import DASHBOARD_CAPABILITIES, SQL_CAPABILITIES
from sinks.sql.recipe import SQLRecipe, light_recipe
from sinks.sql.schemes import SQL_SCHEMES

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
        raise SinkError(f"{safe_url(dest)}: unknown database type {scheme_of(dest)!r}") from None
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


class SQLFactory:
    """The Stampede database: SQLite, MySQL/MariaDB, PostgreSQL (and ``jdbc:`` URLs)."""

    name = "sql"
    schemes = SQL_SCHEMES
    capabilities = SQL_CAPABILITIES

    def check(self, request: SinkRequest) -> None:
        require_driver(request.dest)

    def recipe(self, request: SinkRequest) -> SQLRecipe | None:
        """What a loader child builds the sink from, checked here without SQLAlchemy; None
        when the destination needs the full check (``sinks/sql/recipe.py``)."""
        return light_recipe(request)

    def build(self, request: SinkRequest) -> Sink:
        from sinks.sql.sink import SQLSink

        return SQLSink.from_request(request)


class DashboardFactory:
    """The dashboard's master database (asked for by name, it has no scheme of its own)."""

    name = "dashboard"
    schemes: tuple[str, ...] = ()
    capabilities = DASHBOARD_CAPABILITIES

    def check(self, request: SinkRequest) -> None:
        if not request.root_wf_uuid or request.db_url is None:
            raise SinkError("the dashboard sink needs the root workflow and its events URL")

    def build(self, request: SinkRequest) -> Sink:
        from sinks.sql.dashboard import DashboardSink

        return DashboardSink.from_request(request)


SQL = SQLFactory()
DASHBOARD = DashboardFactory()
