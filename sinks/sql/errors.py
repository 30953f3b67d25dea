"""How database errors are classified: transient (retry the batch) or row-level (skip rows)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError, StatementError

# Refusals that no retry will change: wrong credentials, a database that does not exist.
_MYSQL_PERMANENT = {1044, 1045, 1049, 1698}
_POSTGRES_PERMANENT = ("28P01", "28000", "3D000")
_PERMANENT_TEXT = (
    "password authentication failed",
    "no pg_hba.conf entry",
    "unable to open database file",
)


def is_permanent(exc: BaseException) -> bool:
    """Errors a retry (or a spool) cannot cure: the sink is disabled at once, logged once."""
    orig = getattr(exc, "orig", None) or exc
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int) and args[0] in _MYSQL_PERMANENT:
        return True
    if getattr(orig, "pgcode", None) in _POSTGRES_PERMANENT:
        return True
    text = str(orig)
    if "database" in text and "does not exist" in text:
        return True
    return any(marker in text for marker in _PERMANENT_TEXT)


def is_transient(exc: BaseException) -> bool:
    """Locked database, lost connection and the like: the same batch may succeed later."""
    if is_permanent(exc):
        return False
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


def is_row_error(exc: BaseException) -> bool:
    """A statement the database rejected because of its data (constraint, bad value)."""
    return isinstance(exc, StatementError) and not is_transient(exc)


@dataclass
class Rejected:
    """Rows the database refused while a batch was written row by row: a count per table and
    the first one as an example, for one log line per batch (not one per row)."""

    counts: Counter[str] = field(default_factory=Counter)
    example: tuple[str, str, str] | None = None  # table, key, the database's message

    def add(self, table: str, key: str, error: str) -> None:
        self.counts[table] += 1
        if self.example is None:
            self.example = (table, key, error)

    @property
    def total(self) -> int:
        return sum(self.counts.values())
