"""A workflow's sinks, every batch to every one of them: :class:`SinkSet` (the per-workflow
daemon: one executor each) and :class:`SharedSinkSet` (a workflow of the service: one
delivery each on the service's lanes, :mod:`sinks.runtime.lanes`).

Every sink gets a thread (:class:`~sinks.runtime.runner.SinkWorker`), the SQL loader too: on
the 2-core machine measured, a process of its own was slower and cost more CPU
(bench/README.md, "SQL loader: thread or process").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from monitord.core.events import StampedeEvent
from sinks.runtime.base import Sink
from sinks.runtime.executor import Executor
from sinks.runtime.health import SinkHealth
from sinks.runtime.lanes import LaneHandle
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import SpoolSettings


class SinkSet:
    """All configured sinks; each event batch goes to every one of them.

    ``spool``: where and how the sinks spool while they are down (None: memory only).
    """

    def __init__(
        self,
        sinks: Sequence[Sink],
        *,
        spool: SpoolSettings | None = None,
    ) -> None:
        self.workers: list[Executor] = [SinkWorker(s, spool=spool) for s in sinks]

    def __bool__(self) -> bool:
        return bool(self.workers)

    def start(self) -> None:
        for w in self.workers:
            w.start()

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            for w in self.workers:
                w.put(batch)

    def flush(self) -> None:
        for w in self.workers:
            w.flush()

    def close(self) -> None:
        """Stop every worker at once (each may wait up to its drain timeout for a down sink)."""
        for w in self.workers:
            w.request_stop()
        for w in self.workers:
            w.join()

    def health(self) -> list[SinkHealth]:
        """Per sink: :meth:`Delivery.health`."""
        return [w.health() for w in self.workers]

    @property
    def all_failed(self) -> bool:
        """Every sink is disabled (none can take events)."""
        return bool(self.workers) and all(w.failed for w in self.workers)


class _Closing(Protocol):
    """The owner of the lanes: ``closing`` once the service stops."""

    closing: bool


class SharedSinkSet:
    """What one workflow's Monitor sees: the ``SinkSet`` interface over lane deliveries."""

    def __init__(self, handles: list[LaneHandle], pool: _Closing | None = None) -> None:
        self.handles = handles
        self.pool = pool
        self.events_published = 0
        self.closing = False  # the workflow ended: its deliveries drain, then close

    def __bool__(self) -> bool:
        return bool(self.handles)

    def start(self) -> None:
        """Lanes open each sink on their first turn."""

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        if batch:
            self.events_published += len(batch)
            for handle in self.handles:
                handle.put(batch)

    def flush(self) -> None:
        """Every batch handed over is in its sink or durably spooled (all sinks at once)."""
        requests = [(h, h.request_flush()) for h in self.handles]
        for handle, request in requests:
            handle.wait_flushed(request)

    def close(self) -> None:
        """Deliver everything (as long as the service runs), then close the sinks.

        A service stop (the pool closing) cuts the wait short: the rest stays spooled.
        """
        self.request_close()
        for handle in self.handles:
            handle.join()

    def request_close(self) -> None:
        """Start :meth:`close` without waiting (see :attr:`closed`)."""
        self.closing = True
        closing = self.pool is not None and self.pool.closing
        for handle in self.handles:
            handle.request_stop(0.0 if closing else math.inf, abort=closing)

    @property
    def closed(self) -> bool:
        """Every delivery is over (or its lane is gone)."""
        return all(h.finished.is_set() or not h.lane.thread_alive() for h in self.handles)

    @property
    def undelivered(self) -> int:
        """Events handed over and not yet in their sinks (memory and spool)."""
        total = 0
        for handle in self.handles:
            total += handle.health().spooled
            total += sum(b.count for b in handle.pending_batches())
        return total

    def health(self) -> list[SinkHealth]:
        return [h.health() for h in self.handles]

    @property
    def failed(self) -> bool:
        return any(h.failed for h in self.handles)
