"""SQL sink: the Stampede schema and the event → row loader behind ``sqlite://``,
``postgresql://``, ``mysql://`` (and ``jdbc:``) destinations."""

from .database import purge_workflow
from .rotate import rotate_sqlite_file
from .sink import SQLSink

__all__ = ["SQLSink", "purge_workflow", "rotate_sqlite_file"]
