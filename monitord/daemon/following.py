"""Live mode: following every tracked workflow's dagman.out until DAGMan is done.

:class:`FollowLoop` is the Monitor's follow loop, a collaborator of its own: it starts a
follower task per (sub-)workflow as they are queued, each waiting for lines (through the
Monitor's :class:`~monitord.daemon.parts.ChangeWaiter`), having them fed (in a worker thread)
and checkpointed once the sinks hold what they produced; and it ends each workflow in order
when its follower is done.  The per-workflow daemon and the service run this same loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import structlog

from monitord.core.dagman import BANNER_RULE
from monitord.core.workflow import Workflow
from monitord.daemon.checkpoint import Checkpointer
from monitord.daemon.errors import MonitordError
from monitord.daemon.parts import ChangeWaiter, MonitorObserver
from monitord.daemon.registry import Registry
from monitord.daemon.resume import Snapshot
from monitord.daemon.statefiles import pid_alive
from monitord.daemon.tail import READ_SIZE, LineFollower
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
# A follower that caught up reads again no sooner than this after its last read: at 5,000
# lines/s a chunk carries ~500 lines, not the ~50 a wake-up every 10 ms would bring, so the
# per-chunk costs (the worker-thread hop, a sink flush and commit, monitord.recover's
# rewrite) are paid ten times less often; a line waits at most this much longer.
CHUNK_PERIOD = 0.1
# A follower hands its chunks' events to the sinks (and asks for a checkpoint) at most this
# often while lines keep coming, at once when it caught up and nothing new came (or BATCH
# events are pending, or a snapshot is due: Monitor.feed_chunk): each publish is a database
# transaction (an fsync on a live SQLite file), a sink flush and monitord.recover's rewrite,
# paid ~2 times a second at a steady rate instead of with every chunk.
PUBLISH_PERIOD = 0.5


def poll_interval(count: int) -> float:
    """The reference's back-off (1 s, 5 s, 30 s, capped at 10 s); inotify usually wakes us first."""
    if count < 5:
        return 1.0
    return 5.0 if count < 50 else 10.0


def restart_marker(lines: list[str]) -> bool | None:
    """True/False when the chunk's last DAGMan start/exit line is a start/an exit, else None.

    The banner's first line (a rule of asterisks, only ever written at a DAGMan start) counts
    as the start: a chunk may end right after it, before the "STARTING UP" line is written.
    """
    for line in reversed(lines):
        if "ING " not in line and "*" not in line:  # neither marker text nor a rule: most lines
            continue
        if "EXITING WITH STATUS" in line:
            return False
        if "(CONDOR_DAGMAN) STARTING UP" in line or BANNER_RULE.match(line):
            return True
    return None


class FollowHost(Protocol):
    """The Monitor's side of the loop; the methods run in worker threads."""

    shutting_down: bool  # a service stop: no orderly end, monitord.recover stays

    def feed_chunk(
        self, tracked: Tracked, lines: list[str], offset: int, publish: bool
    ) -> tuple[Snapshot | None, bool]:
        """Feed ``lines`` (``offset``: the dagman.out bytes fed then); their events go to the
        sinks when ``publish`` (or when the host must).  A snapshot if one is due, and whether
        every event so far was published."""

    def end_workflow(self, tracked: Tracked) -> None:
        """End ``tracked`` in order (jobstate.log, monitord.info/.done, recover removed)."""

    def stop_workflow(self, tracked: Tracked) -> None:
        """Leave ``tracked`` for a successor: only its jobstate.log is closed."""

    def flush(self) -> None:
        """Every sink holds (or has spooled) what was published."""

    def checkpoint(self, target: Tracked | Snapshot, line_no: int) -> None:
        """After a flush: ``target``'s monitord.recover at ``line_no``, or a snapshot."""


class FollowLoop:
    """Follows every queued workflow of ``registry`` until each has ended."""

    def __init__(
        self,
        host: FollowHost,
        registry: Registry,
        waiter: ChangeWaiter,
        observers: Sequence[MonitorObserver] = (),
        *,
        feed_thread: bool = True,
    ) -> None:
        self.host = host
        self.registry = registry
        self.waiter = waiter
        self.observers = tuple(observers)
        self.followed: dict[str, Workflow] = {}  # wf_uuid -> workflow, for sub-workflows
        self._checkpoints: Checkpointer | None = None
        # Every chunk is fed on this one thread, as a replay feeds on its parser thread: the
        # machine's long-lived allocations then come from one glibc heap, not from whichever
        # of the default executor's threads (each with a heap of its own) took the chunk,
        # whose freed pages, scattered among live objects, stayed in RSS (bench/README.md,
        # "Issue 30, sixth session: live30c").  Feeding holds the Monitor's feed lock anyway.
        # ``feed_thread=False`` (the service: one Monitor per workflow, its threads bounded by
        # ``limits.worker_threads``): the loop's default executor, as before.
        self._feed_thread_wanted = feed_thread
        self._feeder: ThreadPoolExecutor | None = None

    async def run(self, stop: asyncio.Event) -> None:
        """Follow every queued workflow (sub-workflows as they are queued) until each ended."""
        loop = asyncio.get_running_loop()
        new_work = asyncio.Event()

        def wake() -> None:  # from a worker thread
            try:
                loop.call_soon_threadsafe(new_work.set)
            except RuntimeError:  # the loop is gone: nobody waits any more
                pass

        self.registry.wake = wake
        tasks: dict[asyncio.Task[None], Tracked] = {}
        try:
            while True:
                new_work.clear()
                while self.registry.pending:
                    tracked = self.registry.pending.popleft()
                    if tracked.wf is not None:
                        self.followed[tracked.wf.uuid] = tracked.wf  # sub-workflows' parent
                    self.waiter.watch(tracked.dagman_out)
                    tasks[asyncio.create_task(self._follow_one(tracked, stop))] = tracked
                if not tasks:
                    return
                waker = asyncio.ensure_future(new_work.wait())
                done, _ = await asyncio.wait([*tasks, waker], return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
                for task in [t for t in tasks if t in done]:
                    await self._finish(tasks.pop(task), task, stop)
        finally:
            self.registry.wake = None
            for task in tasks:
                task.cancel()

    async def checkpoint_now(self, snapshot: Snapshot) -> None:
        """Write ``snapshot`` once the sinks hold what it covers, and wait for that."""
        self._checkpointer().request(SNAPSHOT_KEY, snapshot, 0)
        await self._checkpointer().barrier()

    async def close(self) -> None:
        if self._checkpoints is not None:
            await self._checkpoints.close()
        if self._feeder is not None:
            self._feeder.shutdown(wait=False)
            self._feeder = None

    def _feed_thread(self) -> ThreadPoolExecutor | None:
        if self._feeder is None and self._feed_thread_wanted:
            self._feeder = ThreadPoolExecutor(1, thread_name_prefix="monitord-feed")
        return self._feeder

    @staticmethod
    def _outcome(tracked: Tracked, task: asyncio.Task[Any]) -> None:
        """A daemon-ending error propagates; any other failure ends only that workflow (exit 1)."""
        exc = task.exception()
        if exc is not None:
            if isinstance(exc, MonitordError):
                raise exc
            log.error("workflow follower failed", run_dir=tracked.run_dir, error=repr(exc))
            tracked.exit_code = 1

    async def _finish(
        self, tracked: Tracked, task: asyncio.Task[None], stop: asyncio.Event
    ) -> None:
        """One workflow's follower ended: record its outcome and end it in order."""
        for observer in self.observers:
            observer.ended(tracked)
        self._outcome(tracked, task)
        if self.host.shutting_down:
            # Service stop: no orderly end; monitord.recover stays, and the successor resumes
            # from the last snapshot (Monitor.follow_all), or re-processes from line 1.
            if tracked.jobstate is not None:
                await asyncio.to_thread(self.host.stop_workflow, tracked)
        else:
            if stop.is_set() and tracked.wf is not None and tracked.wf.monitord_exit == 0:
                tracked.wf.monitord_exit = 1
            await asyncio.to_thread(self.host.end_workflow, tracked)
        self.registry.done.append(tracked)

    async def _follow_one(self, tracked: Tracked, stop: asyncio.Event) -> None:
        try:
            await self._follow_lines(tracked, stop)
        finally:
            # Whoever ends the workflow next finds its events in every sink; the watch ends
            # meanwhile (its thread notices the stop within a tail.STEP_MS).
            await asyncio.gather(
                self.waiter.unwatch(tracked.dagman_out), self._checkpointer().barrier()
            )

    def _checkpointer(self) -> Checkpointer:
        if self._checkpoints is None:
            self._checkpoints = Checkpointer(self.host.flush, self.host.checkpoint).start()
        return self._checkpoints

    async def _follow_lines(self, tracked: Tracked, stop: asyncio.Event) -> None:
        wf = tracked.wf
        assert wf is not None
        path = tracked.dagman_out
        follower = LineFollower(path, offset=tracked.offset)
        if not await self._appeared(follower, tracked, stop):
            return
        restarting = False  # a DAGMan start line came after the last exit line
        idle = 0
        loop = asyncio.get_running_loop()
        read_at = -CHUNK_PERIOD
        published_at = loop.time()
        owed = False  # lines fed whose events wait for the next publish
        while not stop.is_set():
            # Everything on disk is taken at once: lines that arrived while the previous
            # chunk was being processed make one chunk.
            lines = await follower.read_lines()
            if lines or owed:
                publish = not lines or loop.time() - published_at >= PUBLISH_PERIOD
                if lines:
                    read_at = loop.time()
                    idle = 0
                marker, published = await self._feed_chunk(tracked, lines, follower, publish)
                if marker is not None:
                    restarting = marker
                owed = not published
                if published:
                    published_at = loop.time()
                pause = read_at + CHUNK_PERIOD - loop.time()
                if lines and pause > 0 and not follower.pending_at_least(READ_SIZE):
                    await self._pause(pause, stop)  # caught up: let the next chunk gather
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

    async def _feed_chunk(
        self, tracked: Tracked, lines: list[str], follower: LineFollower, publish: bool
    ) -> tuple[bool | None, bool]:
        """One chunk fed on the feed thread, its snapshot and checkpoint asked for once the
        sinks hold what they cover; the DAGMan restart marker (None: no start or exit line)
        and whether its events (and those owed) were published."""
        wf = tracked.wf
        assert wf is not None
        args = (tracked, lines, follower.offset, publish)
        chunk = functools.partial(contextvars.copy_context().run, self._chunk, *args)
        # as asyncio.to_thread does, on the one feed thread
        loop = asyncio.get_running_loop()
        snapshot, marker, published = await loop.run_in_executor(self._feed_thread(), chunk)
        if snapshot is not None:  # written once the sinks hold what it covers
            self._checkpointer().request(SNAPSHOT_KEY, snapshot, 0)
        if published:
            # Checkpointed once every sink holds what the lines produced; meanwhile the next
            # chunk is parsed (the flush and the parsing overlap).
            self._checkpointer().request(tracked.dagman_out, tracked, wf.line_no)
        return marker, published

    async def _appeared(
        self, follower: LineFollower, tracked: Tracked, stop: asyncio.Event
    ) -> bool:
        """Wait for the dagman.out to exist; False (logged) when it never will, or on stop."""
        wf = tracked.wf
        assert wf is not None
        path = tracked.dagman_out
        parent = self.followed.get(wf.parent_uuid) if wf.parent_uuid else None
        waits = 0
        while not follower.exists():
            if stop.is_set():
                return False
            if parent is not None and parent.dagman_exit is not None and parent.state == "end":
                # The parent's DAGMan has exited, so every sub-DAGMan it ran has too: a
                # dagman.out that is not there now never will be (the sample lacks it).
                log.warning("sub-workflow dagman.out never made an appearance", path=path)
                return False
            waits += 1
            if waits > APPEAR_POLLS:
                log.warning("dagman.out never made an appearance", path=path)
                return False
            await self._wait(path, poll_interval(waits), stop)
        return True

    def _chunk(
        self, tracked: Tracked, lines: list[str], offset: int, publish: bool
    ) -> tuple[Snapshot | None, bool | None, bool]:
        """Worker thread: feed a chunk (none: publish what is pending); a snapshot if one is
        due, its restart marker, and whether its events were published."""
        snapshot, published = self.host.feed_chunk(tracked, lines, offset, publish)
        marker = restart_marker(lines)
        log.debug(
            "dagman.out lines processed",
            path=tracked.dagman_out,
            lines=len(lines),
            line_no=tracked.wf.line_no if tracked.wf is not None else 0,
            published=published,
        )
        return snapshot, marker, published

    @staticmethod
    async def _pause(seconds: float, stop: asyncio.Event) -> None:
        """Sleep ``seconds``, or less if the daemon is told to stop meanwhile."""
        try:
            await asyncio.wait_for(stop.wait(), seconds)
        except TimeoutError:
            pass

    async def _wait(self, path: str, timeout: float, stop: asyncio.Event) -> None:
        """The waiter's wait that also ends at once when the daemon is told to stop."""
        if stop.is_set():
            return
        change = asyncio.ensure_future(self.waiter.wait(path, timeout))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({change, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (change, stopped):
                if not task.done():
                    task.cancel()
