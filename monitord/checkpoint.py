"""Checkpoints written only once every sink holds what they cover, off the followers' path.

A follower feeds a chunk (its events go to the sinks' queues) and asks for a checkpoint
at the chunk's last line; it does not wait.  One task runs flush cycles: it takes the
requests made so far, flushes every sink (each sink has then written everything queued
before the flush), and only then writes the requested checkpoints.  While a cycle
flushes, followers go on parsing the next chunks, so parsing and the database's commits
overlap instead of alternating; requests that arrive meanwhile are served by the next
cycle.  Cycles never run concurrently, so sinks see one flush at a time whatever the
number of followed workflows.  :meth:`Checkpointer.barrier` waits for a full cycle that
started after the call (a workflow's end, a shutdown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any

import structlog

log = structlog.get_logger(__name__)


class Checkpointer:
    def __init__(self, flush: Callable[[], None], write: Callable[[Any, int], None]) -> None:
        self._flush = flush
        self._write = write
        self._pending: dict[Hashable, tuple[Any, int]] = {}
        self._requested = 0  # generation of the latest request
        self._done = 0  # every request up to this generation is flushed and written
        self._wake = asyncio.Event()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> Checkpointer:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="checkpoints")
        return self

    def request(self, key: Hashable, target: Any, line_no: int) -> None:
        """Checkpoint ``target`` at ``line_no`` once the sinks hold everything published so far."""
        self._pending[key] = (target, line_no)
        self._requested += 1
        self._wake.set()

    async def barrier(self) -> None:
        """Return after a whole flush cycle that began after this call."""
        self._requested += 1
        goal = self._requested
        if self._task is None or self._task.done():
            batch, self._pending = self._pending, {}
            await asyncio.to_thread(self._cycle, batch)
            self._done = max(self._done, goal)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((goal, fut))
        self._wake.set()
        await fut

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_result(None)
        self._waiters.clear()

    def _cycle(self, batch: dict[Hashable, tuple[Any, int]]) -> None:
        self._flush()
        for target, line_no in batch.values():
            self._write(target, line_no)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            goal = self._requested
            batch, self._pending = self._pending, {}
            try:
                await asyncio.to_thread(self._cycle, batch)
            except Exception as exc:  # a failed cycle is retried by the next
                log.error("checkpoint cycle failed", error=str(exc))
                for key, item in batch.items():
                    self._pending.setdefault(key, item)
                await asyncio.sleep(0.5)
                self._wake.set()
                continue
            self._done = goal
            ready = [w for w in self._waiters if w[0] <= goal]
            self._waiters = [w for w in self._waiters if w[0] > goal]
            for _, fut in ready:
                if not fut.done():
                    fut.set_result(None)
