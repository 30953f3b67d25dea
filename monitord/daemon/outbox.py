"""The read-ahead worker's messages, pickled as it makes them and sent one per credit.

The parser asks for one more message with each ``next``; the worker may have :data:`WINDOW`
in flight (the pipe holds about that many).  While the parser opens the workflow (a 20,000-job
replay: its static.bp, .dag and braindump, ~0.75 s of CPU before the first dagman.out chunk)
it asks for none, and a worker that only sent would sit idle on a free core, then be the one
the parser waits for from then on (it is the busier of the two).  So the worker goes on
making messages and holds them here, pickled (the bytes ``Connection.send`` would write), up
to :data:`BANK` bytes: the start-up's idle core does work the replay needs anyway, and the
parser finds them ready (bench/README.md, "Issue 30, thirteenth session: startup30j").  What
the parser receives, and in which order, is the same; only when.  Memory: at most BANK bytes,
whatever the job count.
"""

from __future__ import annotations

from collections import deque
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

WINDOW = 4  # messages in flight: the parser's credits at first (the pipe holds about that)
BANK = 12 << 20  # bytes of pickled messages held here at most (a 20,000-job replay: ~230)


class Outbox:
    """Messages sent in order, one per credit (a message from the parser), WINDOW at first;
    while no credit is left they are held, up to BANK bytes, then ``put`` waits for one."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.credits = WINDOW
        self.held: deque[bytes] = deque()
        self.size = 0  # bytes held

    def put(self, message: Any) -> None:
        """Send ``message`` (or hold it); EOFError/OSError when the parser is gone."""
        data = bytes(ForkingPickler.dumps(message))
        self.held.append(data)
        self.size += len(data)
        self._send(keep=BANK)

    def flush(self) -> None:
        """Send every held message, waiting for the credits."""
        self._send(keep=0)

    def _send(self, keep: int) -> None:
        """Send while credits last, taking those already in the pipe; wait for more while
        over ``keep`` bytes are held."""
        conn, held = self.conn, self.held
        while held:
            if not self.credits:
                if self.size <= keep and not conn.poll():
                    return
                conn.recv()
                self.credits += 1
                continue
            data = held.popleft()
            self.size -= len(data)
            conn.send_bytes(data)
            self.credits -= 1
