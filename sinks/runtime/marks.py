"""Delivery marks: how many events of each workflow a sink already holds, so that a resumed
daemon's repeated events are skipped exactly.

A daemon that can resume after a crash (the service) numbers every workflow's events: the
n-th event a workflow produces is event n of that workflow, in a *stream* (one per counting
session; a resume continues the stream of the snapshot it starts from).  Every batch it
publishes carries :class:`Marks`: the stream and, per workflow in the batch, how many events
of it were published up to the batch's last one.  A sink that keeps marks
(``Capabilities.keeps_marks``: SQL) stores them in the same transaction as the rows, so after
a crash it knows exactly which events it holds; the delivery drops the events of a batch it
already holds (:func:`unseen`) before writing the rest.  The numbering is deterministic
because the parser is: the events regenerated from a snapshot are the ones the crashed
daemon produced, in the same order, with the same numbers.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from monitord.core.events import UNSET, StampedeEvent


@dataclass(frozen=True)
class Marks:
    """A batch's marks: per workflow uuid, its events published up to the end of the batch."""

    stream: str
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"stream": self.stream, "counts": self.counts}

    @classmethod
    def from_json(cls, doc: object) -> Marks | None:
        if not isinstance(doc, dict) or not isinstance(doc.get("stream"), str):
            return None
        counts = doc.get("counts")
        if not isinstance(counts, dict):
            return None
        return cls(doc["stream"], {str(k): int(v) for k, v in counts.items()})


class MarkedBatch(list[StampedeEvent]):
    """A batch of events as a plain list, carrying its :class:`Marks` to the deliveries.

    Anything that only wants events (plugins, the per-workflow daemon's process workers) sees
    a list; a delivery reads ``marks``.
    """

    marks: Marks | None = None

    def __init__(self, events: Sequence[StampedeEvent], marks: Marks | None) -> None:
        super().__init__(events)
        self.marks = marks


def marks_of(batch: Sequence[StampedeEvent]) -> Marks | None:
    return batch.marks if isinstance(batch, MarkedBatch) else None


def line_one_stream(root_uuid: str) -> str:
    """The stream of a root workflow's events counted from line 1 of its dagman.out (a first
    start, a recovery, a replay): the same for every such start, so that events produced again
    from line 1 carry the numbers they had (what ``monitord ingest`` keys its marks on).  A
    start that continues where a clean stop left off (``monitord.info``) takes a fresh stream."""
    return hashlib.sha256(f"line-1:{root_uuid}".encode()).hexdigest()[:32]


def workflow_of(event: StampedeEvent) -> str:
    """The workflow an event is counted for (every Stampede event names its ``xwf.id``)."""
    uuid = event.xwf_id
    return "" if uuid is UNSET else str(uuid)


def count_batch(events: Sequence[StampedeEvent], totals: dict[str, int]) -> dict[str, int]:
    """Add ``events`` to the running ``totals``; the batch's marks (totals of its workflows)."""
    seen = Counter(workflow_of(e) for e in events)
    for wf, n in seen.items():
        totals[wf] = totals.get(wf, 0) + n
    return {wf: totals[wf] for wf in seen}


def numbers(events: Sequence[StampedeEvent], marks: Marks) -> list[int]:
    """Each event's number in its workflow's stream (``marks``: the batch's)."""
    remaining = Counter(workflow_of(e) for e in events)
    out: list[int] = []
    for event in events:
        wf = workflow_of(event)
        out.append(marks.counts.get(wf, 0) - remaining[wf] + 1)
        remaining[wf] -= 1
    return out


def unseen(
    events: Sequence[StampedeEvent], marks: Marks, held: dict[str, int]
) -> list[StampedeEvent]:
    """The events of a batch a sink does not hold yet, given what it holds (``held``)."""
    if all(held.get(wf, 0) <= n - len(events) for wf, n in marks.counts.items()):
        return list(events)  # the usual case: the sink holds none of them (no per-event work)
    return [
        event
        for event, number in zip(events, numbers(events, marks), strict=True)
        if number > held.get(workflow_of(event), 0)
    ]


def advance(held: dict[str, int], marks: Marks) -> None:
    """The sink now holds everything up to ``marks``."""
    for wf, n in marks.counts.items():
        if n > held.get(wf, 0):
            held[wf] = n


class HeldMarks:
    """Per marks stream, what a marking sink holds: asked of the sink once (``read``), then
    advanced by every batch written; forgotten (asked again) after a failed write."""

    def __init__(self, read: Callable[[str], Mapping[str, int]]) -> None:
        self._read = read
        self._held: dict[str, dict[str, int]] = {}

    def fresh(self, events: Sequence[StampedeEvent], marks: Marks) -> list[StampedeEvent]:
        """The events of a batch the sink does not hold yet."""
        held = self._held.get(marks.stream)
        if held is None:
            held = self._held[marks.stream] = dict(self._read(marks.stream))
        return unseen(events, marks, held)

    def advance(self, marks: Marks) -> None:
        held = self._held.get(marks.stream)
        if held is not None:
            advance(held, marks)

    def forget(self, stream: str) -> None:
        self._held.pop(stream, None)
