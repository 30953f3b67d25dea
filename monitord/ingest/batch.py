"""One batch of one partition: messages -> what to load, what to skip, what to dead-letter.

Pure bookkeeping (no I/O), so the rules are unit tested on their own:

* a message of a monitord producer (its producer and position: ``monitord-id``, or an
  earlier monitord's ``monitord-producer`` / ``monitord-seq``) at or below that producer's
  mark was loaded before (a redelivery after an ingest crash, or a producer that resent part
  of its spool): skipped;
* a message whose event number (its stream and event, in the same header or headers) is at
  or below the mark of its (stream, workflow) was loaded before, whatever spool position it
  has: an event *produced again* (a daemon resumed after ``kill -9``, a second replay):
  skipped;
* a producer or a stream whose mark was recorded for another broker user is refused
  (``user-mismatch``): a user cannot move, or block, another user's stream;
* an event of a workflow whose ``wf.plan`` the database never got (``unknown-workflow``),
  and anything :func:`monitord.ingest.decode.decode` refuses, is dead-lettered;
* a stock pegasus-monitord message (no headers) is loaded as it comes: at least once (one
  applied again adds no row: the schema's keys refuse them, docs/ingest.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from monitord.core.events import StampedeEvent, WfPlan
from monitord.ingest.decode import DecodeError, decode
from monitord.ingest.store import Mark, MarkUpdate, StreamKey
from sinks.amqp.stream import read_identity


@dataclass(slots=True)
class Item:
    """One delivered message, decoded (``event``) or refused (``reason``); slotted: one is
    built per message on the event loop."""

    tag: Any  # the consumer's handle on the message (for dead-lettering)
    routing_key: str
    body: bytes
    user: str | None
    producer: str | None = None
    seq: int | None = None
    stream: str | None = None
    number: int | None = None
    event: StampedeEvent | None = None
    reason: str | None = None
    detail: str = ""


def classify(
    tag: Any,
    routing_key: str,
    body: bytes,
    headers: Mapping[str, Any] | None,
    user: str | None,
    max_body: int,
) -> Item:
    """One message's item, built in one call (not set attribute by attribute: one a
    message on the event loop)."""
    if len(body) > max_body:
        detail = f"{len(body)} bytes > {max_body}"
        return Item(tag, routing_key, body, user, reason="oversized", detail=detail)
    try:
        identity = read_identity(headers or {})
    except ValueError as bad:
        return Item(tag, routing_key, body, user, reason="malformed", detail=f"bad {bad} header")
    try:
        event = decode(routing_key, body)
    except DecodeError as exc:
        return Item(tag, routing_key, body, user, *identity, reason=exc.kind, detail=exc.detail)
    return Item(tag, routing_key, body, user, *identity, event)


def stream_key(item: Item) -> StreamKey | None:
    """The (stream, workflow uuid) an item is numbered in, if it is."""
    if item.stream is None or item.event is None:
        return None
    return item.stream, str(item.event.xwf_id)


@dataclass
class Plan:
    load: list[Item] = field(default_factory=list)
    marks: dict[str, MarkUpdate] = field(default_factory=dict)
    streams: dict[StreamKey, MarkUpdate] = field(default_factory=dict)
    dead: list[Item] = field(default_factory=list)
    duplicates: int = 0

    @property
    def events(self) -> list[StampedeEvent]:
        return [i.event for i in self.load if i.event is not None]


#: a batch's new high of a mark while it is planned: (position, user of the message)
High = tuple[int, str | None]


def _fresh(
    item: Item,
    key: Any,
    position: int,
    marks: Mapping[Any, Mark],
    highs: dict[Any, High],
    what: str,
) -> bool | None:
    """Whether ``item`` is past its mark ``key`` (and if so the batch's high of it moves to
    ``position``); None: refused (``user-mismatch``)."""
    old = marks.get(key)
    if old is not None and old.user != item.user:
        item.reason = "user-mismatch"
        item.detail = f"{what} {key} publishes as {old.user!r}, not {item.user!r}"
        return None
    had = highs.get(key)
    if position <= (had[0] if had is not None else old.seq if old is not None else -1):
        return False
    highs[key] = (position, item.user)
    return True


def _updates(highs: dict[Any, High], marks: Mapping[Any, Mark]) -> dict[Any, MarkUpdate]:
    """The marks a batch moves, built once per mark (not once per message)."""
    out = {}
    for key, (new, user) in highs.items():
        old = marks.get(key)
        out[key] = MarkUpdate(key, user, old.seq if old is not None else None, new)
    return out


def plan(
    items: Iterable[Item],
    marks: Mapping[str, Mark],
    known: Callable[[set[str]], set[str]],
    streams: Mapping[StreamKey, Mark] | None = None,
) -> Plan:
    """What to do with ``items`` given the producers' ``marks``, the (stream, workflow)
    marks ``streams`` and ``known`` (which of the given workflow uuids the database holds).
    A message is loaded only when past both its marks; both move past it either way."""
    out = Plan()
    streams = streams or {}
    candidates: list[Item] = []
    highs: dict[Any, High] = {}
    stream_highs: dict[Any, High] = {}
    for item in items:
        if item.reason is not None:
            out.dead.append(item)
            continue
        fresh: bool | None = True
        if item.producer is not None and item.seq is not None:
            fresh = _fresh(item, item.producer, item.seq, marks, highs, "producer")
        key = stream_key(item)
        if fresh is not None and key is not None and item.number is not None:
            again = _fresh(item, key, item.number, streams, stream_highs, "stream")
            fresh = None if again is None else fresh and again
        if fresh is None:
            out.dead.append(item)
        elif not fresh:
            out.duplicates += 1
        else:
            candidates.append(item)
    out.marks = _updates(highs, marks)
    out.streams = _updates(stream_highs, streams)
    planned: set[str] = set()
    wanted: set[str] = set()
    for item in candidates:
        assert item.event is not None
        uuid = str(item.event.xwf_id)
        if type(item.event) is WfPlan:
            planned.add(uuid)
        elif uuid not in planned:
            wanted.add(uuid)
    held = known(wanted) if wanted else set()
    for item in candidates:
        assert item.event is not None
        uuid = str(item.event.xwf_id)
        if type(item.event) is not WfPlan and uuid not in held and uuid not in planned:
            item.reason = "unknown-workflow"
            item.detail = f"no wf.plan for workflow {uuid}"
            out.dead.append(item)
        else:
            out.load.append(item)
    return out
