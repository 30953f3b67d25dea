"""One file watcher for every followed workflow: a single inotify descriptor on the event loop.

The per-workflow daemon starts a watchfiles watcher for each wait; a service with
a thousand workflows cannot (the kernel allows 128 inotify instances per user,
and each watchfiles watcher is a thread).  Here one inotify descriptor watches
the directory of every followed ``dagman.out`` and wakes only the waiters of the
file an event names.  Files inotify cannot see (network file systems, no
inotify, watch limit reached) are stat-polled by one task.

A change that arrives while nobody waits is remembered (``dirty``), so the next
wait returns at once: no append is ever slept through.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import heapq
import os
import struct
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger(__name__)

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
WATCH_MASK = (
    IN_MODIFY
    | IN_CLOSE_WRITE
    | IN_MOVED_TO
    | IN_MOVED_FROM
    | IN_CREATE
    | IN_DELETE
    | IN_ATTRIB
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
_HEADER = struct.Struct("iIII")
TICK = 1.0  # resolution of the idle waits' deadlines (seconds)

# statfs f_type of file systems whose remote writes inotify never reports.
REMOTE_FS = {
    0x6969,  # NFS
    0xFF534D42,  # CIFS
    0xFE534D42,  # SMB2
    0x517B,  # SMB
    0x65735546,  # FUSE
    0x0BD00BD0,  # Lustre
    0x47504653,  # GPFS
    0x00C36400,  # Ceph
    0x6B414653,  # AFS
}


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def fs_type(path: str) -> int | None:
    """The statfs ``f_type`` of ``path`` (Linux), or None when it cannot be told."""
    if _LIBC is None or not hasattr(_LIBC, "statfs"):
        return None
    buf = ctypes.create_string_buffer(256)
    if _LIBC.statfs(os.fsencode(path), buf) != 0:
        return None
    return int(ctypes.c_long.from_buffer(buf).value) & 0xFFFFFFFF


@dataclass
class _Path:
    """Waiters and the not-yet-consumed change of one followed file."""

    dirty: bool = False
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    polled: bool = False
    stamp: tuple[int, int, int] | None = None
    users: int = 0


class FileWatcher:
    """``await watcher.wait(path, timeout)`` returns when ``path`` changed (or after ``timeout``)."""

    def __init__(self, *, poll_seconds: float = 1.0, idle_seconds: float = 30.0) -> None:
        self.poll_seconds = poll_seconds
        self.idle_seconds = idle_seconds
        self._paths: dict[str, _Path] = {}
        self._dirs: dict[str, int] = {}  # directory -> watch descriptor
        self._wd_dirs: dict[int, str] = {}
        self._dir_users: dict[str, int] = {}
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poll_task: asyncio.Task[None] | None = None
        self._tick_task: asyncio.Task[None] | None = None
        self._deadlines: list[tuple[float, int, asyncio.Future[None]]] = []
        self.wakeups = 0
        self.closed = False

    # ------------------------------------------------------------------ life cycle
    def start(self, *, inotify: bool = True) -> None:
        self._loop = asyncio.get_running_loop()
        if inotify and _LIBC is not None and hasattr(_LIBC, "inotify_init1"):
            fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd >= 0:
                self._fd = fd
                self._loop.add_reader(fd, self._on_readable)
            else:
                log.warning("inotify unavailable, polling", error=os.strerror(ctypes.get_errno()))
        self._poll_task = asyncio.create_task(self._poll_loop(), name="watcher-poll")
        self._tick_task = asyncio.create_task(self._tick_loop(), name="watcher-tick")

    def poke(self, path: str) -> None:
        """Wake the waiters of ``path`` now (a stop request must not wait for a timeout)."""
        self._wake(path)

    def close(self) -> None:
        """Stop watching; every current and later wait returns at once."""
        self.closed = True
        for task in (self._poll_task, self._tick_task):
            if task is not None:
                task.cancel()
        for _, _, fut in self._deadlines:
            if not fut.done():
                fut.set_result(None)
        self._deadlines.clear()
        if self._fd is not None and self._loop is not None:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None
        for state in self._paths.values():
            for fut in state.waiters:
                if not fut.done():
                    fut.set_result(None)

    @property
    def inotify(self) -> bool:
        return self._fd is not None

    def watched_directories(self) -> int:
        return len(self._dirs)

    def polled_files(self) -> int:
        return sum(1 for s in self._paths.values() if s.polled)

    # ------------------------------------------------------------------ registration
    def add(self, path: str) -> None:
        """Start watching ``path`` (reference-counted; the directory may hold the file later)."""
        state = self._paths.get(path)
        if state is None:
            state = self._paths[path] = _Path()
            if not self._watch_dir(os.path.dirname(path)):
                state.polled = True
                state.stamp = _stamp(path)
        state.users += 1

    def discard(self, path: str) -> None:
        state = self._paths.get(path)
        if state is None:
            return
        state.users -= 1
        if state.users > 0:
            return
        del self._paths[path]
        for fut in state.waiters:
            if not fut.done():
                fut.set_result(None)
        if not state.polled:
            self._unwatch_dir(os.path.dirname(path))

    def _watch_dir(self, directory: str) -> bool:
        if directory in self._dirs:
            self._dir_users[directory] += 1
            return True
        if self._fd is None or _LIBC is None:
            return False
        kind = fs_type(directory)
        if kind in REMOTE_FS:
            log.info("remote file system: polling", path=directory, fs_type=hex(kind))
            return False
        wd = _LIBC.inotify_add_watch(self._fd, os.fsencode(directory), WATCH_MASK)
        if wd < 0:
            err = ctypes.get_errno()
            level = log.warning if err == errno.ENOSPC else log.debug
            level("cannot watch directory, polling", path=directory, error=os.strerror(err))
            return False
        self._dirs[directory] = wd
        self._wd_dirs[wd] = directory
        self._dir_users[directory] = 1
        return True

    def _unwatch_dir(self, directory: str) -> None:
        users = self._dir_users.get(directory, 0) - 1
        if users > 0:
            self._dir_users[directory] = users
            return
        self._dir_users.pop(directory, None)
        wd = self._dirs.pop(directory, None)
        if wd is not None:
            self._wd_dirs.pop(wd, None)
            if self._fd is not None and _LIBC is not None:
                _LIBC.inotify_rm_watch(self._fd, wd)

    # ------------------------------------------------------------------ waiting
    async def wait(self, path: str, timeout: float) -> None:
        """Return when ``path`` changes, or after ``timeout`` (see below).

        With inotify, an idle file is looked at only every ``idle_seconds``: its
        changes wake the waiter anyway, and the per-workflow idle checks (DAGMan
        still alive?) need no finer grain.  Polled files and files that do not
        exist yet (the daemon counts those waits) keep ``timeout``.
        """
        if self.closed:
            await asyncio.sleep(0)
            return
        state = self._paths.get(path)
        if state is None:
            self.add(path)
            state = self._paths[path]
        if state.dirty:
            state.dirty = False
            return
        limit = min(timeout, self.idle_seconds) if state.polled else self.idle_seconds
        if not os.path.exists(path):
            limit = timeout  # counting the waits for a file to appear: the daemon's cadence
        assert self._loop is not None
        fut: asyncio.Future[None] = self._loop.create_future()
        state.waiters.append(fut)
        try:
            if limit >= self.idle_seconds:
                # The common case, a thousand idle workflows: no timer each, one shared tick.
                heapq.heappush(self._deadlines, (self._loop.time() + limit, id(fut), fut))
                await fut
            else:
                try:
                    await asyncio.wait_for(fut, limit)
                except TimeoutError:
                    pass
        finally:
            if fut in state.waiters:
                state.waiters.remove(fut)
        state.dirty = False

    def _wake(self, path: str) -> None:
        state = self._paths.get(path)
        if state is None:
            return
        if state.waiters:
            self.wakeups += 1
            for fut in state.waiters:
                if not fut.done():
                    fut.set_result(None)
            state.waiters.clear()
        else:
            state.dirty = True

    def _on_readable(self) -> None:
        assert self._fd is not None
        try:
            data = os.read(self._fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError as exc:
            log.error("inotify read failed", error=str(exc))
            return
        pos = 0
        while pos + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, pos)
            pos += _HEADER.size
            name = data[pos : pos + length].split(b"\0", 1)[0]
            pos += length
            if mask & IN_Q_OVERFLOW:
                for path in list(self._paths):
                    self._wake(path)
                continue
            directory = self._wd_dirs.get(wd)
            if directory is None:
                continue
            if mask & IN_IGNORED:
                self._wd_dirs.pop(wd, None)
                self._dirs.pop(directory, None)
                self._dir_users.pop(directory, None)
                for path, state in self._paths.items():
                    if os.path.dirname(path) == directory:
                        state.polled = True
                        self._wake(path)
                continue
            if name:
                self._wake(os.path.join(directory, os.fsdecode(name)))

    async def _tick_loop(self) -> None:
        """Ends the idle waits whose time is up, all at once, once a second."""
        assert self._loop is not None
        deadlines = self._deadlines
        while True:
            await asyncio.sleep(TICK)
            now = self._loop.time()
            while deadlines and deadlines[0][0] <= now:
                fut = heapq.heappop(deadlines)[2]
                if not fut.done():
                    fut.set_result(None)

    async def _poll_loop(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            for path, state in list(self._paths.items()):
                if not state.polled:
                    continue
                stamp = _stamp(path)
                if stamp != state.stamp:
                    state.stamp = stamp
                    self._wake(path)


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
