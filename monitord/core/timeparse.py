"""Timestamps of dagman.out lines and of ISO strings, to epoch seconds.

dagman.out times are local wall-clock time without a zone, so they go through
``time.mktime`` (the OS decides DST), exactly like the reference.  ``mktime``
is slow-ish and a replay converts hundreds of thousands of stamps, so conversions are
cached per local hour (within one hour the epoch is the hour's epoch plus the
minutes and seconds: DST changes happen on hour boundaries), and a line's usual
stamp (``MM/DD/YY HH:MM:SS`` leading it, or in braces ending a ULOG line) is
looked up by its text, once per second of the workflow.  Both caches belong to the
zone they were computed in: ``time.tzset`` (a test, a service changing TZ) empties them.
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import datetime
from functools import lru_cache

from monitord.core.bounded import make_room

# M/D[/YY] H:MM:SS anywhere in a line; the reference uses the last match.
_DAGMAN_TS = re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{1,2}))?\s+(\d{1,2}):(\d{2}):(\d{2})")
# ISO form at the start of a line: YYYY?MM?DD?HH?MM?SS[.frac](Z|+HH[:]MM)
_ISO_LINE = re.compile(
    r"^(\d{4})\D?(\d{2})\D?(\d{2})\D?(\d{2})\D?(\d{2})\D?(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})"
)


# A stamp text whose last regex match is itself, with every field two digits.
_STRICT = re.compile(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d")
_STAMP_CACHE_SIZE = 8192
# stamp text -> epoch (no adjust); hour -> epoch; the zone (time.tzname) they were made in.
_stamps: dict[str, float] = {}
_zone: list[object] = [None]


@lru_cache(maxsize=4096)
def _hour_epoch(year: int, month: int, day: int, hour: int) -> float:
    return time.mktime((year, month, day, hour, 0, 0, 0, 0, -1))


def _check_zone() -> None:
    """Empty the caches when the process's zone changed (``tzset`` makes a new tzname)."""
    if _zone[0] is not time.tzname:
        _hour_epoch.cache_clear()
        _stamps.clear()
        _zone[0] = time.tzname


def local_epoch(year: int, month: int, day: int, hour: int, minute: int, second: int) -> float:
    """Epoch of a local wall-clock time (DST decided by the OS, like mktime)."""
    _check_zone()
    return _hour_epoch(year, month, day, hour) + minute * 60 + second


def _usual_stamp(line: str) -> str | None:
    """The text of the line's last stamp when it is where DAGMan writes it: the braces
    ending a ULOG line, or the line's start with no ``/`` after it (so no later stamp)."""
    if line[-1:] == "}" and line[-19:-18] == "{":
        return line[-18:-1]
    if line.find("/", 17) < 0:
        return line[:17]
    return None


def _strict_epoch(key: str) -> float:
    """``MM/DD/YY HH:MM:SS`` (checked by _STRICT) to epoch."""
    month, day, yy = int(key[0:2]), int(key[3:5]), int(key[6:8])
    return local_epoch(yy + 2000, month, day, int(key[9:11]), int(key[12:14]), int(key[15:17]))


def dagman_timestamp(line: str, adjust: float = 0.0) -> float | None:
    """Epoch of the last ``M/D[/YY] H:MM:SS`` in the line, else of a leading ISO stamp."""
    key = _usual_stamp(line)
    if key is not None:
        if _zone[0] is not time.tzname:
            _check_zone()
        epoch = _stamps.get(key)
        if epoch is not None:
            return epoch + adjust
        if _STRICT.fullmatch(key):
            try:
                epoch = _strict_epoch(key)
            except (OverflowError, ValueError):
                return None
            make_room(_stamps, _STAMP_CACHE_SIZE)
            _stamps[key] = epoch
            return epoch + adjust
    matches = _DAGMAN_TS.findall(line)
    if matches:
        mon, day, yy, hh, mm, ss = matches[-1]
        year = int(yy) + 2000 if yy else time.localtime().tm_year
        try:
            return local_epoch(year, int(mon), int(day), int(hh), int(mm), int(ss)) + adjust
        except (OverflowError, ValueError):
            return None
    m = _ISO_LINE.match(line)
    if m:
        return iso_parts_epoch(m) + adjust
    return None


def iso_parts_epoch(m: re.Match[str]) -> float:
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = float(m.group(7)) if m.group(7) else 0.0
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - _offset_seconds(m.group(8)) + frac


def _offset_seconds(zone: str) -> int:
    if zone == "Z":
        return 0
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


_ISO_ANY = re.compile(
    r"^\s*(\d{4})-?(\d{2})-?(\d{2})[T ](\d{2}):?(\d{2}):?(\d{2})(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?\s*$"
)


# Kickstart's own form (``2023-02-04T18:25:35.393-08:00``): the hour and zone, then the rest.
_ISO_USUAL = re.compile(r"(\d{4}-\d\d-\d\dT\d\d):(\d\d):(\d\d)(\.\d+)?+(Z|[+-]\d\d:\d\d)", re.ASCII)
_ISO_HOUR_CACHE_SIZE = 4096
# "YYYY-MM-DDTHH" + zone -> epoch of that hour; a zone is explicit, so no tzset matters.
_iso_hours: dict[str, int] = {}


def iso_to_epoch(text: str) -> float | None:
    """ISO-8601 (``20230303T222333-0800``, ``2023-03-03T22:24:20.615-08:00``, ``...Z``).

    Without a zone the time is taken as local time.  Returns None when the text
    is not an ISO timestamp.  Kickstart's form takes its hour's epoch from a cache
    (every record's start is another text, but a workflow's jobs share their hours).
    """
    usual = _ISO_USUAL.fullmatch(text)
    if usual is not None:
        hour_zone = usual[1] + usual[5]
        base = _iso_hours.get(hour_zone)
        if base is None:
            base = _iso_hour_epoch(usual[1], usual[5])
            make_room(_iso_hours, _ISO_HOUR_CACHE_SIZE)
            _iso_hours[hour_zone] = base
        # the seconds an int, then the fraction (0.0 too: a float, as below), in that order
        return base + int(usual[2]) * 60 + int(usual[3]) + (float(usual[4]) if usual[4] else 0.0)
    return _iso_general(text)


def _iso_general(text: str) -> float | None:
    """Any ISO form :func:`iso_to_epoch` takes, by the one regex (what the fast form must equal)."""
    m = _ISO_ANY.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = float(m.group(7)) if m.group(7) else 0.0
    zone = m.group(8)
    if zone is None:
        return time.mktime((y, mo, d, h, mi, s, 0, 0, -1)) + frac
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - _offset_seconds(zone) + frac


def _iso_hour_epoch(hour: str, zone: str) -> int:
    """Epoch of ``YYYY-MM-DDTHH`` in ``zone``: what :func:`iso_to_epoch` computes at minute 0
    (``timegm`` is linear in the day, hour, minute and second; it checks the month)."""
    y, mo, d, h = int(hour[0:4]), int(hour[5:7]), int(hour[8:10]), int(hour[11:13])
    return calendar.timegm((y, mo, d, h, 0, 0, 0, 0, 0)) - _offset_seconds(zone)


def iso_local(epoch: float) -> str:
    """``YYYY-MM-DDTHH:MM:SS±HHMM`` in local time (monitord.started/done, notifications)."""
    return datetime.fromtimestamp(epoch).astimezone().strftime("%Y-%m-%dT%H:%M:%S%z")
