"""How database errors are classified: transient (retry the batch) or row-level (skip rows)."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError, StatementError


def is_transient(exc: BaseException) -> bool:
    """Locked database, lost connection and the like: the same batch may succeed later."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


def is_row_error(exc: BaseException) -> bool:
    """A statement the database rejected because of its data (constraint, bad value)."""
    return isinstance(exc, StatementError) and not is_transient(exc)
