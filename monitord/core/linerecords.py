"""A chunk of dagman.out lines as records: what a replay's read-ahead worker classified for
the machine (``monitord/daemon/readahead.py``, ``Workflow.feed_lines``), compact on the wire.

A record is a classified line's :class:`~monitord.core.dagman.DagmanLine` fields behind the
line's position in its chunk; the lines that carry nothing (three in five) have none.  The
worker classifies with :func:`~monitord.core.dagman.classify_line`, the machine's own
classifier outside the list of log files and recovery, so a record is what the machine would
have made of its line.
"""

from __future__ import annotations

from monitord.core import dagman as D

#: (position in the chunk, kind, ts, job, state, sched_id, status, text)
Record = tuple[int, str, float, str | None, str | None, str | None, int | None, str | None]


def records_of(lines: list[str], adjust: float) -> tuple[list[Record], list[D.DagmanLine]]:
    """The records of a chunk's lines, and the classified lines themselves.  A job's name and
    a state are shared within the chunk, so that its pickle holds each once."""
    classify = D.classify_line
    records: list[Record] = []
    found: list[D.DagmanLine] = []
    shared: dict[str | None, str | None] = {}
    share = shared.setdefault
    for pos, line in enumerate(lines):
        rec = classify(line.rstrip(), adjust)
        if rec is not None:
            found.append(rec)
            records.append(
                (
                    pos,
                    rec.kind,
                    rec.ts,
                    share(rec.job, rec.job),
                    share(rec.state, rec.state),
                    rec.sched_id,
                    rec.status,
                    rec.text,
                )
            )
    return records, found
