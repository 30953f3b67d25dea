"""Keep a terminal readable while a progress bar is drawn: everything written to stderr
(this process's log lines, a process-isolated plugin's, a library's) is caught at the file-descriptor
level and printed above the bar instead of into its line.

Command-line layer.  Child processes inherit file descriptor 2, so redirecting
``sys.stderr`` alone would not reach them; :func:`stderr_lines` points descriptor 2 at a pipe
for the duration and hands each complete line to a callback on a reader thread.  The bar itself
is drawn on a duplicate of the original terminal descriptor (:func:`terminal_file`).
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

POLL = 0.05  # seconds between two looks at the pipe once the caller is done


def terminal_file(stream: TextIO) -> TextIO:
    """A new file object on a duplicate of ``stream``'s descriptor (kept while fd 2 moves)."""
    return os.fdopen(os.dup(stream.fileno()), "w", encoding="utf-8", errors="replace")


@contextmanager
def stderr_lines(emit: Callable[[str], None]) -> Iterator[None]:
    """While inside, what anyone writes to file descriptor 2 reaches ``emit`` line by line."""
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    done = threading.Event()

    def pump() -> None:
        pending = b""
        while True:
            ready, _, _ = select.select([read_end], [], [], POLL)
            if not ready:
                if done.is_set():
                    break
                continue
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                emit(line.decode("utf-8", "replace"))
        if pending:
            emit(pending.decode("utf-8", "replace"))

    reader = threading.Thread(target=pump, name="stderr-lines", daemon=True)
    reader.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # a process that inherited the pipe (forkserver) may keep it open:
        os.close(saved)  # the reader stops on the first quiet poll instead of waiting for EOF
        done.set()
        reader.join()
        os.close(read_end)
