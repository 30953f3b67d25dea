"""The delivery policy (sinks/policy.py) on a fake clock: no sink, no thread, no disk."""

from __future__ import annotations

import pytest

from sinks.runtime.base import SinkError
from sinks.runtime.policy import (
    DISABLED,
    DOWN,
    DRAINING,
    UP,
    DeliveryState,
    RetryPolicy,
    is_retryable,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def state(clock: Clock, **policy: float) -> DeliveryState:
    return DeliveryState(
        RetryPolicy(**policy),  # type: ignore[arg-type]
        clock=clock,
        rand=lambda: 0.5,  # no jitter: delays are exact
        wall=lambda: clock.now + 1e9,
    )


RETRY = SinkError("connection refused", retryable=True)


def test_only_a_retryable_sink_error_is_retryable() -> None:
    assert is_retryable(RETRY)
    assert not is_retryable(SinkError("password authentication failed"))
    assert not is_retryable(RuntimeError("a sink bug"))


def test_backoff_doubles_to_its_cap_with_bounded_jitter() -> None:
    policy = RetryPolicy(first=0.5, cap=5.0, jitter=0.2)
    assert [policy.delay(n, 0.5) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert policy.delay(3, 0.0) == pytest.approx(1.6)
    assert policy.delay(3, 0.999999) == pytest.approx(2.4, rel=1e-5)


def test_with_a_spool_an_outage_of_any_length_never_disables() -> None:
    """Ten thousand failures (hours at the 5 s cap, on the fake clock): still retrying."""
    clock = Clock()
    st = state(clock, first=0.5, cap=5.0, max_attempts=10)
    verdict = st.failed(RETRY, can_wait=True)
    assert verdict.first and not verdict.disable and st.state == DOWN
    started = clock.now
    for _ in range(10_000):
        clock.now = st.retry_at
        verdict = st.failed(RETRY, can_wait=True)
        assert not verdict.disable and not verdict.first
    assert st.state == DOWN and st.retries == 10_001 and st.outages == 1
    assert clock.now - started > 10 * 3600  # the outage outlasted any retry budget
    assert st.wait() == pytest.approx(5.0)


def test_in_memory_the_retries_are_bounded() -> None:
    clock = Clock()
    st = state(clock, max_attempts=3)
    assert [st.failed(RETRY, can_wait=False).disable for _ in range(4)] == [
        False,
        False,
        False,
        True,
    ]
    assert st.state == DISABLED and st.permanent_failures == 1


def test_a_permanent_error_disables_at_once() -> None:
    clock = Clock()
    st = state(clock)
    verdict = st.failed(SinkError("database does not exist"), can_wait=True)
    assert verdict.disable and st.state == DISABLED and st.retries == 0
    assert st.health("db").last_error == "database does not exist"
    assert st.health("db").since == clock.now + 1e9


def test_back_then_draining_then_up_with_outage_length() -> None:
    clock = Clock()
    st = state(clock, first=1.0, cap=1.0)
    st.failed(RETRY, can_wait=True)
    down_at = st.since
    for _ in range(5):
        clock.now += 1.0
        st.failed(RETRY, can_wait=True)
    assert st.health("db").down_seconds == 5.0 and st.since == down_at
    clock.now += 1.0
    recovery = st.succeeded(backlog=True)  # the server took a call; the spool still holds some
    assert recovery is not None and recovery.down_seconds == 6.0 and recovery.failed_attempts == 6
    assert st.state == DRAINING and st.attempts == 0 and st.wait() == 0.0
    clock.now += 2.0
    assert st.succeeded(backlog=True) is None  # more drained batches: no second "back"
    assert st.caught_up() == 8.0
    assert st.state == UP and st.outage_seconds == 8.0 and st.down_since is None
    assert st.caught_up() is None  # once


def test_a_failure_while_draining_is_the_same_outage() -> None:
    clock = Clock()
    st = state(clock)
    st.failed(RETRY, can_wait=True)
    clock.now = st.retry_at
    st.succeeded(backlog=True)
    verdict = st.failed(RETRY, can_wait=True)
    assert not verdict.first and st.outages == 1 and st.state == DOWN


def test_success_without_failures_changes_nothing() -> None:
    clock = Clock()
    st = state(clock)
    assert st.succeeded(backlog=False) is None
    assert st.state == UP and st.since is None and st.health("db").retries == 0
