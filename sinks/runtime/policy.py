"""What a sink's delivery does after each call: the retry/state policy, written once, no I/O.

Every way of running a sink (its own thread, a shared lane of the service:
:mod:`sinks.runtime.runner`, :mod:`sinks.runtime.lanes`; a process-isolated plugin's
restarts) asks a :class:`DeliveryState` what a failure
means, and tells it when a call worked.  It holds nothing but numbers and a clock,
so every rule below is tested without a sink, a thread or a disk
(tests/test_delivery_policy.py):

* :func:`is_retryable` is the one place that sorts an error: a :class:`SinkError`
  says so itself (``retryable``; the SQL sink decides with ``sinks.sql.errors``:
  wrong password, missing database are permanent); anything else is a sink bug,
  permanent.
* A permanent error disables the sink at once (state ``disabled``).
* A retryable one makes the sink ``down``: retried after a jittered, capped,
  exponential backoff, for ever when its batches can wait in a spool; without a
  spool (memory only) after ``max_attempts`` consecutive failures it is disabled,
  since the daemon cannot wait for ever with events in memory.
* The first call that works after failures ends the outage ("back": state
  ``draining`` while its backlog is delivered); the sink is ``up`` again once
  the backlog is delivered too.

The clock and the random source are parameters, so a test can drive an outage
of any length in no time; :meth:`DeliveryState.health` is what health
endpoints and metrics show (:class:`sinks.runtime.health.SinkHealth`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sinks.runtime.base import SinkError
from sinks.runtime.health import DISABLED, DOWN, DRAINING, UP, SinkHealth

__all__ = [
    "DISABLED",
    "DOWN",
    "DRAINING",
    "UP",
    "RECONNECT",
    "DeliveryState",
    "Recovery",
    "RetryPolicy",
    "Verdict",
    "is_retryable",
]


def is_retryable(exc: BaseException) -> bool:
    """Whether the same call may work later (the one place that decides "permanent")."""
    return isinstance(exc, SinkError) and exc.retryable


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff ``first * 2**n`` capped at ``cap``, each delay times ``1 +- jitter``.

    ``max_attempts``: consecutive retryable failures tolerated while batches wait in
    memory (no spool); with a spool there is no limit.
    """

    first: float = 0.5
    cap: float = 5.0
    jitter: float = 0.2
    max_attempts: int = 10

    def delay(self, failures: int, rand: float) -> float:
        """The pause after the ``failures``-th consecutive failure (1-based); ``rand`` in [0,1)."""
        base = min(self.cap, self.first * (2.0 ** min(64, max(0, failures - 1))))
        return max(0.0, base * (1.0 + self.jitter * (2.0 * rand - 1.0)))


#: Reconnecting to a server the process cannot work without (the
#: ingest's broker and database): retried for ever; the cap bounds how late the end of an
#: outage is noticed.  Configured here only.
RECONNECT = RetryPolicy(first=0.5, cap=15.0)


@dataclass(frozen=True)
class Verdict:
    """What to do after a failed call."""

    disable: bool  # give the sink up (permanent error, or memory-only budget spent)
    delay: float  # seconds before the next attempt (when not disabled)
    first: bool  # this failure started an outage (log "down" once)
    attempt: int  # consecutive failures so far


@dataclass(frozen=True)
class Recovery:
    """The first success after an outage: how long the sink was down, how many tries."""

    down_seconds: float
    failed_attempts: int


@dataclass
class DeliveryState:
    """One sink's delivery state and counters; every decision of the runtime is made here."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.monotonic
    rand: Callable[[], float] = random.random
    wall: Callable[[], float] = time.time
    state: str = UP
    since: float | None = None  # wall time of the last change of state (None: never changed)
    down_since: float | None = None  # monotonic start of the current outage
    back_at: float | None = None  # when the sink took a call again (its backlog then drains)
    retry_at: float = 0.0
    attempts: int = 0  # consecutive failures
    retries: int = 0  # retryable failures, over the daemon's life
    permanent_failures: int = 0
    outages: int = 0
    outage_seconds: float = 0.0
    last_error: str | None = None

    @property
    def down(self) -> bool:
        return self.state == DOWN

    @property
    def disabled(self) -> bool:
        return self.state == DISABLED

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.since = self.wall()

    def failed(self, exc: BaseException, *, can_wait: bool) -> Verdict:
        """A call failed with ``exc``; ``can_wait``: its batches are safe in a spool."""
        self.last_error = str(exc)
        if not is_retryable(exc):
            return self._disable()
        self.attempts += 1
        self.retries += 1
        if not can_wait and self.attempts > self.policy.max_attempts:
            return self._disable()
        now = self.clock()
        first = self.down_since is None
        if first:
            self.down_since = now
            self.outages += 1
        self.back_at = None
        self._set(DOWN)
        delay = self.policy.delay(self.attempts, self.rand())
        self.retry_at = now + delay
        return Verdict(False, delay, first, self.attempts)

    def disable(self, exc: BaseException) -> Verdict:
        """Give up at once whatever ``exc`` is (a runtime bug, a broken sink process)."""
        self.last_error = str(exc)
        return self._disable()

    def _disable(self) -> Verdict:
        self.permanent_failures += 1
        self._end_outage()
        self._set(DISABLED)
        return Verdict(True, 0.0, self.attempts == 0, self.attempts)

    def succeeded(self, *, backlog: bool) -> Recovery | None:
        """A call worked; ``backlog``: batches are still waiting (spooled) to be delivered.

        Returns the recovery when this success ends a run of failures (the sink is back).
        """
        recovery = None
        if self.attempts and self.down_since is not None:
            now = self.clock()
            self.back_at = now
            recovery = Recovery(now - self.down_since, self.attempts)
        self.attempts = 0
        self.retry_at = 0.0
        if not backlog:
            self.caught_up()
        elif recovery is not None:
            self._set(DRAINING)
        return recovery

    def caught_up(self) -> float | None:
        """Nothing is waiting any more: the outage (if any) is over; returns its length."""
        if self.down_since is None or self.attempts:
            return None
        length = self.clock() - self.down_since
        self._end_outage()
        self._set(UP)
        return length

    def _end_outage(self) -> None:
        if self.down_since is not None:
            self.outage_seconds += self.clock() - self.down_since
        self.down_since = None
        self.back_at = None

    def wait(self) -> float:
        """Seconds until the next attempt may be made (0: now)."""
        return max(0.0, self.retry_at - self.clock())

    def health(self, name: str) -> SinkHealth:
        """State and counters as the typed record health checks, status pages and metrics read
        (the spool and queue fields are the delivery's to fill)."""
        now = self.clock()
        return SinkHealth(
            name=name,
            state=self.state,
            since=self.since,
            down_seconds=round(now - self.down_since, 3) if self.down_since else 0.0,
            attempts=self.attempts,
            retries=self.retries,
            permanent_failures=self.permanent_failures,
            outages=self.outages,
            outage_seconds=round(
                self.outage_seconds + (now - self.down_since if self.down_since else 0.0), 3
            ),
            last_error=self.last_error,
        )
