"""A sink's delivery health, one typed record: what the daemon, ``/healthz``, ``/metrics``,
``/status.json`` and ``monitord status`` show.

Written once, by the runtime (:meth:`sinks.runtime.delivery.Delivery.health`, from its
:class:`~sinks.runtime.policy.DeliveryState` and its spool); :func:`merge_health` folds the
deliveries of many workflows to one destination (the service).  An event plugin's health is
the same record, its hooks' life and counters beside the delivery's in :class:`PluginHooks`
(:func:`sinks.plugins.host.plugin_health`).  ``last_error`` is masked when the record is
made, so no reader can show a password.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from monitord.system.secrets import mask_url_passwords
from sinks.runtime.capabilities import destination_of as destination_of  # its former home

UP, DOWN, DRAINING, DISABLED = "up", "down", "draining", "disabled"

_SEVERITY = {UP: 0, DRAINING: 1, DOWN: 2, DISABLED: 3}


SKIPPED = "skipped"  # an enabled event plugin that never ran (PluginHooks.state)


@dataclass(frozen=True, slots=True)
class PluginHooks:
    """An event plugin's hooks (:mod:`sinks.plugins`), beside its delivery's health.

    ``state``: the hooks' (new, running, stopped, stuck; ``skipped``: it never ran, and the
    health around it says only why); ``delivered``: events handed to ``handle_event`` (raised
    or not); ``queued``: events waiting for it in memory; ``last_error``: its hooks' last
    error (masked).  ``ticks`` is a thread plugin's, ``restarts`` and ``pid`` a
    process-isolated one's (None for the other kind)."""

    state: str
    isolation: str | None = None
    overflow_policy: str | None = None
    delivered: int = 0
    queued: int = 0
    errors: int = 0
    last_error: str | None = None
    ticks: int | None = None
    restarts: int | None = None
    pid: int | None = None

    def __post_init__(self) -> None:
        if self.last_error is not None:
            object.__setattr__(self, "last_error", mask_url_passwords(self.last_error))

    @property
    def ran(self) -> bool:
        """It was started and fed (not skipped): its delivery's fields mean something."""
        return self.state != SKIPPED


@dataclass(frozen=True, slots=True)
class SinkHealth:
    """One sink's delivery (or, merged, one destination's over its workflows).

    ``state``: up, draining (back, delivering its backlog), down (retrying), disabled;
    ``since``: epoch seconds it entered that state (None: never changed).  ``spooled``:
    events on disk not yet in the sink (``spooled_bytes`` of them), ``oldest``: age in
    seconds of the oldest of them; ``queued``: batches waiting in memory.  ``destination``:
    where the sink writes, as people name it (:func:`~sinks.runtime.capabilities.destination_of`).
    ``spool_path``: the durable spool its backlog waits in; ``left_behind``:
    events the runtime did not deliver when it finished (left in its spool, or lost from memory);
    ``dropped``: events its queue's drop policy lost (an event plugin's ``drop-newest``/``-oldest``).
    ``plugin``: an event plugin's hooks (None for every other sink); ``name`` is then the
    plugin's.
    """

    name: str
    state: str = UP
    since: float | None = None
    spooled: int = 0
    spooled_bytes: int = 0
    oldest: float = 0.0
    queued: int = 0
    retries: int = 0  # retryable failures
    permanent_failures: int = 0
    attempts: int = 0  # consecutive failures now
    outages: int = 0
    outage_seconds: float = 0.0
    down_seconds: float = 0.0
    last_error: str | None = None
    events_written: int = 0
    row_by_row_batches: int = 0  # SQL: batches written row by row after a rejected batch
    rows_rejected: int = 0  # SQL: rows refused then
    workflow: str | None = None  # the service: whose delivery this is
    workflows: int = 1  # merged: deliveries to the destination
    workflows_not_up: tuple[str, ...] = ()
    destination: str = ""
    spool_path: str | None = None
    left_behind: int = 0
    dropped: int = 0  # events a dropping queue bound lost (sinks/runtime/overflow.py)
    plugin: PluginHooks | None = None

    def __post_init__(self) -> None:
        if self.last_error is not None:
            object.__setattr__(self, "last_error", mask_url_passwords(self.last_error))
        if self.destination:
            object.__setattr__(self, "destination", mask_url_passwords(self.destination))

    @property
    def failures(self) -> int:
        """Failed sink calls (retryable or not)."""
        return self.retries + self.permanent_failures

    @property
    def disabled(self) -> bool:
        """Disabled for good (a permanent error, a dead sink process): takes no more events."""
        return self.state == DISABLED

    @property
    def healthy(self) -> bool:
        """Taking events: up, or back and delivering its backlog."""
        return self.state in (UP, DRAINING)

    @property
    def delivery_state(self) -> str | None:
        """The delivery's state; None for an event plugin that never ran (skipped)."""
        return None if self.plugin is not None and not self.plugin.ran else self.state

    def with_tallies(self, tallies: dict[str, int]) -> SinkHealth:
        """The sink's own counters (SQL: ``row_by_row_batches``, ``rows_rejected``) added."""
        return replace(
            self,
            row_by_row_batches=int(tallies.get("row_by_row_batches", 0)),
            rows_rejected=int(tallies.get("rows_rejected", 0)),
        )


def merge_health(name: str, snaps: Sequence[SinkHealth]) -> SinkHealth:
    """One destination's health from its deliveries: the worst state (and since when), the
    backlog summed, the oldest undelivered event, the workflows not delivering."""
    worst = max(snaps, key=lambda s: _SEVERITY.get(s.state, 0))
    state = worst.state
    since = [s.since for s in snaps if s.state == state and s.since]
    return SinkHealth(
        name=name,
        state=state,
        since=min(since) if since else None,
        last_error=worst.last_error if state != UP else None,
        workflows=len(snaps),
        workflows_not_up=tuple(
            sorted(str(s.workflow) for s in snaps if s.state != UP and s.workflow)
        ),
        spooled=sum(s.spooled for s in snaps),
        spooled_bytes=sum(s.spooled_bytes for s in snaps),
        oldest=round(max(s.oldest for s in snaps), 3),  # as the other durations: to the ms
        queued=sum(s.queued for s in snaps),
        retries=sum(s.retries for s in snaps),
        permanent_failures=sum(s.permanent_failures for s in snaps),
        events_written=sum(s.events_written for s in snaps),
        dropped=sum(s.dropped for s in snaps),
        row_by_row_batches=sum(s.row_by_row_batches for s in snaps),
        rows_rejected=sum(s.rows_rejected for s in snaps),
    )
