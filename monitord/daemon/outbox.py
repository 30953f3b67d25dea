"""The read-ahead worker's messages, pickled as it makes them and sent one per credit.

The parser asks for one more message with each ``next``; the worker may have :data:`WINDOW`
in flight (the pipe holds about that many).  While the parser opens the workflow (a 20,000-job
replay: its static.bp, .dag and braindump, ~0.75 s of CPU before the first dagman.out chunk;
a 100,000-job one: five times that) it asks for none, and a worker that only sent would sit
idle on a free core, then be the one the parser waits for from then on (it is the busier of
the two).  So the worker goes on making messages and holds them, pickled (the bytes
``Connection.send`` would write): up to :data:`BANK` bytes in memory, the rest in an unnamed
temporary file (:class:`Spill`, up to :data:`SPILL` bytes), so the open's idle core does work
the replay needs anyway however long the open is, and the parser finds it ready
(bench/README.md, "Issue 30, thirteenth session: startup30j" and "fourteenth session:
scale30l").  What the parser receives, and in which order, is the same; only when.  Memory:
at most BANK bytes, whatever the job count.  Disk: the file's length (what is held and what was
already read back: it is emptied only when all were read) stays within SPILL; a file at its
bound is read back to empty before more is written.  On a tmpfs ``TMPDIR`` those bytes are
memory too, so SPILL is kept near what a 100,000-job open makes ahead.  A file that cannot be
written only makes the worker wait for credits, as without it (said once as a warning); one
that cannot be read back ends the worker like a closed pipe (said as an error), and the
parser reads the job files itself.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
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


class Outbox:
    """Messages sent in order, one per credit (a message from the parser), WINDOW at first;
    while no credit is left they are held, up to BANK bytes in memory and SPILL in the
    spill file, then ``put`` waits for one."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.credits = WINDOW
        self.held: deque[bytes] = deque()  # the oldest held
        self.size = 0  # bytes held in memory
        self.spill = Spill()  # the newer ones, once memory holds BANK
        self.spilling = True  # False once the file failed: no more is written to it

    def put(self, message: Any) -> None:
        """Send ``message`` (or hold it); EOFError/OSError when the parser is gone."""
        data = bytes(ForkingPickler.dumps(message))
        spill = self.spill
        if spill.lengths and spill.length + len(data) > SPILL:
            self._send(flushing=False, drain=True)  # at its bound: read back, then emptied
        if self.spilling and (spill.lengths or self.size + len(data) > BANK):
            if spill.write(data):
                self._send(flushing=False)
                return
            self.spilling = False
            log.warning("read-ahead spill file unwritable; the worker waits for the parser")
            self._send(flushing=False, drain=True)  # those in the file go first
        self.held.append(data)
        self.size += len(data)
        self._send(flushing=False)

    def flush(self) -> None:
        """Send every held message, waiting for the credits."""
        self._send(flushing=True)

    def _send(self, *, flushing: bool, drain: bool = False) -> None:
        """Send while credits last, taking those already in the pipe; wait for more while
        flushing, while over a bound, or (``drain``) while the spill file holds any."""
        conn, held, spill = self.conn, self.held, self.spill
        while held or spill.lengths:
            if not self.credits:
                waits = flushing or self.size > BANK or spill.length > SPILL
                if not (waits or (drain and spill.lengths)) and not conn.poll():
                    return
                conn.recv()
                self.credits += 1
                continue
            if held:
                data = held.popleft()
                self.size -= len(data)
            else:
                data = self._read_back()
            conn.send_bytes(data)
            self.credits -= 1

    def _read_back(self) -> bytes:
        """The spill file's oldest message; a failure is said here (the worker then ends like
        a closed pipe, and the parser's own line would not say why)."""
        try:
            return self.spill.read()
        except OSError as exc:
            log.error(
                "read-ahead spill file unreadable; the parser reads the job files", error=str(exc)
            )
            raise
