"""The one interface every sink implements.

Sinks are blocking and single-threaded by contract: the registry drives each
sink from its own worker thread, so a sink never touches the event loop and a
slow or broken sink never stalls the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from monitord.core.events import StampedeEvent
from sinks.runtime.marks import Marks


class SinkError(Exception):
    """A sink failed; ``retryable`` says whether the same batch may be tried again."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class Sink(Protocol):
    """Receives batches of events in order; ``flush`` makes them durable."""

    name: str

    def open(self) -> None: ...

    def write_batch(self, events: Sequence[StampedeEvent]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class MarkingSink(Sink, Protocol):
    """A sink that keeps delivery marks (``Capabilities.keeps_marks``, :mod:`sinks.runtime.marks`)."""

    def read_marks(self, stream: str) -> dict[str, int]:
        """Per workflow uuid, the events of ``stream`` the sink holds (durably)."""
        ...

    def write_marked(self, events: Sequence[StampedeEvent], marks: Marks) -> None:
        """``write_batch``, storing ``marks`` atomically with the events' data."""
        ...


class TickingSink(Sink, Protocol):
    """A sink called now and then while idle (``Capabilities.ticks``: an event plugin)."""

    def tick(self) -> None: ...


class TallyingSink(Sink, Protocol):
    """A sink with tallies of its own (``Capabilities.tallies``), read at every health look."""

    counters: dict[str, int]
