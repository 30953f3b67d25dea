"""Console logging for one process: the daemon, the service, a sink's worker process.

The threshold lives in :mod:`monitord.system.loglevel` and every logger reads it per call,
so caching the loggers (fast) does not freeze the level (SIGUSR1/2 move it later).
"""

from __future__ import annotations

import sys
from typing import TextIO, cast

import structlog

from monitord.system import loglevel

# Cached loggers keep the processors of their first use; the test suite turns this off so that
# ``structlog.testing.capture_logs`` still reaches loggers a command run in-process cached.
CACHE_LOGGERS = True


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is logged (the progress display redirects it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(verbosity: int) -> None:
    """Console logging at INFO (-v DEBUG, -vv TRACE); the level can change later (SIGUSR1/2)."""
    loglevel.set_level(loglevel.verbosity_level(verbosity))
    structlog.configure(
        processors=[
            loglevel.add_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=loglevel.GatedLogger,
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _CurrentStderr())),
        cache_logger_on_first_use=CACHE_LOGGERS,
    )
