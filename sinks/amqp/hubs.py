"""Hubs by broker (:class:`HubRegistry`), and the process's default registry."""

from __future__ import annotations

import threading

from sinks.amqp.broker import HubKey, hub_key
from sinks.amqp.config import AMQPConfig
from sinks.amqp.hub import Hub, HubClient
from sinks.runtime.spool.segments import Spool


class HubRegistry:
    """Hubs by broker: the first sink of a broker starts its hub, the last one ends it."""

    def __init__(self) -> None:
        self._hubs: dict[HubKey, Hub] = {}
        self._lock = threading.Lock()

    def attach(self, config: AMQPConfig, spool: Spool, name: str) -> HubClient:
        key = hub_key(config)
        with self._lock:
            hub = self._hubs.get(key)
            if hub is None or not hub.alive:  # (a hub whose thread died is not reused)
                hub = self._hubs[key] = Hub(config, release=self._release)
            # Attached under the lock, so a hub is never ended and handed out at once.
            return hub.attach(config, spool, name)

    def _release(self, hub: Hub) -> bool:
        """A client left ``hub``: True (and forgotten) if that was its last."""
        with self._lock:
            if hub.client_count():
                return False
            for key, known in list(self._hubs.items()):
                if known is hub:
                    del self._hubs[key]
            return True

    def hubs(self) -> list[Hub]:
        with self._lock:
            return list(self._hubs.values())

    @property
    def connections(self) -> int:
        """Connections opened so far by the hubs alive now (reconnects included)."""
        return sum(h.connections for h in self.hubs())

    def close(self) -> None:
        for hub in self.hubs():
            hub.close()
        with self._lock:
            self._hubs.clear()


_default = HubRegistry()


def default_registry() -> HubRegistry:
    """The process's registry: sinks of one process share a connection per broker."""
    return _default
