"""The per-workflow daemon's sinks: one executor each, every batch to every one of them.

Every sink gets a thread (:class:`~sinks.runtime.runner.SinkWorker`); with ``processes=True``
a sink whose capabilities say it is CPU-bound (``cpu_bound``: SQL) gets its own process
(:class:`~sinks.runtime.process_worker.ProcessSinkWorker`) instead.  Threads are the default:
on the 2-core machine measured (bench/README.md, "SQL loader: thread or process") a replay
with the loader in a thread took less wall and CPU time at 10, 2,000 and 20,000 jobs (a
second interpreter and an encode/decode of every batch cost more than the second core gave).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitord.core.events import StampedeEvent
from sinks.runtime.base import Sink
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.process_worker import ProcessSinkWorker
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
        processes: bool = False,
        spool: SpoolSettings | None = None,
    ) -> None:
        self.workers: list[SinkWorker | ProcessSinkWorker] = [
            ProcessSinkWorker(s, spool=spool)
            if processes and capabilities_of(s).cpu_bound
            else SinkWorker(s, spool=spool)
            for s in sinks
        ]

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

    def stats(self) -> list[dict[str, Any]]:
        """Per sink: name, queued batches, spooled events, failures, events written."""
        return [{"name": w.sink.name, **w.stats()} for w in self.workers]

    def health(self) -> list[dict[str, Any]]:
        """Per sink: :meth:`Delivery.health`."""
        return [w.health() for w in self.workers]

    @property
    def all_failed(self) -> bool:
        """Every sink is disabled (none can take events)."""
        return bool(self.workers) and all(w.failed for w in self.workers)
