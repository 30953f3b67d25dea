"""Time stamps in the shapes DAGMan, kickstart, PegasusLite and the planner print them.

Every stamp is local time of America/Los_Angeles in winter (a fixed -08:00): the
generator picks start dates in January/February, so no DST change falls inside a
run, and a replay with ``TZ=America/Los_Angeles`` gets back the epochs written here.
The caches matter: a big workflow formats the same second thousands of times.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

UTC_OFFSET = -8 * 3600  # PST
_TZ_SUFFIX = "-08:00"


@lru_cache(maxsize=8192)
def dagman_time(t: int) -> str:
    """``MM/DD/YY HH:MM:SS`` local time, as DAGMan prints it."""
    g = time.gmtime(t + UTC_OFFSET)
    return f"{g.tm_mon:02d}/{g.tm_mday:02d}/{g.tm_year % 100:02d} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"


@lru_cache(maxsize=8192)
def iso_s(t: int) -> str:
    """ISO 8601 to the second with the -08:00 offset (kickstart, braindump)."""
    g = time.gmtime(t + UTC_OFFSET)
    return (
        f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}T"
        f"{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}{_TZ_SUFFIX}"
    )


def iso_ms(t: float) -> str:
    """ISO 8601 to the millisecond (kickstart start stamps)."""
    sec = math.floor(t)
    ms = min(999, int(round((t - sec) * 1000)))
    return f"{iso_s(sec)[:19]}.{ms:03d}{_TZ_SUFFIX}"


@lru_cache(maxsize=8192)
def log_time(t: int) -> str:
    """``YYYY-MM-DD HH:MM:SS`` local time (PegasusLite stderr)."""
    return iso_s(t)[:19].replace("T", " ")


@lru_cache(maxsize=64)
def _utc_second(sec: int) -> str:
    g = time.gmtime(sec)
    return f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}T{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"


def planner_ts(t: float) -> str:
    """The planner's static.bp stamp: a monotonic clock rendered as a 1970 UTC date."""
    sec = int(t)
    return f"{_utc_second(sec)}.{int((t - sec) * 1_000_000):06d}Z"
