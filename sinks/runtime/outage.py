"""The two log lines of a sink's outage: when it goes down, when it is back (how long, how many
events drained).  The service's lanes say them once per server (``DestinationReporter``).
``delivery`` is the :class:`~sinks.runtime.delivery.Delivery` concerned (not imported: it
imports this)."""

from __future__ import annotations

from typing import Any

import structlog

log = structlog.get_logger("sinks.runtime.delivery")


class OutageReporter:
    """The two log lines of an outage: when the sink goes down, when it is back (how long,
    how many events drained).  Called with the delivery's ``cond`` held."""

    def went_down(self, delivery: Any, error: str, never_opened: bool, retry_in: float) -> None:
        (log.error if never_opened else log.warning)(
            "cannot create events output, spooling its events until it is back"
            if never_opened
            else "sink down, spooling its events until it is back",
            sink=delivery.sink.name,
            error=error,
            retry_in=round(retry_in, 2),
            spool=delivery.spool.path if delivery.spool else None,
        )

    def came_back(
        self, delivery: Any, *, outage: float, drained: int, drain_seconds: float
    ) -> None:
        log.info(
            "sink is back",
            sink=delivery.sink.name,
            down_seconds=round(outage - drain_seconds, 1),
            drained_events=drained,
            drain_seconds=round(drain_seconds, 2),
        )

    def gone(self, delivery: Any) -> None:
        """The delivery ended (stop, disabled), whatever its state."""
