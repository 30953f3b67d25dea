"""One spool published through a hub (:mod:`sinks.amqp.hub`): the AMQP sink's handle on its
delivery, and the per-spool state the hub's loop keeps (turn, backoff, drain)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Protocol

from sinks.amqp.broker import WARN_EVERY, Backoff
from sinks.amqp.config import AMQPConfig
from sinks.runtime.policy import DeliveryState
from sinks.runtime.spool.segments import Spool


class Hub(Protocol):
    """What a client uses of its :class:`sinks.amqp.hub.Hub` (which imports this module)."""

    connected: bool
    connections: int
    link: DeliveryState  # the broker connection's state (the sink's health shows it)

    @property
    def alive(self) -> bool: ...

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None: ...

    def schedule(self, client: HubClient) -> None: ...

    def request_stop(self, client: HubClient) -> None: ...

    def detach(self, client: HubClient) -> None: ...


class HubClient:
    """One spool published through a hub; the sink's handle on its delivery."""

    def __init__(self, hub: Hub, config: AMQPConfig, spool: Spool, name: str) -> None:
        self.hub = hub
        self.config = config
        self.spool = spool
        self.name = name
        self.delivered = 0
        self.last_error: str | None = None
        # Owned by the hub's loop:
        self.queued = False  # in the round-robin queue
        self.busy = False  # a batch in flight
        self.stopping = False
        self.detached = False
        self.backoff = Backoff()
        self.retry_handle: asyncio.TimerHandle | None = None
        self.step_task: asyncio.Task[None] | None = None
        self.warned_at = -WARN_EVERY
        self.backlog = 0  # pending at (re)connection, for the "drained" line
        self.backlog_since = 0.0
        self.backlog_delivered = 0
        self.drained = threading.Event()

    @property
    def connected(self) -> bool:
        return self.hub.connected

    @property
    def connections(self) -> int:
        return self.hub.connections

    def notify(self) -> None:
        """New records were appended (called from the sink's thread)."""
        self.hub.call_soon(self.hub.schedule, self)

    def stop(self, timeout: float) -> bool:
        """Drain for at most ``timeout`` seconds, then detach; True if all was delivered.

        After this returns the hub never touches the spool again.
        """
        if self.hub.alive:
            self.hub.call_soon(self.hub.request_stop, self)
            self.drained.wait(timeout)
        self.hub.detach(self)
        return self.spool.pending == 0
