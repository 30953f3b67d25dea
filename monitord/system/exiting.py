"""Ending a process without the interpreter's teardown, once everything it wrote is closed."""

from __future__ import annotations

import os
import sys


def exit_at_once(status: int) -> None:
    """End the process now, skipping the interpreter's teardown: freeing a large replay's
    parser state object by object took about a second on a loaded machine, after the sinks
    had closed and the line was printed (every output is closed or flushed by then)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: nothing to keep
            pass
    os._exit(status)
