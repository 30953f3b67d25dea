"""A sink whose ``write_batch`` runs in a child process: a sink of the one runtime, not a runtime.

The delivery (queue, back-pressure, retry, spool, ``SinkHealth``) stays the daemon's: its
executor drives a :class:`ProcessSink` as it drives any sink.  ``write_batch`` sends the batch
to the child (:mod:`sinks.runtime.crossing`) and returns when the child's sink has written it
(the SQL sink: committed), so "delivered" still means in the database.  While the executor's
thread waits on the pipe it holds no GIL: the parser goes on producing the next batches, up to
the queue's bound (the pipeline's depth).  A permanent error from the child's sink stays
permanent; a dead child is a retryable error, and the delivery's policy retries the batch in a
new child, opened with ``again(sink)`` (the SQL sink: no second rotation or purge).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any, Protocol, cast, runtime_checkable

import structlog

from monitord.core.events import StampedeEvent
from monitord.system.collector import Paused
from sinks.runtime.base import Sink, SinkError, TallyingSink
from sinks.runtime.capabilities import (
    capabilities_of,
    destination_of,
    display_url_of,
    reads_of,
)
from sinks.runtime.child import Child, ChildGone
from sinks.runtime.crossing import decode_events, decode_views, encode_events, kept

log = structlog.get_logger(__name__)

SERVE = "sinks.runtime.process_sink:serve_sink"


@runtime_checkable
class Recipe(Protocol):
    """What a child builds its sink from, declaring what that sink will (``name``,
    ``capabilities``, ``reads``, ``destination``): the daemon need not load the sink's modules
    (the SQL sink's: ``sinks/sql/recipe.py``)."""

    name: str

    def build(self) -> Sink: ...


class Handed:
    """A sink built in the daemon, handed to the child as it is: the recipe that needs no
    building, so the child has one route to its sink (``build``) whatever it was sent."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.name = sink.name

    def build(self) -> Sink:
        return self.sink


def recipe_of(payload: Sink | Recipe) -> Recipe:
    """What the child is sent for ``payload``: a recipe as it is, a built sink handed in."""
    return payload if isinstance(payload, Recipe) else Handed(payload)


# ---------------------------------------------------------------- the child


def _answer(sink: Sink, action: Callable[[], None]) -> tuple[Any, ...]:
    """``("ok", tallies)`` or ``("error", message, retryable)``: what the parent raises."""
    try:
        action()
    except SinkError as exc:
        return ("error", str(exc), exc.retryable)
    except Exception as exc:  # a sink bug: permanent, as in the daemon's own thread
        return ("error", f"{sink.name}: {exc!r}", False)
    tallies = cast(TallyingSink, sink).counters if capabilities_of(sink).tallies else None
    return ("ok", dict(tallies) if tallies is not None else None)


def serve_sink(conn: Connection, recipe: Recipe) -> None:
    """Build the sink from ``recipe`` (:func:`recipe_of`) and open it, then write each batch
    the pipe brings; end when it closes."""
    try:
        sink = recipe.build()
    except SinkError as exc:
        conn.send(("error", str(exc), exc.retryable))
        return
    except Exception as exc:  # a sink bug: permanent, as an open's
        conn.send(("error", f"{recipe.name}: {exc!r}", False))
        return
    reply = _answer(sink, sink.open)
    conn.send(reply)
    if reply[0] != "ok":
        return
    gc.freeze()  # what opening made (the engine, the schema's tables) lives as long as the sink
    reads = reads_of(sink)
    decode = decode_views if reads is not None and reads.views else decode_events
    try:
        while True:
            message = conn.recv()
            if message[0] == "batch":
                # the batch's events, rows and caches' new entries: thousands of containers
                # and no cycles, that the collector would walk for nothing (bench/README.md,
                # "Issue 30, twelfth session: child30i"); the events are freed before it is
                # back on, so its next collection walks what the batch left in the caches only
                with Paused():
                    events = decode(message[1])
                    reply = _answer(sink, lambda: sink.write_batch(events))  # noqa: B023
                    del events
                conn.send(reply)
            elif message[0] == "flush":
                conn.send(_answer(sink, sink.flush))
    finally:
        sink.close()


# ---------------------------------------------------------------- the daemon's side


class ProcessSink:
    """``sink``, written by a child process; declares what ``sink`` declares, less what a
    sink in another process cannot do (delivery marks, shared engines: a replay's own).
    ``sink`` may be a :class:`Recipe`, the child building the sink from it; a built sink is
    handed in as it is (:func:`recipe_of`)."""

    def __init__(
        self,
        sink: Sink | Recipe,
        *,
        again: Callable[[Any], Sink | Recipe] | None = None,
        level: int = 20,
    ) -> None:
        self.name = sink.name
        self.capabilities = replace(
            capabilities_of(sink),
            keeps_marks=False,
            resumes=False,
            shares_engine=False,
            shares_connection=False,
        )
        self.destination = destination_of(sink)
        self.display_url = display_url_of(sink)
        self.counters: dict[str, int] = {}
        #: what the sink reads of a batch: all the child is sent (:func:`crossing.kept`)
        self._reads = reads_of(sink)
        self.children = 0  # started so far (a retry after a death starts another)
        self._sink = sink
        self._again = again
        self._level = level
        self._opened_once = False
        self._child: Child | None = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def _start(self) -> Child:
        payload = self._sink
        if self._opened_once and self._again is not None:
            payload = self._again(self._sink)
        title = f"monitord sink-{self.name} {self.destination}"
        child = Child(SERVE, recipe_of(payload), title=title, level=self._level, teardown=False)
        self.children += 1
        began = time.monotonic()
        try:
            reply = child.start()
        except ChildGone as exc:
            raise SinkError(f"{self.name}: {exc}", retryable=True) from None
        if reply[0] != "ok":
            child.close()
            raise SinkError(reply[1], retryable=reply[2])
        self._opened_once = True
        self._child = child
        log.info(
            "sink process started",
            sink=self.name,
            pid=child.pid,
            seconds=round(time.monotonic() - began, 3),
        )
        return child

    def _call(self, message: tuple[Any, ...], events: int = 0) -> None:
        child = self._child or self._start()
        try:
            reply = child.call(message)
        except ChildGone as exc:
            self._child = None
            log.error(
                "sink process died; its batch is retried in a new one",
                sink=self.name,
                error=str(exc),
                events=events,
            )
            raise SinkError(f"{self.name}: {exc}", retryable=True) from None
        if reply[0] != "ok":
            raise SinkError(reply[1], retryable=reply[2])
        if reply[1] is not None:
            self.counters = reply[1]

    # --- Sink protocol ---------------------------------------------------
    def open(self) -> None:
        if self._child is None:
            self._start()

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        """The batch's events that the sink reads, as it reads them (``reads``); none of them:
        nothing to send (the sink would write nothing)."""
        events = kept(events, self._reads)
        if events:
            wire = self._reads is None or self._reads.wire
            self._call(("batch", encode_events(events, wire=wire)), len(events))

    def flush(self) -> None:
        if self._child is not None:
            self._call(("flush",))

    def close(self) -> None:
        """The pipe closes: the child closes its sink and ends."""
        child, self._child = self._child, None
        if child is not None:
            child.close()
