"""systemd integration without a dependency: sd_notify(3) messages, the watchdog, LISTEN_FDS.

* :func:`sd_notify` sends ``READY=1``, ``STATUS=...``, ``STOPPING=1``, ``WATCHDOG=1`` ... to the
  datagram socket named by ``NOTIFY_SOCKET`` (a path, or ``@name`` in the abstract namespace).
  Outside systemd (no ``NOTIFY_SOCKET``) it does nothing and returns False.
* :func:`watchdog_loop` pings ``WATCHDOG=1`` every ``WATCHDOG_USEC``/2 while the event loop
  runs, so a service whose loop is stuck is restarted by systemd (``WatchdogSec=``).
* :func:`listen_fds` takes the sockets systemd passed (socket activation, ``LISTEN_FDS``).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

SD_LISTEN_FDS_START = 3


def _notify_address() -> str | None:
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return None
    if path[0] == "@":
        return "\0" + path[1:]
    if path[0] == "/":
        return path
    return None  # vsock: and other forms are not used for services on a submit host


def sd_notify(message: str) -> bool:
    """Send ``message`` to systemd; True when it was handed to the notify socket.

    Never blocks: the socket is non-blocking, and a full queue counts as a failure.
    """
    address = _notify_address()
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.setblocking(False)
            sock.connect(address)
            sent = sock.send(message.encode("utf-8"))
    except OSError as exc:
        log.debug("sd_notify failed", error=str(exc))
        return False
    return sent == len(message.encode("utf-8"))


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings (half of ``WATCHDOG_USEC``), None when not asked for."""
    usec = os.environ.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = os.environ.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # meant for another process (e.g. our parent)
    try:
        value = int(usec)
    except ValueError:
        return None
    if value <= 0:
        return None
    return value / 2_000_000


async def watchdog_loop(stop: asyncio.Event, healthy: Callable[[], bool] | None = None) -> None:
    """Ping ``WATCHDOG=1`` every ``WATCHDOG_USEC``/2 until ``stop`` is set.

    The pings come from the event loop itself, so they stop when the loop is blocked.
    ``healthy`` (optional) is asked before each ping; a False answer skips that ping, and
    systemd restarts the service once the watchdog time passes without one.
    Returns at once when systemd did not ask for a watchdog.
    """
    interval = watchdog_interval()
    if interval is None:
        return
    while not stop.is_set():
        if healthy is None or healthy():
            sd_notify("WATCHDOG=1")
        else:
            log.warning("watchdog ping withheld: service not healthy")
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
        except TimeoutError:
            pass


def listen_fds(unset_environment: bool = True) -> list[tuple[int, str]]:
    """Sockets passed by systemd socket activation, as ``(fd, name)`` pairs.

    Names come from ``FileDescriptorName=`` of the socket unit (``"unknown"`` when systemd gave
    none).  Empty when nothing was passed or the variables are meant for another process.
    The variables are removed from the environment (``unset_environment``), so child processes
    (notification scripts) do not believe the sockets are theirs; each fd is made close-on-exec.
    """
    try:
        pid = os.environ.get("LISTEN_PID")
        count_text = os.environ.get("LISTEN_FDS")
        names_text = os.environ.get("LISTEN_FDNAMES")
        if not pid or not count_text or pid != str(os.getpid()):
            return []
        try:
            count = int(count_text)
        except ValueError:
            return []
        names = names_text.split(":") if names_text else []
        result = []
        for i in range(max(count, 0)):
            fd = SD_LISTEN_FDS_START + i
            try:
                os.set_inheritable(fd, False)
            except OSError:
                continue  # not open: nothing to take
            result.append((fd, names[i] if i < len(names) and names[i] else "unknown"))
        return result
    finally:
        if unset_environment:
            for key in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
                os.environ.pop(key, None)
