"""Who is on the other end of the Unix socket, and what that user may ask the service to do.

The service runs as root or a service user and writes where the client asks, so
the socket is open to every local user and the check is here: the kernel tells
the peer's uid (``SO_PEERCRED``; it cannot be forged), and a user may attach
only a workflow whose submit directory they own, with outputs only in
directories they own (their database file, event files, ``-o`` directory).
Root may attach anything.  Server URLs (PostgreSQL, MySQL, AMQP) carry their own
credentials and are not file-system writes, so they are allowed.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from monitord.daemon.config import MonitorConfig

_UCRED = struct.Struct("3i")


@dataclass(frozen=True)
class Peer:
    pid: int
    uid: int
    gid: int


def peer_credentials(sock: socket.socket) -> Peer:
    """The connected peer's pid/uid/gid from the kernel (Linux ``SO_PEERCRED``)."""
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, gid = _UCRED.unpack(data)
    return Peer(pid, uid, gid)


class NotAllowed(Exception):
    """The peer may not do this; the message says why (it is sent back to the client)."""


def owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def check_owned_dir(uid: int, directory: str, what: str) -> None:
    """``directory`` (resolved) must exist and belong to ``uid``."""
    real = os.path.realpath(directory)
    found = owner(real)
    if found is None:
        raise NotAllowed(f"{what}: {directory}: no such directory")
    if found != uid:
        raise NotAllowed(f"{what}: {directory} is not owned by uid {uid}")


def check_owned_target(uid: int, path: str, what: str) -> None:
    """A file the service will write: it must be the user's, or be created in their directory."""
    real = os.path.realpath(path)
    found = owner(real)
    if found is not None:
        if found != uid:
            raise NotAllowed(f"{what}: {path} is not owned by uid {uid}")
        return
    check_owned_dir(uid, os.path.dirname(real) or ".", what)


def local_target(dest: str, run_dir: str) -> str | None:
    """The local file a destination writes to, or None for a server URL (or stdout)."""
    if dest == "-":
        return None
    head, sep, _ = dest.partition("://")
    if not sep and not dest.startswith("jdbc:"):
        return dest if os.path.isabs(dest) else os.path.join(run_dir, dest)
    scheme = head.split("+", 1)[0].lower().removeprefix("jdbc:")
    if dest.startswith("jdbc:sqlite:") and not dest.startswith("jdbc:sqlite://"):
        return dest[len("jdbc:sqlite:") :]
    if scheme in ("sqlite", "file"):
        path = unquote(urlsplit(dest.removeprefix("jdbc:")).path)
        if scheme == "sqlite" and dest.removeprefix("jdbc:").startswith("sqlite:///"):
            path = dest.removeprefix("jdbc:")[len("sqlite:///") :].split("?", 1)[0]
        return path if os.path.isabs(path) else os.path.join(run_dir, path)
    return None


def check_attach(uid: int, config: MonitorConfig, default_db: str | None) -> None:
    """Raise :class:`NotAllowed` unless ``uid`` may have the service follow ``config``.

    ``default_db`` is the database URL the workflow gets when no destination is
    given (it may point outside the run dir: the braindump's submit_dir).
    """
    if uid == 0:
        return
    dagman_out = os.path.abspath(config.dagman_out)
    run_dir = os.path.dirname(dagman_out)
    check_owned_dir(uid, run_dir, "submit directory")
    if config.output_dir:
        out = config.output_dir
        out = out if os.path.isabs(out) else os.path.join(run_dir, out)
        if os.path.exists(out):
            check_owned_dir(uid, out, "output directory")
        else:
            check_owned_dir(uid, os.path.dirname(os.path.normpath(out)), "output directory")
    if config.jobstate_name and os.path.isabs(config.jobstate_name):
        check_owned_target(uid, config.jobstate_name, "jobstate file")
    if config.events:
        for dest in config.dests or [None]:
            url = dest or default_db
            if url is None:
                continue
            target = local_target(url, run_dir)
            if target is not None:
                check_owned_target(uid, target, "event destination")
            elif url == "-":
                raise NotAllowed("event destination: stdout is the service's, not yours")


def dashboard_allowed(uid: int, config: MonitorConfig) -> bool:
    """The dashboard DB is written only if it already exists and is the user's (or for root).

    The service must not create files in a user's home that the user then cannot write.
    """
    if not config.dashboard or not config.dashboard_url:
        return False
    if uid == 0:
        return True
    target = local_target(config.dashboard_url, "/")
    return target is not None and owner(os.path.realpath(target)) == uid
