"""Following a growing file: complete lines as they are appended, woken by inotify.

:class:`LineFollower` hands out the complete lines appended since the last
call (a partial last line is held back until its newline arrives), keeps its
byte offset so that a checkpoint can name the exact resume point, and notices
a file that was truncated or replaced.  Waiting for growth (:class:`ChangeWatch`)
uses watchfiles (inotify) and falls back to polling where inotify is unavailable
(network file systems) or fails, or when ``MONITORD_FORCE_POLLING=1`` / ``--poll``
asks for it.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

import aiofiles.os
import structlog

log = structlog.get_logger(__name__)

READ_SIZE = 1 << 18


@dataclass
class FileChange:
    """What happened to the followed file since the last read."""

    truncated: bool = False
    replaced: bool = False


class LineFollower:
    def __init__(self, path: str, *, offset: int = 0) -> None:
        self.path = path
        self.offset = offset  # bytes consumed as complete lines
        self._tail = b""
        self._inode: int | None = None
        # the open, read and close in one hop to the loop's pool (aiofiles' file object takes
        # four, each a wake-up of the event loop: ten chunks a second at a steady rate)
        self._read_in_pool = aiofiles.os.wrap(self._read_at)

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def check(self) -> FileChange:
        """Truncation (size below our offset) or replacement (a new inode)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return FileChange()
        change = FileChange()
        if self._inode is not None and st.st_ino != self._inode:
            change.replaced = True
        elif st.st_size < self.offset + len(self._tail):
            change.truncated = True
        self._inode = st.st_ino
        return change

    def size(self) -> int:
        try:
            return os.stat(self.path).st_size
        except OSError:
            return -1

    def pending(self) -> bool:
        """Bytes on disk that have not been read yet."""
        return self.size() > self.offset + len(self._tail)

    def pending_at_least(self, n: int) -> bool:
        """At least ``n`` bytes on disk not read yet (a follower behind, not caught up)."""
        return self.size() >= self.offset + len(self._tail) + n

    async def read_lines(self, limit: int = READ_SIZE) -> list[str]:
        """Complete lines appended since the last call (up to about ``limit`` bytes)."""
        start = self.offset + len(self._tail)
        if 0 <= self.size() <= start:
            return []  # nothing new: one stat instead of an open and a read in a thread (service)
        data: bytes = await self._read_in_pool(start, limit)
        if not data:
            return []
        data = self._tail + data
        cut = data.rfind(b"\n")
        if cut < 0:
            self._tail = data
            return []
        self._tail = data[cut + 1 :]
        self.offset += cut + 1
        return data[:cut].decode("utf-8", errors="replace").split("\n")

    def _read_at(self, start: int, limit: int) -> bytes:
        """A worker thread: up to ``limit`` bytes from ``start`` (the inode noted once)."""
        with open(self.path, "rb") as fh:
            if self._inode is None:
                self._inode = os.fstat(fh.fileno()).st_ino
            return os.pread(fh.fileno(), limit, start)

    def take_partial(self) -> list[str]:
        """At the very end (DAGMan gone): the last line even without its newline."""
        if not self._tail:
            return []
        line = self._tail.decode("utf-8", errors="replace")
        self.offset += len(self._tail)
        self._tail = b""
        return [line]


def force_polling() -> bool:
    """``MONITORD_FORCE_POLLING=1`` (or true/yes/on): never use inotify."""
    return os.environ.get("MONITORD_FORCE_POLLING", "").strip().lower() in (
        "1",
        "true",
        "yes",
        "on",
    )


# inotify (watchfiles): the watcher thread looks for events every STEP ms and reports once
# a step brings nothing new or DEBOUNCE ms have passed, so a change is seen within about
# 2 * STEP ms.  Each step takes the GIL (watchfiles checks its stop event and signals), and
# under a steady writer each DEBOUNCE brings a report (a thread hop and a loop wake-up) that
# a follower reading on its own clock (following.CHUNK_PERIOD) does not need: 10/20 ms cost
# a followed dagman.out ~0.02 core at 100 writes a second, 50/100 ms half that
# (bench/README.md, "live30f"), for a lone change seen ~40 ms later.
# Polling: one stat() of the followed file every POLL_DELAY seconds.
STEP_MS = 50
DEBOUNCE_MS = 100
POLL_DELAY = 0.25
# A watch nobody waited on for this long while its file kept changing rests (its watcher
# closes): a follower that waited once, then reads on its own clock behind a steady writer,
# never waits again, yet the watcher's steps and reports cost ~0.01 core (at 5,000 lines/s ~4
# CPU-s of a 100,000-job play's ~60, bench/README.md "live30l").  The next wait starts it again
# and returns at once.
REST_AFTER = 2.0


class ChangeWatch:
    """Wakes a follower when its file changes (appears, grows, is replaced), without lost wake-ups.

    One long-lived watcher per followed file, on the file's directory (not recursive) so
    that creation and replacement are seen too; changes to other files of the directory
    (the daemon's own jobstate.log, database, monitord.recover) do not wake it.  A change
    sets a flag that :meth:`wait` consumes: a change that happens while the follower is
    reading makes the next ``wait`` return at once, so nothing written between "read to the
    end" and "wait" is left sitting until the next timeout.  Falls back to polling where
    inotify is unavailable or fails, or when asked to (``polling`` / MONITORD_FORCE_POLLING).
    An inotify watch nobody waits on while its file keeps changing rests (:data:`REST_AFTER`):
    the change stays noted, and the next wait starts the watcher again and returns at once.
    """

    def __init__(
        self,
        path: str,
        *,
        polling: bool | None = None,
        poll_delay: float = POLL_DELAY,
        initial: bool = True,
    ) -> None:
        self.path = os.path.abspath(path)
        self.initial = initial
        self.polling = force_polling() if polling is None else polling
        self.poll_delay = poll_delay
        self._changed = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._waiting = False
        self._waited_at = 0.0  # the loop's clock when the last wait ended (or the watch began)

    @property
    def resting(self) -> bool:
        """The watcher closed itself (:data:`REST_AFTER`); the next wait starts it again."""
        return self._task is not None and self._task.done() and not self._stop.is_set()

    def start(self) -> ChangeWatch:
        if self._task is None or self.resting:
            self._waited_at = asyncio.get_running_loop().time()
            self._task = asyncio.create_task(self._run(), name=f"watch {self.path}")
        return self

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
            self._task = None

    async def __aenter__(self) -> ChangeWatch:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait(self, timeout: float) -> bool:
        """True when the file changed since the last call (or changes within ``timeout`` s)."""
        if self.resting:
            self.start()
            await asyncio.sleep(0)  # the watcher is set up before the caller reads again
        self.start()
        self._waiting = True
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self._changed.clear()
            self._waiting = False
            self._waited_at = asyncio.get_running_loop().time()

    def _rests(self) -> bool:
        """After a report: nobody waits, nor did for REST_AFTER (the changes stay noted)."""
        idle = asyncio.get_running_loop().time() - self._waited_at
        return not self._waiting and idle >= REST_AFTER

    async def _run(self) -> None:
        if not self.polling:
            try:
                await self._watch()
                return
            except Exception as exc:  # no inotify here: poll instead
                log.debug("file watching unavailable, polling", path=self.path, error=str(exc))
        await self._poll()

    async def _watch(self) -> None:
        from watchfiles import awatch

        directory = os.path.dirname(self.path) or "."
        path = self.path

        def mine(_change: object, changed: str) -> bool:
            return changed == path

        if self.initial:
            self._changed.set()  # whatever happened before the watch began is looked at once
        async for _ in awatch(
            directory,
            watch_filter=mine,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            recursive=False,
            force_polling=False,
        ):
            self._changed.set()  # noted for the next wait, also when the watch rests now
            if self._rests():
                return

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    async def _poll(self) -> None:
        last = self._stat()
        if self.initial:
            self._changed.set()
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), self.poll_delay)
                return
            except TimeoutError:
                pass
            now = self._stat()
            if now != last:
                last = now
                self._changed.set()


async def wait_for_change(path: str, timeout: float, *, polling: bool | None = None) -> None:
    """Return when ``path`` (or its directory, for a file not yet created) changes, or after ``timeout``.

    A one-shot :class:`ChangeWatch`; followers keep one open instead (no lost wake-ups).
    """
    async with ChangeWatch(path, polling=polling, initial=False) as watch:
        await watch.wait(timeout)
