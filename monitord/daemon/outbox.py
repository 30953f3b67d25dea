"""The read-ahead worker's messages, pickled as it makes them and sent one per credit.

The parser asks for one more message with each ``next``; the worker may have :data:`WINDOW`
in flight (the pipe holds about that many).  While the parser opens the workflow (a 20,000-job
replay: its static.bp, .dag and braindump, ~0.75 s of CPU before the first dagman.out chunk;
a 100,000-job one: five times that) it asks for none, and a worker that only sent would sit
idle on a free core, then be the one the parser waits for from then on (it is the busier of
the two).  So the worker goes on making messages and holds them, pickled (the bytes
``Connection.send`` would write): up to :data:`BANK` bytes in memory, the rest in an unnamed
temporary file (:class:`Spill`, up to :data:`SPILL` bytes; :class:`Held`, one queue over the
two), so the open's idle core does work the replay needs anyway however long the open is,
and the parser finds it ready (bench/README.md, "Issue 30, thirteenth session: startup30j"
and "fourteenth session: scale30l").  What the parser receives, and in which order, is the
same; only when.  Memory: at most BANK bytes, whatever the job count.  Disk: the file's length
(what is held and what was already read back: it is emptied only when all were read) stays
within SPILL; a file at its bound is read back to empty before more is written.  On a tmpfs
``TMPDIR`` those bytes are memory too, so SPILL is kept near what a 100,000-job open makes
ahead.  A file that cannot be written only makes the worker wait for credits, as without it
(said once as a warning); one that cannot be read back ends the worker like a closed pipe (said
as an error), and the parser reads the job files itself.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

import structlog

WINDOW = 4  # messages in flight: the parser's credits at first (the pipe holds about that)
BANK = 12 << 20  # bytes of pickled messages held in memory at most (a 20,000-job replay: ~230)
#: the spill file's length at most: a 100,000-job replay's open makes ~60 MB ahead
SPILL = 96 << 20

log = structlog.get_logger(__name__)


class Spill:
    """Messages held in order in an unnamed temporary file (``TMPDIR``), written and read
    back with ``pwrite``/``pread``; emptied (truncated) whenever all were read back."""

    def __init__(self) -> None:
        self.file: Any = None  # opened at the first message
        self.lengths: deque[int] = deque()
        self.read_at = 0
        self.size = 0  # bytes held (written, not read back)

    @property
    def length(self) -> int:
        """The file's length: what was read back (until the file is emptied) and what is held."""
        return self.read_at + self.size

    def write(self, data: bytes) -> bool:
        """Hold ``data`` after those held; False when the file cannot take it (nothing held)."""
        try:
            if self.file is None:
                self.file = tempfile.TemporaryFile()
            fd, at, view, done = self.file.fileno(), self.length, memoryview(data), 0
            while done < len(data):  # pwrite may write less than asked
                done += os.pwrite(fd, view[done:], at + done)
        except OSError:
            return False
        self.lengths.append(len(data))
        self.size += len(data)
        return True

    def read(self) -> bytes:
        """The oldest message held (there is one), taken out."""
        n = self.lengths.popleft()
        fd, data = self.file.fileno(), b""
        while len(data) < n:
            part = os.pread(fd, n - len(data), self.read_at + len(data))
            if not part:
                raise OSError(f"the read-ahead spill file ended {n - len(data)} bytes early")
            data += part
        self.read_at += n
        self.size -= n
        if not self.lengths:  # all read back: the file's pages are freed
            self.read_at = 0
            os.ftruncate(fd, 0)
        return data


class Held:
    """The messages made and not yet sent, one ordered queue over two stores: memory first
    (up to BANK bytes), then, once memory is full, the spill file (up to SPILL), read back in
    order; every message in memory is older than any in the file."""

    def __init__(self) -> None:
        self.memory: deque[bytes] = deque()  # the oldest held
        self.size = 0  # bytes held in memory
        self.spill = Spill()  # the newer ones, once memory holds BANK
        self.spilling = True  # False once the file failed: no more is written to it

    def __bool__(self) -> bool:
        return bool(self.memory or self.spill.lengths)

    def add(self, data: bytes) -> bool:
        """Hold ``data`` after the others; False when the file must first be read back to
        empty: it is at its bound, or it refused ``data`` (then memory takes the rest)."""
        spill = self.spill
        if spill.lengths and (not self.spilling or spill.length + len(data) > SPILL):
            return False
        if self.spilling and (spill.lengths or self.size + len(data) > BANK):
            if spill.write(data):
                return True
            self.spilling = False
            log.warning("read-ahead spill file unwritable; the worker waits for the parser")
            return self.add(data)
        self.memory.append(data)
        self.size += len(data)
        return True

    def spilled(self) -> bool:
        """Whether the file holds any."""
        return bool(self.spill.lengths)

    def over(self) -> bool:
        """Whether either store is over its bound (a message larger than it, or memory
        alone once the file failed): the worker waits for credits until it is not."""
        return self.size > BANK or self.spill.length > SPILL

    def take(self) -> bytes:
        """The oldest message held (there is one); a failed read of the file is said here
        (the worker then ends like a closed pipe, and the parser's own line would not say
        why)."""
        if self.memory:
            data = self.memory.popleft()
            self.size -= len(data)
            return data
        try:
            return self.spill.read()
        except OSError as exc:
            log.error(
                "read-ahead spill file unreadable; the parser reads the job files", error=str(exc)
            )
            raise


class Outbox:
    """Messages sent in order, one per credit (a message from the parser), WINDOW at first;
    while no credit is left they are held (:class:`Held`), then ``put`` waits for one."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.credits = WINDOW
        self.held = Held()

    def put(self, message: Any) -> None:
        """Send ``message`` (or hold it); EOFError/OSError when the parser is gone."""
        data = bytes(ForkingPickler.dumps(message))
        held = self.held
        while not held.add(data):  # those in the file go first: it is read back to empty
            self._send(waits=held.spilled)
        self._send(waits=held.over)

    def flush(self) -> None:
        """Send every held message, waiting for the credits."""
        self._send(waits=self.held.__bool__)

    def _send(self, waits: Callable[[], bool]) -> None:
        """Send while credits last, taking those already in the pipe; without a credit, wait
        for one while ``waits()``."""
        conn, held = self.conn, self.held
        while held:
            if not self.credits:
                if not waits() and not conn.poll():
                    return
                conn.recv()
                self.credits += 1
                continue
            conn.send_bytes(held.take())
            self.credits -= 1
