"""Console logging for one process: the daemon, the service, a sink's worker process.

The threshold lives in :mod:`monitord.system.loglevel` and every logger reads it per call,
so caching the loggers (fast) does not freeze the level (SIGUSR1/2 move it later).
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from typing import Any, TextIO, cast

import structlog

from monitord.system import loglevel
from monitord.system.secrets import mask_url_passwords, masked_traceback

# Cached loggers keep the processors of their first use; the test suite turns this off so that
# ``structlog.testing.capture_logs`` still reaches loggers a command run in-process cached.
CACHE_LOGGERS = True


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is logged (the progress display redirects it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_PLAIN = frozenset({int, float, bool, type(None)})  # values that cannot hold a URL


def mask_passwords(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Processor: every URL password in a line masked, whichever site logged it (a driver's,
    a broker's or a plugin's exception may quote a URL); ``exc_info`` becomes the masked
    traceback text (``exception``), which both renderers print as it is."""
    exc_info = event_dict.pop("exc_info", None)
    if exc_info:
        exc = sys.exc_info()[1] if exc_info is True else exc_info
        if isinstance(exc, tuple):
            exc = exc[1]
        if isinstance(exc, BaseException):
            event_dict["exception"] = masked_traceback(exc)
    for key, value in event_dict.items():
        kind = type(value)
        if kind in _PLAIN:
            continue
        text = value if kind is str else repr(value)  # an exception, a list of URLs
        if "://" in text and "@" in text:
            masked = mask_url_passwords(text)
            if masked != text:  # (a value that holds no password keeps its type)
                event_dict[key] = masked
    return event_dict


def configure_logging(verbosity: int) -> None:
    """Console logging at INFO (-v DEBUG, -vv TRACE); the level can change later (SIGUSR1/2)."""
    loglevel.set_level(loglevel.verbosity_level(verbosity))
    structlog.configure(
        processors=[
            loglevel.add_level,
            structlog.processors.TimeStamper(fmt="iso"),
            mask_passwords,
            # exceptions arrive as masked text (mask_passwords); rich is never loaded for them
            structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            ),
        ],
        wrapper_class=loglevel.GatedLogger,
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _CurrentStderr())),
        cache_logger_on_first_use=CACHE_LOGGERS,
    )
