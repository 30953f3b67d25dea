"""Following a growing file: complete lines as they are appended, woken by inotify.

:class:`LineFollower` hands out the complete lines appended since the last
call (a partial last line is held back until its newline arrives), keeps its
byte offset so that a checkpoint can name the exact resume point, and notices
a file that was truncated or replaced.  Waiting for growth uses watchfiles
(inotify) and falls back to polling where inotify is unavailable (network file
systems) or fails.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiofiles
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

    async def read_lines(self, limit: int = READ_SIZE) -> list[str]:
        """Complete lines appended since the last call (up to about ``limit`` bytes)."""
        start = self.offset + len(self._tail)
        async with aiofiles.open(self.path, "rb") as fh:
            if self._inode is None:
                self._inode = os.fstat(fh.fileno()).st_ino
            await fh.seek(start)
            data = await fh.read(limit)
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

    def take_partial(self) -> list[str]:
        """At the very end (DAGMan gone): the last line even without its newline."""
        if not self._tail:
            return []
        line = self._tail.decode("utf-8", errors="replace")
        self.offset += len(self._tail)
        self._tail = b""
        return [line]


async def wait_for_change(path: str, timeout: float, *, polling: bool = False) -> None:
    """Return when ``path`` (or its directory, for a file not yet created) changes, or after ``timeout``."""
    target = path if os.path.exists(path) else os.path.dirname(path) or "."
    if polling:
        await asyncio.sleep(min(timeout, 1.0))
        return
    try:
        from watchfiles import awatch

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        handle = loop.call_later(timeout, stop.set)
        try:
            async for _ in _first(
                awatch(
                    target,
                    stop_event=stop,
                    debounce=50,
                    step=20,
                    rust_timeout=int(timeout * 1000) + 100,
                )
            ):
                break
        finally:
            handle.cancel()
    except Exception as exc:  # noqa: BLE001 - no inotify here: poll instead
        log.debug("file watching unavailable, polling", path=path, error=str(exc))
        await asyncio.sleep(min(timeout, 1.0))


async def _first(it: AsyncIterator[object]) -> AsyncIterator[object]:
    async for item in it:
        yield item
        return
