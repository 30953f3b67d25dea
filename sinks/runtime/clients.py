"""Clients shared by the sinks of every workflow: one per key, closed by its last user.

The service hands a registry to the sinks that declare ``shares_connection``
(:class:`~sinks.runtime.capabilities.SharedResources`); each sink names the key that makes two
clients interchangeable (an endpoint with its TLS settings) and how to make one.  Every user of
a key runs on one lane (the sink's ``lane_key`` names the same server), so a client is used by
one thread at a time and needs no lock of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar


class Client(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Client)


class SharedClients:
    """One client per key, counted: ``acquire`` makes it or hands the one made, ``release``
    closes it once nothing uses it."""

    def __init__(self) -> None:
        self._clients: dict[Hashable, tuple[Client, int]] = {}
        self._lock = threading.Lock()
        self.made = 0  # clients made so far

    def acquire(self, key: Hashable, make: Callable[[], C]) -> C:
        with self._lock:
            known = self._clients.get(key)
            if known is None:
                client: Client = make()
                self.made += 1
            else:
                client = known[0]
            self._clients[key] = (client, (known[1] if known else 0) + 1)
            return client  # type: ignore[return-value]

    def release(self, key: Hashable) -> None:
        with self._lock:
            known = self._clients.get(key)
            if known is None:
                return
            client, users = known
            if users > 1:
                self._clients[key] = (client, users - 1)
                return
            del self._clients[key]
        client.close()

    def count(self) -> int:
        """Clients alive now."""
        with self._lock:
            return len(self._clients)

    def close(self) -> None:
        with self._lock:
            clients = [client for client, _ in self._clients.values()]
            self._clients.clear()
        for client in clients:
            client.close()
