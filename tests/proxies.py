"""One TCP proxy for the tests that do to a client what a server outage does, without stopping
the server (the broker, a database) every test and helper shares.

:class:`Proxy` listens on 127.0.0.1 (its ``port``) and pumps each connection both ways on two
threads of its own.  What it can do to its clients:

- :meth:`Proxy.cut`: drop every connection without a word (a server killed);
- ``down``: while true, hang up on each new connection at once (a server that went away);
- :meth:`Proxy.refuse` / :meth:`Proxy.restore`: stop listening (connections refused) and drop
  every connection, then listen again on the same port (the server back);
- :meth:`Proxy.force_close`: send each client ``last_words`` (a protocol's goodbye, e.g.
  AMQP's ``Connection.Close``), drop what it sends then, and hang up once it did.  With
  ``frames`` the server-to-client direction is forwarded whole frames at a time, so the
  goodbye never lands inside another frame.
"""

from __future__ import annotations

import socket
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

CLOSE_OK_WAIT = 60.0  # seconds a forced close waits for the client to hang up

# How many leading bytes of a buffer are whole frames (everything, for a byte stream).
Frames = Callable[[bytes], int]


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _all(buffer: bytes) -> int:
    return len(buffer)


def hang_up(*sockets: socket.socket) -> None:
    """Shut down (waking a thread blocked on it) and close each socket."""
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()


@dataclass
class _Link:
    """One client's connection through the proxy."""

    client: socket.socket
    upstream: socket.socket
    send: threading.Lock = field(default_factory=threading.Lock)  # whole frames to the client
    closing: bool = False  # force_close said goodbye: what the client sends is dropped
    gone: threading.Event = field(default_factory=threading.Event)  # the client hung up


class Proxy:
    """A TCP proxy from 127.0.0.1:``port`` to ``host:port`` (see the module's docstring)."""

    down = False

    def __init__(
        self, host: str, port: int, *, frames: Frames = _all, last_words: bytes = b""
    ) -> None:
        self.target = (host, port)
        self.frames = frames
        self.last_words = last_words
        self.accepted = 0
        self._links: list[_Link] = []
        self._lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.server.getsockname()[1])
        self._listen(self.server)

    def url(self, base: str) -> str:
        """``base`` (a URL of the server) through this proxy, its user and password kept."""
        parts = urllib.parse.urlsplit(base)
        netloc = parts.netloc.rsplit("@", 1)
        netloc[-1] = f"127.0.0.1:{self.port}"
        return parts._replace(netloc="@".join(netloc)).geturl()

    def _listen(self, server: socket.socket) -> None:
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # refused or closed
            if self.down:
                client.close()
                continue
            try:
                link = _Link(client, socket.create_connection(self.target))
            except OSError:
                hang_up(client)  # the server itself is unreachable
                continue
            with self._lock:
                self._links.append(link)
                self.accepted += 1
            threading.Thread(target=self._up, args=(link,), daemon=True).start()
            threading.Thread(target=self._down, args=(link,), daemon=True).start()

    def _up(self, link: _Link) -> None:
        try:
            while data := link.client.recv(65536):
                if link.closing:
                    continue
                try:
                    link.upstream.sendall(data)
                except OSError:
                    if not link.closing:  # (closing: the upstream went under the send)
                        raise
        except OSError:
            pass
        link.gone.set()
        hang_up(link.client, link.upstream)

    def _down(self, link: _Link) -> None:
        buffer = b""
        try:
            while data := link.upstream.recv(65536):
                buffer += data
                whole = self.frames(buffer)
                with link.send:
                    if link.closing:
                        return
                    link.client.sendall(buffer[:whole])
                buffer = buffer[whole:]
        except OSError:
            pass
        if not link.closing:
            hang_up(link.client, link.upstream)

    def _take_links(self) -> list[_Link]:
        with self._lock:
            links, self._links = self._links, []
        return links

    def cut(self) -> int:
        """Every connection dropped without a word; returns how many."""
        links = self._take_links()
        for link in links:
            hang_up(link.client, link.upstream)
        return len(links)

    def force_close(self) -> int:
        """Every client gets ``last_words`` and is dropped; returns how many."""
        links = self._take_links()
        for link in links:
            with link.send:
                link.closing = True
                try:
                    link.client.sendall(self.last_words)
                except OSError:
                    pass
            hang_up(link.upstream)
        for link in links:
            # (closed before the client read the goodbye, the socket would be reset and the
            # goodbye lost with what it had not read: a busy client takes its time)
            link.gone.wait(CLOSE_OK_WAIT)
            hang_up(link.client)
        return len(links)

    def refuse(self) -> None:
        """Stop listening (new connections refused) and drop every connection."""
        hang_up(self.server)  # (shut down: the accept loop wakes and ends)
        self.cut()

    def restore(self) -> None:
        """Listen again, on the same port, after :meth:`refuse`."""
        self.server = socket.create_server(("127.0.0.1", self.port))
        self._listen(self.server)

    def close(self) -> None:
        hang_up(self.server)
        self.cut()
