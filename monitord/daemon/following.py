"""Live mode: following every tracked workflow's dagman.out until DAGMan is done.

:class:`LiveFollowing` is the part of :class:`~monitord.daemon.monitor.Monitor` that
waits for lines (inotify or polling), feeds them, checkpoints once the sinks hold what
they produced, and ends each workflow in order; the service's monitor runs the same
loop and overrides only ``_start_following``, ``_next_ended`` and ``_finish``.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from monitord.core.workflow import Workflow
from monitord.daemon.checkpoint import Checkpointer
from monitord.daemon.config import MonitorConfig
from monitord.daemon.errors import MonitordError
from monitord.daemon.resume import Snapshot
from monitord.daemon.resuming import Resuming
from monitord.daemon.statefiles import pid_alive, write_recover
from monitord.daemon.tail import ChangeWatch, LineFollower
from monitord.daemon.tracked import Tracked

log = structlog.get_logger(__name__)

# Live following (doc §9.3): waits for dagman.out to appear, idle passes before the DAGMan
# liveness check, and idle passes before giving up.
APPEAR_POLLS = 100
# Idle passes (about 1 s each) a resumed daemon waits for a rescue DAG's new DAGMan run when
# the dagman.out it resumed on already ends with DAGMan's exit line.
RESUME_GRACE = 5
SNAPSHOT_KEY = ("resume snapshot",)  # the checkpointer keeps the latest one only
LIVENESS_IDLE = 10
MAX_IDLE = 17280


def poll_interval(count: int) -> float:
    """The reference's back-off (1 s, 5 s, 30 s, capped at 10 s); inotify usually wakes us first."""
    if count < 5:
        return 1.0
    return 5.0 if count < 50 else 10.0


class LiveFollowing(Resuming):
    """The follow loop; the Monitor holds the state it works on (declared here)."""

    cfg: MonitorConfig
    sinks: Any
    pending: deque[Tracked]
    done: list[Tracked]
    wait_for_change: Callable[[str, float], Awaitable[None]]
    _watches: dict[str, ChangeWatch]
    _followed: dict[str, Workflow]
    _feed_lock: threading.Lock
    _checkpoints: Checkpointer | None

    def _feed(self, tracked: Tracked, lines: list[str]) -> None:
        raise NotImplementedError  # the Monitor's

    def _end_workflow(self, tracked: Tracked) -> None:
        raise NotImplementedError  # the Monitor's

    @staticmethod
    def _follower_outcome(tracked: Tracked, task: asyncio.Task[Any]) -> None:
        """A daemon-ending error propagates; any other failure ends only that workflow (exit 1)."""
        exc = task.exception()
        if exc is not None:
            if isinstance(exc, MonitordError):
                raise exc
            log.error("workflow follower failed", run_dir=tracked.run_dir, error=repr(exc))
            tracked.exit_code = 1

    async def follow_all(self, stop: asyncio.Event) -> None:
        """Follow every tracked workflow (sub-workflows as they appear) until each has ended.

        The service's monitor runs this same loop; it overrides only the three steps below
        (what following starts, how the loop waits, what ending a workflow does).
        """
        tasks: dict[asyncio.Task[None], Tracked] = {}
        try:
            while True:
                while self.pending:
                    tracked = self.pending.popleft()
                    self._start_following(tracked)
                    tasks[asyncio.create_task(self._follow_one(tracked, stop))] = tracked
                if not tasks:
                    return
                for task in await self._next_ended(tasks):
                    await self._finish(tasks.pop(task), task, stop)
        finally:
            for task in tasks:
                task.cancel()

    def _start_following(self, tracked: Tracked) -> None:
        if tracked.wf is not None:
            self._followed[tracked.wf.uuid] = tracked.wf  # its sub-workflows find their parent

    async def _next_ended(
        self, tasks: dict[asyncio.Task[None], Tracked]
    ) -> set[asyncio.Task[None]]:
        """The followers that ended; at least once a second, to take up new sub-workflows."""
        done, _ = await asyncio.wait(tasks, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
        return done

    async def _finish(
        self, tracked: Tracked, task: asyncio.Task[None], stop: asyncio.Event
    ) -> None:
        """One workflow's follower ended: record its outcome and end it in order."""
        self._follower_outcome(tracked, task)
        if stop.is_set() and tracked.wf is not None and tracked.wf.monitord_exit == 0:
            tracked.wf.monitord_exit = 1
        await asyncio.to_thread(self._end_locked, tracked)
        self.done.append(tracked)

    async def _follow_one(self, tracked: Tracked, stop: asyncio.Event) -> None:
        try:
            await self._follow_lines(tracked, stop)
        finally:
            watch = self._watches.pop(tracked.dagman_out, None)
            if watch is not None:
                await watch.close()
            # Whoever ends the workflow next finds its events in every sink.
            await self._checkpointer().barrier()

    def _checkpointer(self) -> Checkpointer:
        if self._checkpoints is None:
            self._checkpoints = Checkpointer(self.sinks.flush, self._write_checkpoint).start()
        return self._checkpoints

    def _write_checkpoint(self, tracked: Tracked | Snapshot, line_no: int) -> None:
        if isinstance(tracked, Snapshot):
            self._write_snapshot(tracked)
            return
        with self._feed_lock:  # never after _end_workflow removed monitord.recover
            if tracked.wf is not None and not tracked.wf.finished:
                write_recover(tracked.files["recover"], line_no)

    async def _follow_lines(self, tracked: Tracked, stop: asyncio.Event) -> None:
        wf = tracked.wf
        assert wf is not None
        path = tracked.dagman_out
        follower = LineFollower(path, offset=tracked.offset)
        parent = self._followed.get(wf.parent_uuid) if wf.parent_uuid else None
        restarting = False  # a DAGMan start line came after the last exit line
        waits = 0
        while not follower.exists():
            if stop.is_set():
                return
            if parent is not None and parent.dagman_exit is not None and parent.state == "end":
                # The parent's DAGMan has exited, so every sub-DAGMan it ran has too: a
                # dagman.out that is not there now never will be (the sample lacks it).
                log.warning("sub-workflow dagman.out never made an appearance", path=path)
                return
            waits += 1
            if waits > APPEAR_POLLS:
                log.warning("dagman.out never made an appearance", path=path)
                return
            await self._wait(path, poll_interval(waits), stop)
        idle = 0
        while not stop.is_set():
            # Everything on disk is taken at once: lines that arrived while the previous
            # chunk was being processed make one batch (one sink flush, one checkpoint).
            lines = await follower.read_lines()
            if lines:
                idle = 0
                offset = follower.offset
                marker = await asyncio.to_thread(self._process_chunk, tracked, lines, offset)
                if marker is not None:
                    restarting = marker
                snapshot, self._fresh_snapshot = self._fresh_snapshot, None
                if snapshot is not None:  # written once the sinks hold what it covers
                    self._checkpointer().request(SNAPSHOT_KEY, snapshot, 0)
                # Checkpointed once every sink holds what the lines produced; meanwhile
                # the next chunk is parsed (the flush and the parsing overlap).
                self._checkpointer().request(path, tracked, wf.line_no)
                continue
            if follower.pending():
                continue  # a partial line: wait for the rest
            change = follower.check()
            if change.truncated or change.replaced:
                log.error("dagman.out was truncated or replaced; stopping", path=path)
                return
            if wf.dagman_exit is not None and wf.state == "end" and not restarting:
                # DAGMan said it is done, and everything it wrote is processed (a new
                # DAGMan run's banner, before its "Parsing" line, keeps us following).  A
                # daemon resumed after that exit line (every line so far was its
                # predecessor's) may be the one pegasus-run started for a rescue DAG whose
                # DAGMan has not written its first line yet: it gives it a few idle passes.
                if wf.line_no > wf.last_processed_line or idle >= RESUME_GRACE:
                    return
            idle += 1
            if idle > LIVENESS_IDLE and wf.dagman_pid and not pid_alive(wf.dagman_pid):
                log.error("DAGMan is gone! Sudden death syndrome detected!", pid=wf.dagman_pid)
                wf.monitord_exit = 42
                return
            if idle > MAX_IDLE:
                log.warning("too long without action; stopping", path=path)
                return
            await self._wait(path, poll_interval(idle), stop)

    def _process_chunk(self, tracked: Tracked, lines: list[str], offset: int) -> bool | None:
        """Feed a chunk (``offset``: the dagman.out bytes fed once it is); True/False when its
        last DAGMan start/exit line is a start/an exit."""
        wf = tracked.wf
        assert wf is not None
        with self._feed_lock:
            self._feed(tracked, lines)
            tracked.offset = offset
            self._take_snapshot()
        marker = None
        for line in reversed(lines):
            if "EXITING WITH STATUS" in line:
                marker = False
                break
            if "(CONDOR_DAGMAN) STARTING UP" in line:
                marker = True
                break
        log.debug(
            "dagman.out lines processed",
            path=tracked.dagman_out,
            lines=len(lines),
            line_no=wf.line_no,
        )
        return marker

    def _end_locked(self, tracked: Tracked) -> None:
        with self._feed_lock:
            self._end_workflow(tracked)

    async def _wait(self, path: str, timeout: float, stop: asyncio.Event) -> None:
        """``wait_for_change`` that also ends at once when the daemon is told to stop."""
        if stop.is_set():
            return
        change = asyncio.ensure_future(self.wait_for_change(path, timeout))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({change, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (change, stopped):
                if not task.done():
                    task.cancel()

    async def _watched_wait(self, path: str, timeout: float) -> None:
        """The default waiter: one long-lived :class:`ChangeWatch` per followed dagman.out."""
        watch = self._watches.get(path)
        if watch is None:
            watch = self._watches[path] = ChangeWatch(
                path, polling=True if self.cfg.polling else None
            ).start()
        await watch.wait(timeout)
