"""A chunk of dagman.out lines as records: what a replay's read-ahead worker classified for
the machine (``monitord/daemon/readahead.py``, ``Workflow.feed_lines``), compact on the wire.

A record is a classified line's :class:`~monitord.core.dagman.DagmanLine` fields behind the
line's position in its chunk; the lines that carry nothing (three in five) have none.  The
worker classifies with :func:`~monitord.core.dagman.record_line`, the machine's own
classifier outside the list of log files and recovery made straight into a record, so a
record is what the machine would have made of its line.
"""

from __future__ import annotations

from monitord.core import dagman as D

#: (position in the chunk, kind, ts, job, state, sched_id, status, text)
Record = D.LineRecord


def records_of(lines: list[str], adjust: float) -> list[Record]:
    """The records of a chunk's lines.  A job's name and a state are shared within the
    chunk, so that its pickle holds each once."""
    record = D.record_line
    shared: dict[str | None, str | None] = {}
    share = shared.setdefault
    return [
        found
        for pos, line in enumerate(lines)
        if (found := record(line.rstrip(), adjust, pos, share)) is not None
    ]
