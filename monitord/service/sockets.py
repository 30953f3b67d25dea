"""The service's sockets: the one systemd hands over (socket activation), and whether a
service already answers on a path; systemd's notification module when it is there."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any


def sdnotify_module() -> Any:
    try:
        from monitord.service import sdnotify
    except ImportError:
        return None
    return sdnotify


def activated_socket() -> socket.socket | None:
    """A Unix stream socket handed over by systemd socket activation, if any."""
    try:
        from monitord.service.sdnotify import listen_fds
    except ImportError:
        return None
    for fd, _name in listen_fds():
        sock = socket.socket(fileno=fd)
        if sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM:
            sock.setblocking(False)
            return sock
        sock.detach()
    return None


async def socket_answers(path: str) -> bool:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), 2)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return True
