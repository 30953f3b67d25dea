"""Files the service creates in a user's submit directory belong to that user.

The service may run as root and follow every user's workflows; left alone, its
outputs (the Stampede database, jobstate.log, monitord.* state files, event
files, the AMQP spool, the notifications log) would be root's, and the user
could not remove or rewrite them.  The service sets the workflow's *owner* (the
uid/gid of its submit directory) in a context variable for everything done on
the workflow's behalf (its task, the worker threads it starts, its sink lane
turns); the places that create files call :func:`chown_new` on them.  The
per-workflow daemon never sets an owner, so it behaves as before.

SQLite needs only its database file chowned: running as root, SQLite itself
gives every rollback journal, WAL and shm file the owner of the database file.

Chowning as root in a directory a user controls must never hand over a file
that is not ours, so :func:`chown_new` changes a file only if it is a regular
file or directory (never a symlink: opened with ``O_NOFOLLOW``), with a single
link, still owned by the service's euid, and in a directory the owner owns (so
the user could have replaced it anyway), and only if the name still leads to
that very file.  The change is made on the file descriptor checked.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

import structlog

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Owner:
    uid: int
    gid: int


_owner: contextvars.ContextVar[Owner | None] = contextvars.ContextVar(
    "monitord_workflow_owner", default=None
)


def owner_of(path: str) -> Owner | None:
    """The owner of ``path`` (a submit directory), or None if it cannot be seen."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Owner(st.st_uid, st.st_gid)


def current() -> Owner | None:
    """The owner of the workflow being worked on, if the service set one."""
    return _owner.get()


def set_owner(owner: Owner | None) -> None:
    """Set the owner for the rest of the current context (a workflow's task)."""
    _owner.set(owner)


@contextlib.contextmanager
def owned_by(owner: Owner | None) -> Iterator[None]:
    """Files created in the block belong to ``owner`` (None: nobody in particular)."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


def _applies(owner: Owner | None) -> bool:
    return owner is not None and os.geteuid() == 0 and (owner.uid, owner.gid) != (0, 0)


def chown_new(path: str, owner: Owner | None = None) -> None:
    """Give ``path``, which we just created, to ``owner`` (default: the context's).

    Does nothing unless an owner is set and the process runs as root; never raises.
    """
    owner = owner or current()
    if not _applies(owner):
        return
    assert owner is not None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        log.debug("cannot hand over file", path=path, error=exc.strerror)
        return
    try:
        _chown_fd(fd, path, owner)
    finally:
        os.close(fd)


def chown_new_fd(fd: int, path: str, owner: Owner | None = None) -> None:
    """:func:`chown_new` for a file we hold open (``path`` names its directory)."""
    owner = owner or current()
    if _applies(owner):
        assert owner is not None
        _chown_fd(fd, path, owner)


def _chown_fd(fd: int, path: str, owner: Owner) -> None:
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or (st.st_uid, st.st_gid) == (owner.uid, owner.gid):
            return  # not ours, or already right
        if stat.S_ISREG(st.st_mode):
            if st.st_nlink != 1:
                return
        elif not stat.S_ISDIR(st.st_mode):
            return
        parent = os.stat(os.path.dirname(os.path.abspath(path)))
        if parent.st_uid != owner.uid:
            return  # a directory the owner does not control: leave it as it is
        named = os.lstat(path)
        if (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino):
            return  # the name is a symlink now, or another file: not what we created
        os.fchown(fd, owner.uid, owner.gid)
    except OSError as exc:
        log.debug("cannot hand over file", path=path, error=exc.strerror)


def makedirs_owned(path: str, owner: Owner | None = None, mode: int = 0o777) -> None:
    """``os.makedirs(path, exist_ok=True)``, each directory it creates handed to the owner."""
    owner = owner or current()
    missing = []
    head = os.path.abspath(path)
    while not os.path.isdir(head):
        missing.append(head)
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    os.makedirs(path, mode=mode, exist_ok=True)
    for directory in reversed(missing):
        chown_new(directory, owner)


def create_owned(path: str, mode: int = 0o644, owner: Owner | None = None) -> None:
    """Make sure ``path`` exists before a library creates it (SQLite): created empty and
    handed over, or, if we made it earlier and it is still ours, handed over now."""
    owner = owner or current()
    if not _applies(owner):
        return
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, mode)
    except FileExistsError:
        chown_new(path, owner)
        return
    except OSError as exc:
        log.debug("cannot create file", path=path, error=exc.strerror)
        return
    try:
        chown_new_fd(fd, path, owner)
    finally:
        os.close(fd)
