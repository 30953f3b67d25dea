"""Performing a plan into a directory at a chosen pace, blocking, in a thread or awaited.

Lines are buffered and flushed on a clock tick, so a follower sees whole lines at
known times (``on_flush``), and a stop event ends a play at once for tests that kill.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from monitord.tools.player.actions import Action, Append, Copy, Pause, WriteFile
from monitord.tools.player.sequence import plan
from monitord.tools.player.source import PlayerError, scan

# Writes due within this many seconds are made at once (one flush), later ones are slept for.
TICK = 0.002


@dataclass
class PlayStats:
    lines: int = 0
    files: int = 0
    seconds: float = 0.0


class Player:
    """Performs a plan into ``dest`` at ``lines_per_second`` (dagman.out lines, all files).

    ``seed`` makes the spacing random (exponential gaps around the mean rate, reproducible);
    without it lines are evenly spaced.  ``on_pause`` is called at each pause between two
    DAGMan runs (before sleeping); ``on_flush`` gets the ``(path, line)`` pairs that just
    reached the disk and the time they did.  ``stop`` (a threading.Event) ends the play early.
    """

    def __init__(
        self,
        src: str,
        dest: str,
        *,
        lines_per_second: float = 200.0,
        pause: float = 0.0,
        seed: int | None = None,
        on_pause: Callable[[Pause], None] | None = None,
        on_flush: Callable[[list[tuple[str, str]], float], None] | None = None,
        actions: list[Action] | None = None,
    ) -> None:
        if lines_per_second <= 0:
            raise PlayerError("lines per second must be positive")
        self.src = os.path.abspath(src)
        self.dest = os.path.abspath(dest)
        self.rate = float(lines_per_second)
        self.actions = actions if actions is not None else plan(scan(self.src), pause=pause)
        self.rng = random.Random(seed) if seed is not None else None
        self.on_pause = on_pause
        self.on_flush = on_flush
        self.stop = threading.Event()
        self.stats = PlayStats()
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._next = 0  # actions[:_next] are done

    # -- blocking
    def prepare(self) -> None:
        """What exists before DAGMan starts: the leading copies (``run`` does it if needed)."""
        os.makedirs(self.dest, exist_ok=True)
        while self._next < len(self.actions) and isinstance(self.actions[self._next], Copy):
            self._copy(self.actions[self._next].path)
            self._next += 1

    def run(self) -> PlayStats:
        began = time.monotonic()
        self.prepare()
        out = _Appender(self.dest, self.on_flush)
        t0 = flushed = time.monotonic()
        due = 0.0
        try:
            for action in self.actions[self._next :]:
                if self.stop.is_set():
                    break
                if isinstance(action, Append):
                    now = time.monotonic()
                    wait = t0 + due - now
                    if wait > TICK:
                        t0 += out.flush()  # a hook's wait is not play time: no burst
                        flushed = now
                        if self.stop.wait(wait):
                            break
                    elif now - flushed > TICK:  # behind schedule: still hand lines over
                        t0 += out.flush()
                        flushed = now
                    out.write(action.path, action.line)
                    self.stats.lines += 1
                    due += self.rng.expovariate(self.rate) if self.rng else 1.0 / self.rate
                elif isinstance(action, WriteFile):
                    self._copy(action.path)
                    self.stats.files += 1
                elif isinstance(action, Copy):
                    self._copy(action.path)
                elif isinstance(action, Pause):
                    out.flush()
                    if self.on_pause is not None:
                        self.on_pause(action)
                    if self.stop.wait(action.seconds):
                        break
                    t0, due = time.monotonic(), 0.0
            out.flush()
        finally:
            out.close()
            self.stats.seconds = time.monotonic() - began
        return self.stats

    def _copy(self, rel: str) -> None:
        source = os.path.join(self.src, rel)
        target = os.path.join(self.dest, rel)
        if os.path.islink(source):
            if not os.path.lexists(target):
                os.symlink(os.readlink(source), target)
        elif os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)

    # -- in a thread
    def start(self) -> Player:
        def target() -> None:
            try:
                self.run()
            except BaseException as exc:  # re-raised by join()
                self.error = exc

        self._thread = threading.Thread(target=target, name="player", daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> PlayStats:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError("the player is still playing")
        if self.error is not None:
            raise self.error
        return self.stats

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


async def play_async(src: str, dest: str, **options: object) -> PlayStats:
    """Play from a coroutine: the blocking writer runs in a worker thread."""
    player = Player(src, dest, **options)  # type: ignore[arg-type]
    return await asyncio.to_thread(player.run)


class _Appender:
    """The played files lines are appended to, and the lines written since the last flush."""

    def __init__(
        self, dest: str, on_flush: Callable[[list[tuple[str, str]], float], None] | None
    ) -> None:
        self.dest = dest
        self.on_flush = on_flush
        self.handles: dict[str, IO[str]] = {}
        self.unflushed: list[tuple[str, str]] = []

    def write(self, path: str, line: str) -> None:
        fh = self.handles.get(path)
        if fh is None:
            # Big buffer: lines reach the file at our flushes only (on_flush's times are
            # exact), never half-way through a line.
            target = os.path.join(self.dest, path)
            fh = self.handles[path] = open(target, "a", encoding="utf-8", buffering=1 << 20)
        fh.write(line)
        self.unflushed.append((path, line))

    def flush(self) -> float:
        """The lines reach their files, then the hook sees them; the seconds the hook took."""
        for fh in self.handles.values():
            fh.flush()
        took = 0.0
        if self.unflushed and self.on_flush is not None:
            began = time.monotonic()
            self.on_flush(list(self.unflushed), time.time())
            took = time.monotonic() - began
        self.unflushed.clear()
        return took

    def close(self) -> None:
        for fh in self.handles.values():
            fh.close()
