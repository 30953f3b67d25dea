"""The delivery runtime: every sink of every mode gets its batches the same way.

A sink (:class:`sinks.runtime.base.Sink`) only says how to open, write a batch, flush
and close, and which errors are retryable (``SinkError(retryable=True)``).
Everything else is here, written once:

* :class:`~sinks.runtime.delivery.Delivery` -- one sink's delivery: a small memory queue, its on-disk
  spool (:mod:`sinks.runtime.spool`), and the retry/state policy
  (:class:`sinks.runtime.policy.DeliveryState`, pure and tested without I/O).  It has no
  thread: an *executor* asks it :meth:`Delivery.decide` (with ``cond`` held) for
  the next step and runs that step with :meth:`Delivery.run`.
* Executors only say where the work runs: :class:`SinkWorker` (a dedicated
  thread: the per-workflow daemon) and the service's lanes
  (:class:`sinks.runtime.lanes.SinkLane`: many deliveries on a few threads, one step
  each per turn).
  Both offer one interface (:class:`sinks.runtime.executor.Executor`) and
  report one record (:class:`sinks.runtime.health.SinkHealth`).
* :class:`~sinks.runtime.sinkset.SinkSet` -- the per-workflow daemon's sinks, one executor each.

API for a host of sinks (e.g. plugins)::

    worker = SinkWorker(sink, spool=SpoolSettings(root="/var/spool/x"))  # or a lane
    # a queue bounded in events, a full one spooling (or dropping: sinks/runtime/overflow.py)
    worker = SinkWorker(sink, spool=settings, bound=QueueBound(10000, "spool"))
    worker.start()
    worker.put(events)          # never blocks on a down sink (spools); back-pressure when up
    worker.flush()              # returns once all is in the sink or durably spooled
    worker.health()             # SinkHealth(state=up|down|draining|disabled, since, spooled,
                                #  spooled_bytes, oldest, retries, last_error, ...)
    worker.stop()               # drains; a down sink gets ``drain_timeout`` s, the rest
                                # stays spooled and the next start delivers it first
    worker.interrupt()          # ends after the batch in hand, drops the queued ones
                                # (an interrupted replay: its rerun rewrites everything)

Behaviour.  A sink that fails *retryably* (connection refused, server
restarting, locked database, deadlock storm), whether at open, write or flush,
is "down": its queued batches and every new one go to its spool with one disk
append, so the producer and the other sinks carry on.  It is retried with
jittered, capped exponential backoff, never giving up; once it takes a call
again it writes the spool out, oldest first, and only then new batches (strict
order: while the spool holds anything, new batches join it).  A permanent
failure disables that sink only, logged once.

Ordering invariant: every batch in the spool is older than every batch in the
memory queue.  The producer appends to the spool only while the queue is empty,
and the executor moves the queue into the spool (in order) when the sink goes
down; it takes from the queue only when the spool is empty.

``flush`` returns once every batch handed over is durably in the sink or in the
spool (fsync): the daemon's checkpoints (monitord.info / monitord.recover) rely
on it.  ``stop`` keeps trying a down sink for ``drain_timeout`` seconds, then
leaves the rest spooled for the next daemon (which delivers it first on resume,
and discards it when the outputs start over).

Without :class:`~sinks.runtime.spool.SpoolSettings` (or when the spool cannot be
written) batches stay in memory: a down sink then blocks the producer while it
is retried ``retries`` times, and is disabled after that.
"""

from __future__ import annotations

import threading

from sinks.runtime.base import Sink
from sinks.runtime.bounded import BoundedQueue
from sinks.runtime.delivery import (
    EXIT,
    Batch,
    Delivery,
    OutageReporter,
    Step,
    Wait,
)
from sinks.runtime.overflow import UNBOUNDED, QueueBound
from sinks.runtime.policy import RetryPolicy
from sinks.runtime.spool import SpoolSettings

__all__ = [
    "EXIT",
    "Batch",
    "Delivery",
    "OutageReporter",
    "SinkWorker",
    "Step",
    "Wait",
]


class SinkWorker(Delivery):
    """A delivery on a dedicated thread (the per-workflow daemon, each plugin)."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_queue: int = 4,
        retries: int = 10,
        spool: SpoolSettings | None = None,
        bound: QueueBound = UNBOUNDED,
        queue: BoundedQueue | None = None,
        retry: RetryPolicy | None = None,
        held_upstream: bool = False,
        reporter: OutageReporter | None = None,
    ) -> None:
        super().__init__(
            sink,
            max_queue=max_queue,
            retries=retries,
            spool=spool,
            bound=bound,
            queue=queue,
            retry=retry,
            held_upstream=held_upstream,
            reporter=reporter,
        )
        self._thread = threading.Thread(target=self._run, name=f"sink-{sink.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _running(self) -> bool:
        return self._thread.is_alive() and not self.finished.is_set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread (at most ``timeout`` s: see :meth:`ended`)."""
        if self._thread.is_alive():
            self._thread.join(timeout)

    def ended(self) -> bool:
        return not self._thread.is_alive()

    def stop(self) -> None:
        self.request_stop()
        self.join()

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    step = self.decide()
                    while isinstance(step, Wait):
                        self._cond.wait(step.timeout)
                        step = self.decide()
                if step is EXIT:
                    break
                self.run(step)  # type: ignore[arg-type]
        except Exception as exc:  # isolation: a runner bug stays with its sink
            self.crashed(exc)
        finally:
            self.finish()
