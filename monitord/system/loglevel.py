"""The daemon's log level, changeable while it runs (SIGUSR1 more verbose, SIGUSR2 less).

structlog's filtering loggers bake the level into the logger class and cache it
on first use, so a level change would never reach loggers already in use.  Here
every logger checks one module-level threshold on each call (a single integer
comparison for a filtered-out call), so :func:`more_verbose` / :func:`less_verbose`
take effect at once everywhere.  Steps follow the reference (doc §9.2):
ERROR → WARNING → INFO → DEBUG → TRACE.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog

TRACE = 9
STEPS = (logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG, TRACE)
NAMES = {
    logging.CRITICAL: "critical",
    logging.ERROR: "error",
    logging.WARNING: "warning",
    logging.INFO: "info",
    logging.DEBUG: "debug",
    TRACE: "trace",
}

_threshold = logging.INFO


def level() -> int:
    return _threshold


def level_name(value: int | None = None) -> str:
    return NAMES.get(_threshold if value is None else value, str(value)).upper()


def set_level(value: int) -> None:
    global _threshold
    _threshold = value


def _step(direction: int) -> int:
    index = min(range(len(STEPS)), key=lambda i: abs(STEPS[i] - _threshold))
    index = max(0, min(len(STEPS) - 1, index + direction))
    set_level(STEPS[index])
    return _threshold


def more_verbose() -> int:
    """SIGUSR1: one step towards TRACE; returns the new level."""
    return _step(+1)


def less_verbose() -> int:
    """SIGUSR2: one step towards ERROR; returns the new level."""
    return _step(-1)


def verbosity_level(verbosity: int) -> int:
    """``-v`` count to level: INFO by default, DEBUG with -v, TRACE with -vv (doc §9.1)."""
    return (logging.INFO, logging.DEBUG)[verbosity] if verbosity < 2 else TRACE


def add_level(
    _logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Processor: ``level`` from the method name (``trace`` arrives as ``debug`` + a marker)."""
    marked = event_dict.pop("_level", None)
    event_dict["level"] = marked or ("warning" if method_name == "warn" else method_name)
    return event_dict


class GatedLogger(structlog.BoundLoggerBase):
    """A bound logger whose methods consult the current threshold at every call."""

    def _at(
        self, value: int, method: str, event: str | None, args: tuple[Any, ...], kw: Any
    ) -> Any:
        if value < _threshold:
            return None
        if args:
            event = event % args if event is not None else None
        return self._proxy_to_logger(method, event, **kw)

    def trace(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(TRACE, "debug", event, args, {**kw, "_level": "trace"})

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(logging.DEBUG, "debug", event, args, kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(logging.INFO, "info", event, args, kw)

    msg = info

    def warning(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(logging.WARNING, "warning", event, args, kw)

    warn = warning

    def error(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(logging.ERROR, "error", event, args, kw)

    err = error

    def exception(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        kw.setdefault("exc_info", True)
        return self._at(logging.ERROR, "error", event, args, kw)

    def critical(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return self._at(logging.CRITICAL, "critical", event, args, kw)

    fatal = critical
