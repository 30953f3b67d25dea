"""The one interface of every way to run a sink, and of a workflow's set of sinks.

An executor only says *where* a sink's delivery steps run; *what* runs is always the
runtime's :class:`~sinks.runtime.delivery.Delivery` (queue, spool, retry policy), and what it
reports is always a :class:`~sinks.runtime.health.SinkHealth`.  Two executors:

* :class:`sinks.runtime.runner.SinkWorker` -- a dedicated thread (the per-workflow daemon,
  each plugin);
* :class:`sinks.runtime.lanes.LaneHandle` -- one of many deliveries on a shared thread
  (the service).

A workflow's sinks (:class:`SinkSet`) are :class:`sinks.runtime.sinkset.SinkSet` (the
daemon), :class:`sinks.runtime.sinkset.SharedSinkSet` (the service) or, with event plugins
beside them, :class:`sinks.plugins.host.SinksAndPlugins`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from monitord.core.events import StampedeEvent
from sinks.runtime.base import Sink
from sinks.runtime.health import SinkHealth


@runtime_checkable
class Executor(Protocol):
    """One sink's delivery, wherever it runs."""

    sink: Sink

    @property
    def failed(self) -> bool:
        """Disabled for good (a permanent error, a dead sink process)."""
        ...

    @property
    def events_written(self) -> int: ...

    @property
    def failures(self) -> int:
        """Failed sink calls (retryable or not)."""
        ...

    @property
    def spooled(self) -> int:
        """Events in the spool, not yet in the sink."""
        ...

    @property
    def queued(self) -> int:
        """Events handed over, neither in the sink nor spooled yet."""
        ...

    def start(self) -> None: ...

    def put(self, batch: Sequence[StampedeEvent]) -> None:
        """Hand over a batch: spooled at once while the sink is down, back-pressure when up."""
        ...

    def flush(self, timeout: float | None = None) -> None:
        """Return once every batch handed over is in the sink or durably spooled."""
        ...

    def request_stop(self) -> None:
        """Stop once delivered (a down sink: after its drain timeout, the rest spooled)."""
        ...

    def interrupt(self) -> None:
        """Stop after the step in hand, dropping what is queued (an interrupted replay)."""
        ...

    def join(self) -> None: ...

    def stop(self) -> None: ...

    def health(self) -> SinkHealth:
        """Its delivery's one health record (the end-of-run report reads it too)."""
        ...


@runtime_checkable
class SinkSet(Protocol):
    """A workflow's sinks: every batch to every one of them (what the Monitor publishes to)."""

    def __bool__(self) -> bool: ...

    def start(self) -> None: ...

    def publish(self, batch: Sequence[StampedeEvent]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def health(self) -> list[SinkHealth]: ...
