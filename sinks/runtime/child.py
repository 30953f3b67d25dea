"""A child Python process on one pipe: how a sink's work runs outside the daemon's process.

What varies is handed in: the function the child serves the pipe with (by name, e.g.
``sinks.runtime.process_sink:serve_sink``) and its payload (pickled).  The child is a fresh
interpreter (``python -m sinks.runtime.child FD``, through ``subprocess``): no fork of the
threaded daemon, and none of multiprocessing's helper processes (forkserver, resource
tracker), so it is the one process it adds.  It runs in a session of its own and ignores
SIGINT: a Ctrl-C or SIGTERM sent to the daemon's process group never cuts its transaction
short; the daemon ends it by closing the pipe, and so does the kernel when the daemon dies,
even of SIGKILL (a child in the middle of a batch finishes it, then finds the pipe closed).
Its process title names what it does, with any password masked.

Like the daemon (:mod:`monitord.cli.startup`), the child loads its payload's modules
(SQLAlchemy for the SQL sink) with the cyclic collector paused, then freezes that start-up
state out of the collector's generations before it serves.
"""

from __future__ import annotations

import gc
import importlib
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any

from monitord.system.collector import Paused

START_TIMEOUT = 60.0  # seconds a child may take to start Python and answer its payload


class ChildGone(Exception):
    """The child died, or never answered: what it was doing is undone or unknown."""


class Child:
    """The daemon's side: start the child, send it messages, wait for its answers."""

    def __init__(self, serve: str, payload: Any, *, title: str, level: int) -> None:
        self.serve = serve
        self.payload = payload
        self.title = title
        self.level = level
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self, timeout: float = START_TIMEOUT) -> Any:
        """Start the child and hand it its payload; its first answer (ChildGone if none)."""
        ours, theirs = socket.socketpair()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "sinks.runtime.child", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        try:
            self._conn.send(sys.path)  # first: the payload may need it to unpickle
            self._conn.send((self.serve, self.payload, self.title, self.level))
            if not self._conn.poll(timeout):
                raise ChildGone(f"no answer within {timeout:g} s")
            return self._conn.recv()
        except (EOFError, OSError, ChildGone) as exc:
            self.kill()
            raise ChildGone(self._why(exc)) from None

    def call(self, message: Any, timeout: float | None = None) -> Any:
        """Send ``message``, wait for the answer (holding no GIL while waiting); no answer
        within ``timeout`` (None: no limit) is a ChildGone too, and the child is killed."""
        conn = self._conn
        if conn is None:
            raise ChildGone("no child")
        try:
            conn.send(message)
            if timeout is not None and not conn.poll(timeout):
                raise ChildGone(f"no answer within {timeout:g} s")
            return conn.recv()
        except (EOFError, OSError, ChildGone) as exc:
            self.kill()
            raise ChildGone(self._why(exc)) from None

    @property
    def exit_code(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    def _why(self, exc: BaseException) -> str:
        code = self.exit_code
        what = f"exit code {code}" if code is not None else type(exc).__name__
        return f"child process {self.pid} gone ({what}{': ' + str(exc) if str(exc) else ''})"

    def close(self, timeout: float = 10.0) -> None:
        """Close the pipe (the child ends when it sees it), wait for it, kill it if it lingers."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def kill(self) -> None:
        """Kill it first (a thread blocked reading the pipe then sees the end), then close."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _serve_function(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def main(argv: list[str]) -> int:
    """The child: take the payload, serve the pipe until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon ends us, after the batch in hand
    conn = Connection(int(argv[1]))
    with Paused():  # the payload's modules: no garbage, no collection (as the daemon's)
        try:
            sys.path[:] = conn.recv()  # the daemon's (a plugin installed beside it, a test's)
            serve, payload, title, level = conn.recv()
        except (EOFError, OSError):
            return 0
        from setproctitle import setproctitle

        from monitord.system import loglevel
        from monitord.system.logs import configure_logging
        from monitord.system.secrets import mask_url_passwords

        setproctitle(mask_url_passwords(title))
        configure_logging(0)
        loglevel.set_level(level)
        function = _serve_function(serve)
    gc.freeze()  # the imports above and the payload's live as long as the child
    try:
        function(conn, payload)
    except (EOFError, OSError):
        pass  # the daemon closed the pipe, or died: so do we
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
