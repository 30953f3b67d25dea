"""A ``--sql-process`` replay's SQL sink as a recipe: what the child builds it from.

The daemon never writes the database of such a replay: building the :class:`SQLSink` there
only to pickle it to the loader child cost the daemon SQLAlchemy and the schema (~0.2 s of
CPU, serial, before the parser starts; bench/README.md, "Issue 30, thirteenth session:
lazysql30k").  For the destinations whose check and masked URL need no SQLAlchemy (a SQLite
file given by a plain absolute path: a replay's default database) the daemon sends the request
instead, with what the sink declares (name, capabilities, reads, destination) taken from the
SQL sink's light module; the child builds the sink and opens it.  Any other destination
(a server, odd characters, an endpoint ``timeout``) is built and checked in the daemon as before,
so its errors are the same lines.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sinks.runtime.factory import SinkRequest, endpoint_property
from sinks.sql.declared import SQL_CAPABILITIES, SQL_READS

if TYPE_CHECKING:
    from sinks.runtime.base import Sink

#: a SQLite file URL whose rendering, check and file SQLAlchemy would give as written: an
#: absolute path of plain characters (tests/test_sql_recipe.py compares with SQLAlchemy's)
PLAIN_SQLITE = re.compile(r"sqlite:///(/[A-Za-z0-9/._ -]*[A-Za-z0-9_-])")


@dataclass(frozen=True)
class SQLRecipe:
    """The request of an unbuilt SQL sink, declaring what that sink would declare."""

    request: SinkRequest
    #: the file's (device, inode) when the recipe was made, for a restart: the child rotates it
    #: only if it is still that file (``SQLSink._unrotated``, taken as the daemon built it)
    unrotated: tuple[int, int] | None
    again: bool = False  # a new child after one opened it: no second rotation (``reopening``)

    name = "sql"
    capabilities = SQL_CAPABILITIES
    reads = SQL_READS

    @property
    def destination(self) -> str:
        return self.request.dest

    @property
    def display_url(self) -> str:
        return self.request.dest

    def build(self) -> Sink:
        """The sink, in the loader child (its modules: SQLAlchemy, the schema, the loader)."""
        from sinks.sql.sink import SQLSink

        sink = SQLSink.from_recipe(self.request, self.unrotated)
        return sink.reopening() if self.again else sink

    def reopening(self) -> SQLRecipe:
        return replace(self, again=True)


def light_recipe(request: SinkRequest) -> SQLRecipe | None:
    """The recipe of ``request``'s sink when nothing about it needs SQLAlchemy to check or
    show (:data:`PLAIN_SQLITE`, the stdlib's SQLite driver present, no endpoint ``timeout``);
    else None: the sink is built and checked as before."""
    match = PLAIN_SQLITE.fullmatch(request.dest)
    if match is None or endpoint_property(request.properties, request.dest, "timeout"):
        return None
    if importlib.util.find_spec("_sqlite3") is None:  # the check's own message, in the daemon
        return None
    return SQLRecipe(request, _identity(match.group(1)) if request.restart else None)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
