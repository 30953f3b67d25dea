"""How the daemon reads a job's files for the core (the workflow context's ``read_text``)."""

from __future__ import annotations

import os

_read = [0]  # job files opened by read_text, for -v (monitord/daemon/debuglog.py)


def files_read() -> int:
    """Job files read so far by this process (approximate while several threads read)."""
    return _read[0]


def read_text(path: str) -> str | None:
    """A job file's text, or None when it cannot be read (raw fd I/O: tens of thousands per replay)."""
    _read[0] += 1
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        parts = []
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            parts.append(block)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = b"".join(parts).decode("utf-8", errors="replace")
    if "\r" in text:  # universal newlines, as a text-mode open() would give
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
