"""The two log lines of a sink's outage: when it goes down, when it is back (how long, how many
events drained).  The service's lanes say them once per server (``DestinationReporter``).
``delivery`` is the :class:`~sinks.runtime.delivery.Delivery` concerned (not imported: it
imports this)."""

from __future__ import annotations

from typing import Any

import structlog

log = structlog.get_logger("sinks.runtime.delivery")

LOG_EVERY = 12  # a long outage logs one retry in this many ("still down", at info)


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

    def retrying(self, delivery: Any, error: str, attempt: int, retry_in: float | None) -> None:
        """A failure that is not the first of an outage (``retry_in`` None: in memory, no
        spool to wait in: every one is logged)."""
        if retry_in is None:
            log.warning(
                "sink error, retrying", sink=delivery.sink.name, error=error, attempt=attempt
            )
        elif attempt % LOG_EVERY == 0:
            log.info(
                "sink still down, retrying",
                sink=delivery.sink.name,
                error=error,
                attempt=attempt,
                retry_in=round(retry_in, 2),
                spooled=delivery.spooled,
            )

    def answers(self, delivery: Any, down_seconds: float, failed_attempts: int) -> None:
        """The first call that worked after failures (its spool is delivered next)."""
        log.debug(
            "sink answers again, delivering its spool",
            sink=delivery.sink.name,
            down_seconds=round(down_seconds, 1),
            failed_attempts=failed_attempts,
            spooled=delivery.spooled,
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
