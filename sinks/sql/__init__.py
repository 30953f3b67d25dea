"""SQL sink: the Stampede schema and the event → row loader behind ``sqlite://``,
``postgresql://``, ``mysql://`` (and ``jdbc:``) destinations.

Its names are loaded when first asked for (PEP 562): importing a light module of the package
(``sinks.sql.schemes``) must not load SQLAlchemy (monitord/daemon/prestart.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .database import purge_workflow
    from .rotate import rotate_sqlite_file
    from .sink import SQLSink

__all__ = ["SQLSink", "purge_workflow", "rotate_sqlite_file"]

_WHERE = {"SQLSink": ".sink", "purge_workflow": ".database", "rotate_sqlite_file": ".rotate"}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where, __name__), name)
