"""What a delivery's queue holds (batches, flush requests) and what its executor is told to
do next (a step to run, :class:`Wait`, :data:`EXIT`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from monitord.core.events import StampedeEvent
from sinks.runtime.codec import decode_marked, encode_batch
from sinks.runtime.marks import Marks


@dataclass
class Batch:
    """A batch as events, as bytes (``encode_batch``), or both; decoded/encoded on demand.

    ``marks``: its delivery marks (:mod:`sinks.runtime.marks`), kept in the bytes too."""

    count: int
    events: Sequence[StampedeEvent] | None = None
    data: bytes | None = None
    marks: Marks | None = None

    def decoded(self) -> Sequence[StampedeEvent]:
        if self.events is None:
            assert self.data is not None
            self.events, self.marks = decode_marked(self.data)
        return self.events

    def encoded(self) -> bytes:
        if self.data is None:
            assert self.events is not None
            self.data = encode_batch(self.events, self.marks)
        return self.data


class _Flush:
    """A flush request in the queue: set once everything queued before it is durable."""

    def __init__(self) -> None:
        self.done = threading.Event()


_Item = Batch | _Flush


class Wait:
    """A delivery has nothing to do for ``timeout`` seconds (None: until notified)."""

    __slots__ = ("timeout",)

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout


EXIT = object()  # the delivery is over: run ``finish`` and forget it
Step = Callable[[], None] | Wait | object
