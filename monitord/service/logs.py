"""The service's logging: structlog, JSON lines (journald-friendly) or console, with context.

Each workflow's task binds ``wf_uuid`` (structlog contextvars); worker threads
and sink lanes inherit or re-bind it, so every line about a workflow names it.
"""

from __future__ import annotations

import logging
import sys

import structlog

from monitord.system.logs import mask_passwords

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_service_logging(fmt: str = "json", level: str = "info") -> None:
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            mask_passwords,  # (formats exc_info itself, masked)
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
