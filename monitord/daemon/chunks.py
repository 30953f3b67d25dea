"""dagman.out in whole lines, as a replay reads it.

The parser thread (``Monitor._replay_file``) and the read-ahead worker
(``monitord/daemon/readahead.py``) cut the file alike, so that a chunk has the same lines,
the same line numbers and the same bytes in both: the worker's records of a chunk's lines
are the parser's only when they match (``ReadAhead.records``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

CHUNK = 1 << 18  # dagman.out read size in a replay (BATCH, the largest batch: plan_events.py)


def whole_lines(fh: BinaryIO) -> Iterator[bytes]:
    """``fh`` (binary) in pieces of whole lines, each read of :data:`CHUNK` bytes cut after
    its last newline (the newline dropped, the rest kept for the next piece); at the end
    what follows the last newline, if anything."""
    tail = b""
    while chunk := fh.read(CHUNK):
        data = tail + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            tail = data
            continue
        tail = data[cut + 1 :]
        yield data[:cut]
    if tail:
        yield tail
