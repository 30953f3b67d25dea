"""When a delivery stops: asked to (drain, then stop), aborted (spool what is queued),
interrupted (drop what is queued), and the deadline for trying a down sink.

:class:`StopRequest` is the delivery's record of it (``cond`` held around every call); the
executor reads it in :meth:`sinks.runtime.delivery.Delivery.decide`, and
:meth:`~sinks.runtime.delivery.Delivery.finish` says what was left behind.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class StopRequest:
    """``stopping``: stop once delivered (or past ``deadline`` while the sink fails);
    ``abort``: stop after the current step, spooling what is still in memory; ``discard``:
    interrupted, the queued batches are dropped, not written."""

    stopping: bool = False
    abort: bool = False
    discard: bool = False
    deadline: float = 0.0

    def request(self, drain_timeout: float, *, abort: bool = False) -> None:
        """Stop; a down sink is tried for ``drain_timeout`` more seconds at most (an earlier
        deadline asked before stays)."""
        self.abort = self.abort or abort
        deadline = time.monotonic() + drain_timeout
        if not self.stopping or deadline < self.deadline:
            self.deadline = deadline
        self.stopping = True

    def over(self, pending: bool) -> bool:
        """Stop now: aborted, or asked to and nothing is left to write."""
        return self.stopping and (self.abort or not pending)

    def expired(self, now: float) -> bool:
        """A failing sink's drain time is over: the rest stays spooled for the next daemon."""
        return self.stopping and now >= self.deadline

    def capped(self, wait: float, now: float) -> float:
        """A retry's pause, no longer than the time left to stop in."""
        return min(wait, max(0.0, self.deadline - now)) if self.stopping else wait
