"""Does this process's local time zone read a recorded wall-clock time as its writer did?

DAGMan writes local times without an offset, so a replay in another zone shifts every time
by the difference, silently.  The planner recorded its offset (braindump ``timestamp``,
``20230303T222333-0800``); :func:`zone_mismatch` compares it with the local offset at that
moment and names a ``TZ`` that would read the times as the planner wrote them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

# Tried first, in this order, before every zone of the system's database: a name people know.
PREFERRED = (
    "UTC",
    "America/Los_Angeles",
    "America/Denver",
    "America/Phoenix",
    "America/Chicago",
    "America/New_York",
    "America/Halifax",
    "America/Sao_Paulo",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Athens",
    "Europe/Moscow",
    "Asia/Dubai",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
    "Pacific/Honolulu",
    "America/Anchorage",
)


@dataclass(frozen=True)
class ZoneMismatch:
    """The recorded and the local offset (seconds east of UTC) at one moment, and the fix."""

    recorded: int
    local: int
    zone: str  # a TZ value with the recorded offset at that moment

    @property
    def fix(self) -> str:
        return f"TZ={self.zone}"


def local_offset(epoch: float) -> int:
    """Seconds east of UTC of this process's local time at ``epoch`` (``TZ`` as set now)."""
    return time.localtime(epoch).tm_gmtoff


def format_offset(seconds: int) -> str:
    """``UTC-08:00``."""
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


def zone_mismatch(epoch: float, recorded: int, *, adjust: float = 0.0) -> ZoneMismatch | None:
    """None when local time at ``epoch`` (plus ``adjust``, the daemon's ``-a``) reads times as a
    writer at offset ``recorded`` did; else the two offsets and a zone to use instead."""
    local = local_offset(epoch)
    if recorded - local + adjust == 0:
        return None
    return ZoneMismatch(recorded, local, zone_with_offset(epoch, recorded))


def zone_with_offset(epoch: float, offset: int) -> str:
    """A zone name whose offset at ``epoch`` is ``offset``; else a POSIX TZ with that offset."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

    moment = datetime.fromtimestamp(epoch, UTC)

    def matches(name: str) -> bool:
        try:
            delta = moment.astimezone(ZoneInfo(name)).utcoffset()
        except (ZoneInfoNotFoundError, ValueError, OSError):
            return False
        return delta is not None and int(delta.total_seconds()) == offset

    for name in PREFERRED:
        if matches(name):
            return name
    try:
        names = sorted(n for n in available_timezones() if "/" in n and not n.startswith("Etc/"))
    except OSError:
        names = []
    for name in names:
        if matches(name):
            return name
    return posix_tz(offset)


def posix_tz(offset: int) -> str:
    """A POSIX ``TZ`` value with a fixed offset: ``<-0800>8`` (POSIX counts west as positive)."""
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset) // 60, 60)
    west = "" if offset <= 0 else "-"
    clock = f"{hours}" + (f":{minutes:02d}" if minutes else "")
    return f"<{sign}{hours:02d}{minutes:02d}>{west}{clock}"
