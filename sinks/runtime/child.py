"""A child Python process on one pipe: how a sink's work runs outside the daemon's process.

What varies is handed in: the function the child serves the pipe with (by name, e.g.
``sinks.runtime.process_sink:serve_sink``), told as it starts, and its payload (pickled), told
when the daemon has it; :func:`prestart` starts a child before its payload exists, so that its
interpreter and modules load while the daemon loads its own.  The child is a fresh
interpreter (``python -m sinks.runtime.child FD``, through ``subprocess``): no fork of the
threaded daemon, and none of multiprocessing's helper processes (forkserver, resource
tracker), so it is the one process it adds.  It runs in a session of its own and ignores
SIGINT: a Ctrl-C or SIGTERM sent to the daemon's process group never cuts its transaction
short; the daemon ends it by closing the pipe, and so does the kernel when the daemon dies,
even of SIGKILL (a child in the middle of a batch finishes it, then finds the pipe closed).
Its process title names what it does, with any password masked.

A prestarted child may be asked to run at a lower priority (``nice``): a replay's helpers on
a quiet machine yield to the daemon, the replay's critical path (monitord/daemon/prestart.py).

Like the daemon (:mod:`monitord.cli.startup`), the child loads its payload's modules
(SQLAlchemy for the SQL sink) with the cyclic collector paused, then freezes that start-up
state out of the collector's generations before it serves.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from monitord.system.collector import Paused
from monitord.system.exiting import exit_at_once

START_TIMEOUT = 60.0  # seconds a child may take to start Python and answer its payload


class ChildGone(Exception):
    """The child died, or never answered: what it was doing is undone or unknown."""


class Child:
    """The daemon's side: start the child, send it messages, wait for its answers."""

    def __init__(
        self, serve: str, payload: Any, *, title: str, level: int, teardown: bool = True
    ) -> None:
        self.serve = serve
        self.payload = payload
        self.title = title
        self.level = level
        # False: the child exits without the interpreter's teardown (no atexit hooks) once
        # ``serve`` returns: for the project's own helpers, whose work is done by then (a
        # plugin's child keeps its teardown: its code may count on an atexit hook)
        self.teardown = teardown
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def first(self) -> tuple[Any, str, int, bool]:
        """The child's first message after what it serves (:func:`prestart`'s ``first``)."""
        return self.payload, self.title, self.level, self.teardown

    def start(self, timeout: float = START_TIMEOUT) -> Any:
        """Hand the child its payload (a child :func:`prestart` started for ``serve``, else a
        new one); its first answer (ChildGone if none)."""
        first = self.first
        spare = _spares.take(self.serve, first)
        told = spare is not None and spare[2] == first  # prestarted with this payload
        self._proc, self._conn = spare[:2] if spare is not None else _spawn(self.serve)
        try:
            if not told:
                self._conn.send(first)
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

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether a message of the child's (sent ahead, unasked) waits in the pipe, or comes
        within ``timeout`` seconds; True too when the pipe is closed (``call`` then says so)."""
        conn = self._conn
        if conn is None:
            return False
        try:
            return conn.poll(timeout)
        except (EOFError, OSError):
            return True

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


def _spawn(
    serve: str, preload: tuple[str, ...] = (), nice: int = 0
) -> tuple[subprocess.Popen[bytes], Connection]:
    """A new child, told at once what it serves (and what else to load, and its ``nice``
    increment) so that it loads those modules while the daemon prepares its payload."""
    ours, theirs = socket.socketpair()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sinks.runtime.child", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        theirs.close()
    conn = Connection(ours.detach())
    try:  # the daemon's sys.path first: a plugin installed beside it, a test's modules
        conn.send((sys.path, serve, preload, nice))
    except OSError:
        pass  # gone already: the payload's send says so
    return proc, conn


#: a prestarted child: its process, its pipe, and the payload message it was told (or None)
Spare = tuple[subprocess.Popen[bytes], Connection, Any]


class _Spares:
    """Children started ahead of their payload (:func:`prestart`), by what they serve."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: dict[str, list[Spare]] = {}

    def add(self, serve: str, preload: tuple[str, ...], nice: int, first: Any) -> None:
        proc, conn = _spawn(serve, preload, nice)
        if first is not None:
            try:
                conn.send(first)
            except OSError:
                pass  # gone already: taken, it is found dead and replaced
        with self._lock:
            self._ready.setdefault(serve, []).append((proc, conn, first))

    def take(self, serve: str, first: Any) -> Spare | None:
        """A live child for ``serve`` told nothing yet or told ``first``; one told another
        payload is ended (its work is of no use)."""
        with self._lock:
            ready = self._ready.get(serve, [])
            while ready:
                proc, conn, told = ready.pop(0)
                if proc.poll() is None and (told is None or told == first):
                    return proc, conn, told
                conn.close()  # died before its payload, or told another: a new one instead
                if proc.returncode is None:
                    proc.kill()
                    proc.wait()
            return None

    def close(self) -> None:
        with self._lock:
            left = [child for ready in self._ready.values() for child in ready]
            self._ready.clear()
        for proc, conn, told in left:
            conn.close()  # it ends as it sees the pipe closed
            if told is not None:
                proc.kill()  # at work on its payload, which no one will take: at once
            proc.wait()


_spares = _Spares()


def prestart(
    serve: str, preload: tuple[str, ...] = (), nice: int = 0, *, first: Any = None
) -> None:
    """Start a child for ``serve`` now: the next :class:`Child` for it takes this one, whose
    interpreter has meanwhile started and loaded ``serve``'s module and ``preload`` (a
    replay's helpers load theirs while the daemon loads its own: bench/README.md, "Issue 30,
    eleventh session: small30h"), at ``nice``).  ``first``, when the payload is known already
    (``(payload, title, level, teardown)``, as :class:`Child` sends it), is sent now: the child
    starts serving as soon as its modules are loaded, and a :class:`Child` with the same
    payload takes it without sending it again (one with another payload starts a new child).
    :func:`close_spares` ends those never taken (one told its payload is killed: it may be at
    work on it, and none of its work is kept)."""
    _spares.add(serve, preload, nice, first)


def close_spares() -> None:
    """End the children :func:`prestart` started that no :class:`Child` took."""
    _spares.close()


def _lower_priority(nice: int) -> None:
    """Add ``nice`` to this process's niceness and to its autogroup's: with autogroups (Linux's
    default on desktops and many servers) a session's processes share one weight, so the
    niceness of the child, alone in its session, weighs only against itself (``man 7 sched``)."""
    try:
        os.nice(nice)
    except OSError:  # refused (a sandbox's profile): the child runs at the daemon's priority
        return
    try:
        with open("/proc/self/autogroup") as fh:  # "/autogroup-123 nice 0"
            now = int(fh.read().split()[-1])
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(min(19, now + nice)))
    except (OSError, ValueError, IndexError):
        pass  # no autogroups here: the process's niceness is what counts


def _serve_function(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def main(argv: list[str]) -> tuple[int, bool]:
    """The child: load what it serves, take the payload, serve the pipe until it closes; its
    status, and whether the interpreter's teardown is wanted."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon ends us, after the batch in hand
    conn = Connection(int(argv[1]))
    with Paused():  # the payload's modules: no garbage, no collection (as the daemon's)
        try:
            sys.path[:], serve, preload, nice = conn.recv()
            if nice:
                _lower_priority(nice)
            for module in preload:
                importlib.import_module(module)
            function = _serve_function(serve)
            payload, title, level, teardown = conn.recv()
        except (EOFError, OSError):
            return 0, True
        from setproctitle import setproctitle

        from monitord.system import loglevel
        from monitord.system.logs import configure_logging
        from monitord.system.secrets import mask_url_passwords

        setproctitle(mask_url_passwords(title))
        configure_logging(0)
        loglevel.set_level(level)
    gc.freeze()  # the imports above and the payload's live as long as the child
    try:
        function(conn, payload)
    except (EOFError, OSError):
        pass  # the daemon closed the pipe, or died: so do we
    return 0, teardown


if __name__ == "__main__":
    status, teardown = main(sys.argv)
    if not teardown and threading.active_count() == 1:  # its work done, no thread left
        exit_at_once(status)  # the daemon waits for this exit (``Child.close``)
    sys.exit(status)
