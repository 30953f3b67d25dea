"""What a replay leaves undelivered: a requested destination that does not hold every event.

A replay has no next run to deliver a spool: a destination refused, unreachable or only spooled
at exit makes it fail with one line per destination saying where the events are left and what
to do (rerun the replay: it starts its outputs over, so the stale spool is discarded then).
The dashboard database is not a requested destination (it has its own warnings).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from monitord.daemon.errors import MonitordError
from monitord.system.secrets import mask_url_passwords as masked
from sinks.runtime.capabilities import capabilities_of, destination_of, unread_of
from sinks.runtime.executor import Executor
from sinks.runtime.health import SinkHealth
from sinks.runtime.spool import SpoolSettings

if TYPE_CHECKING:
    from monitord.daemon.monitor import Monitor
    from monitord.daemon.outputs import LocalOutputs

REASON_MAX = 160  # characters of a driver's error kept in the line


def _reason(error: str | None, dest: str) -> str:
    """`` (the sink's last error)``, on one line, without repeating the destination."""
    if not error:
        return ""
    first = masked(str(error).strip().splitlines()[0])
    first = first.replace(f" ({dest})", "")
    if len(first) > REASON_MAX:
        first = first[: REASON_MAX - 1] + "…"
    return f" ({first})"


def undelivered(workers: Iterable[Executor], spool_settings: SpoolSettings | None) -> list[str]:
    """One phrase per requested destination that does not hold every event (none: all do)."""
    problems = []
    for worker in workers:
        sink = worker.sink
        if capabilities_of(sink).dashboard:
            continue
        try:
            health = worker.health()
        except Exception:  # noqa: BLE001 - the name and reason are niceties, the count matters
            health = SinkHealth(sink.name, destination=sink.name, spooled=worker.spooled)
        dest = health.destination or destination_of(sink)  # an executor that relays none
        left = health.left_behind or health.spooled
        if worker.failed:
            written = health.events_written
            why = _reason(health.last_error, dest)
            problems.append(
                f"{dest} failed{why} after {written} events, the rest were not written; "
                "rerun the replay once it works"
            )
        elif left:
            spool = health.spool_path
            if spool is None and spool_settings is not None:
                spool = spool_settings.path_for(sink)
            where = f" in the spool {spool}" if spool else " in memory, lost"
            how = "rerun the replay once it answers (it starts over)"
            why = _reason(health.last_error, dest)
            problems.append(f"{left} events not delivered to {dest}{why}: left{where}; {how}")
    return problems


def check_delivered(monitor: Monitor[LocalOutputs], *, strict: bool) -> None:
    """After a replay: the one error line if events are missing where they were asked for.

    ``strict`` (``monitord replay``): any requested destination without every event fails
    the replay.  Otherwise (the ``pegasus-monitord -r`` drop-in, whose reference exits 0 when a
    destination is refused): only when none of them holds every event.
    """
    problems = [
        f"{masked(error)}; nothing written there, rerun the replay once fixed"
        for error in monitor.destinations.errors
    ]
    problems += undelivered(monitor.outputs.workers, monitor.spool_settings)
    requested = monitor.destinations.requested
    if problems and (strict or len(problems) >= requested):
        raise MonitordError("; ".join(problems))


def closed_by_reader(workers: Iterable[Executor]) -> list[tuple[str, int]]:
    """(destination, events not written) of each output whose reader closed it (``-d - |
    head``): not a fault, but not every event is there; the command line ends with 141."""
    closed = ((w, unread_of(w.sink)) for w in workers)
    return [(destination_of(w.sink), unread) for w, unread in closed if unread is not None]
