"""A one-row SQLite ``INSERT ... VALUES (?, ...)`` run as multi-row statements.

``executemany`` steps SQLite's statement once per row; one ``INSERT`` of many ``VALUES``
groups costs SQLite less per row (the rows of a 20,000-job replay: 1.28 -> 0.94 s CPU
written alone, bench/README.md "Issue 30, tenth session: child30g").  The rows go in the
same order, so SQLite gives the same ids, and a failure fails the statement, inside the
batch's transaction that the caller rolls back either way.

The statements are of a few sizes only (powers of two, :data:`ROWS` at most): the driver
caches each prepared text, and one text per remainder size would fill that cache with
large statements.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from itertools import chain
from typing import Any, NamedTuple

#: rows per statement at most (a power of two): 64 wrote as fast as 256 in the SQL child and
#: keeps its peak RSS where ``executemany`` left it (256: +3 MB; the prepared statements)
ROWS = 64


class MultiRow(NamedTuple):
    """A one-row ``INSERT``'s text around its ``VALUES`` group, and the rows a statement may
    carry under the connection's bound on bound parameters."""

    head: str
    group: str
    tail: str
    most: int

    def text(self, rows: int) -> str:
        return _text(self.head, self.group, self.tail, rows)


@cache
def _text(head: str, group: str, tail: str, rows: int) -> str:
    return f"{head}{', '.join([group] * rows)}{tail}"


def multi_row(sql: str, variables: int) -> MultiRow | None:
    """``sql`` cut around its one ``VALUES (?, ...)``, or None when it is not such an
    ``INSERT`` (an UPDATE, named parameters, a ``SELECT``) or carries one row only."""
    if not sql.startswith("INSERT ") or sql.count(" VALUES (") != 1:
        return None
    start = sql.index(" VALUES (") + len(" VALUES ")
    end = sql.find(")", start) + 1
    group = sql[start:end]
    width = group.count("?")
    if width == 0 or group != f"({', '.join('?' * width)})":
        return None
    most = ROWS
    while most > 1 and most * width > variables:
        most //= 2
    if most < 2:
        return None
    return MultiRow(sql[:start], group, sql[end:], most)


def statements(multi: MultiRow, rows: Sequence[Sequence[Any]]) -> Iterator[tuple[str, list[Any]]]:
    """``rows`` in order as (text, flat parameters): full statements of ``multi.most``
    rows, then the rest in halving sizes (at most one each)."""
    size, at, n = multi.most, 0, len(rows)
    while at < n:
        while size > n - at:
            size //= 2
        chunk = rows[at : at + size]
        yield multi.text(size), list(chain.from_iterable(chunk))
        at += size
