"""One event plugin as the status pages, ``/metrics``, the exit log and the summary see it.

A typed record mapped from the plugin's delivery (:func:`sinks.plugins.host.plugin_state`): its
hooks' life and counters (:mod:`sinks.plugins.calls`, :mod:`sinks.plugins.isolated`) beside its
delivery's health, which is the runtime's :class:`~sinks.runtime.health.SinkHealth` like every
sink's (``dropped``, ``spooled`` and the delivery state are read from it).
"""

from __future__ import annotations

from dataclasses import dataclass

from sinks.runtime.health import SinkHealth


@dataclass(frozen=True, slots=True)
class PluginState:
    """``state``: the plugin's hooks (new, running, stopped, stuck, skipped); ``delivery``:
    the runtime's feeding of it (None: it never ran, e.g. skipped).  ``ticks`` is a thread
    plugin's, ``restarts`` and ``pid`` a process-isolated one's (None for the other kind)."""

    name: str
    state: str
    isolation: str | None = None
    overflow_policy: str | None = None
    delivered: int = 0  # events handed to handle_event (raised or not)
    queued: int = 0
    dropped: int = 0
    errors: int = 0
    last_error: str | None = None
    ticks: int | None = None
    restarts: int | None = None
    pid: int | None = None
    delivery: SinkHealth | None = None

    @property
    def spooled(self) -> int:
        """Events in its durable spool, not handed to it yet (spool policy)."""
        return self.delivery.spooled if self.delivery is not None else 0

    @property
    def delivery_state(self) -> str | None:
        """Up, draining, down (no room: its events wait in the spool), disabled; None."""
        return self.delivery.state if self.delivery is not None else None
