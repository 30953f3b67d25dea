"""A bounded pool of notification scripts on the event loop (doc §11.3, §11.4).

* At most ``max_running`` scripts run at once; the rest wait in FIFO order.
  The 5.1 reference starts a new script while ``active <= max``, so it runs
  ``max + 1``; this pool never runs more than ``max_running``.
* The action is split with shell-like quoting (:func:`shlex.split`) and run
  without a shell, in its own session (``start_new_session``), with the
  daemon's environment plus the firing's ``PEGASUS_*`` variables.
* A script still running ``timeout`` seconds after it started gets SIGTERM
  for its whole process group, then SIGKILL after ``kill_grace`` seconds; it
  is always waited for, so no zombie is left.  Killed scripts get no record
  in the notifications log (as the reference), only a daemon-log warning.
* stdout/stderr are read through pipes, keeping at most ``OUTPUT_CAP`` bytes
  of each (the reference uses temporary files; pipes leave nothing behind).
* A script that cannot be split or started, exits non-zero or is killed is
  logged; nothing here raises into the daemon.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from notifications.matching import Firing

log = structlog.get_logger(__name__)

OUTPUT_CAP = 1 << 20
# After the script exits, how long its (orphaned) children may keep our pipes open.
PIPE_LINGER = 1.0


@dataclass(frozen=True, slots=True)
class Finished:
    """A script that ran to its end: what the notifications log records."""

    firing: Firing
    status: int  # exit status; negative: killed by that signal
    stdout: str
    stderr: str
    started: float
    ended: float


Recorder = Callable[[Finished], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ScriptLoad:
    """What the status page shows of a pool: scripts running, firings waiting for a slot."""

    running: int = 0
    queued: int = 0

    def __add__(self, other: ScriptLoad) -> ScriptLoad:
        return ScriptLoad(self.running + other.running, self.queued + other.queued)


class ScriptPool:
    def __init__(
        self,
        *,
        max_running: int = 10,
        timeout: float = 0,
        cwd: str | None = None,
        record: Recorder | None = None,
        kill_grace: float = 5.0,
        base_env: dict[str, str] | None = None,
        run_as: tuple[int, int] | None = None,
    ) -> None:
        if max_running < 1:
            raise ValueError("max_running must be at least 1 (0 disables notifications)")
        self.max_running = max_running
        self.timeout = timeout
        self.cwd = cwd
        self.record = record
        self.kill_grace = kill_grace
        self.base_env = dict(os.environ if base_env is None else base_env)
        # (uid, gid) the scripts run as: a root service runs a user's scripts as that user.
        self.run_as = run_as
        self.pending: deque[Firing] = deque()
        self.running: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        # Set by abort(): runners terminate their own scripts.  Cancelling a task inside
        # create_subprocess_exec can hang CPython's subprocess setup, so tasks are not cancelled.
        self._aborting = asyncio.Event()
        self.closed = False  # after abort(): nothing new starts
        self.started = 0
        self.completed = 0
        self.failed = 0
        self.peak_running = 0

    # ------------------------------------------------------------------ queueing
    def submit(self, firing: Firing) -> None:
        """Queue one firing (event-loop thread only) and start what the bound allows."""
        if self.closed:
            _skipped(firing)
            return
        self.pending.append(firing)
        self._idle.clear()
        self._dispatch()

    def _dispatch(self) -> None:
        # Strictly below the bound (the reference's "<=" runs one script too many).
        while self.pending and len(self.running) < self.max_running:
            firing = self.pending.popleft()
            task = asyncio.get_running_loop().create_task(self._run(firing))
            self.running.add(task)
            self.peak_running = max(self.peak_running, len(self.running))
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        if task.cancelled():
            self.closed = True  # cancelled runners mean shutdown: start nothing more
        elif task.exception() is not None:
            log.error("notification runner failed", error=repr(task.exception()))
        if not self.closed:
            self._dispatch()
        if not self.running and (self.closed or not self.pending):
            self._idle.set()

    @property
    def busy(self) -> bool:
        return bool(self.pending or self.running)

    def load(self) -> ScriptLoad:
        return ScriptLoad(running=len(self.running), queued=len(self.pending))

    # ------------------------------------------------------------------ one script
    async def _run(self, firing: Firing) -> None:
        argv = self._argv(firing)
        if argv is None:
            return
        if self.closed:
            _skipped(firing)
            return
        started = time.time()
        proc = await self._start(argv, firing)
        if proc is None:
            return
        output = await self._wait(proc, firing)
        if output is not None:
            await self._finish(firing, proc, *output, started)

    def _argv(self, firing: Firing) -> list[str] | None:
        """The action split as a shell would (None, logged: it cannot be, or is empty)."""
        try:
            argv = shlex.split(firing.action)
        except ValueError as exc:
            self.failed += 1
            log.warning("cannot parse notification action", **_who(firing), error=str(exc))
            return None
        if not argv:
            self.failed += 1
            log.warning("empty notification action", **_who(firing))
            return None
        return argv

    async def _start(self, argv: list[str], firing: Firing) -> asyncio.subprocess.Process | None:
        """The script, started in a session of its own (None, logged: it cannot be)."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env={**self.base_env, **firing.env},
                start_new_session=True,
                **self._identity(),
            )
        except OSError as exc:
            self.failed += 1
            log.warning("cannot start notification executable", **_who(firing), error=exc.strerror)
            return None
        self.started += 1
        return proc

    async def _wait(
        self, proc: asyncio.subprocess.Process, firing: Firing
    ) -> tuple[bytes, bytes] | None:
        """Its stdout and stderr once it exits; None (logged) when it was terminated first
        (its timeout, or a shutdown)."""
        assert proc.stdout is not None and proc.stderr is not None
        readers = [
            asyncio.ensure_future(_read_capped(proc.stdout)),
            asyncio.ensure_future(_read_capped(proc.stderr)),
        ]
        exited = asyncio.ensure_future(proc.wait())
        aborting = asyncio.ensure_future(self._aborting.wait())
        try:
            await asyncio.wait(
                {exited, aborting},
                timeout=self.timeout if self.timeout > 0 else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not exited.done():
                await self._terminate(proc)
                self.failed += 1
                why = "shutdown" if self._aborting.is_set() else f"timeout {self.timeout} s"
                log.warning("notification terminated", **_who(firing), reason=why, pid=proc.pid)
                return None
            # Children left behind may hold the pipes open: do not wait for them forever.
            await asyncio.wait(readers, timeout=PIPE_LINGER)
        except asyncio.CancelledError:
            await self._terminate(proc)
            raise
        finally:
            for future in (exited, aborting, *readers):
                future.cancel()
        out = readers[0].result() if readers[0].done() and not readers[0].cancelled() else b""
        err = readers[1].result() if readers[1].done() and not readers[1].cancelled() else b""
        return out, err

    async def _finish(
        self,
        firing: Firing,
        proc: asyncio.subprocess.Process,
        out: bytes,
        err: bytes,
        started: float,
    ) -> None:
        """Count and log how it ended, and record it in the notifications log."""
        status = proc.returncode if proc.returncode is not None else -1
        self.completed += 1
        if status != 0:
            self.failed += 1
            log.warning("notification failed", **_who(firing), status=status)
        else:
            log.debug("notification done", **_who(firing))
        if self.record is None:
            return
        try:
            await self.record(
                Finished(
                    firing,
                    status,
                    out.decode("utf-8", errors="replace"),
                    err.decode("utf-8", errors="replace"),
                    started,
                    time.time(),
                )
            )
        except Exception as exc:  # a log failure must not stop the pool
            log.error("cannot write the notifications log", error=str(exc))

    def _identity(self) -> dict[str, Any]:
        """Drop to ``run_as`` (only root can, and only a non-root identity needs it)."""
        if self.run_as is None or os.geteuid() != 0 or self.run_as[0] == 0:
            return {}
        uid, gid = self.run_as
        return {"user": uid, "group": gid, "extra_groups": []}

    async def _terminate(self, proc: asyncio.subprocess.Process) -> None:
        """SIGTERM the script's process group, SIGKILL it after the grace time, reap."""
        _killpg(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), self.kill_grace)
        except TimeoutError:
            pass
        # Whatever is left of the group (the script, or children that ignored SIGTERM).
        _killpg(proc.pid, signal.SIGKILL)
        await proc.wait()

    # ------------------------------------------------------------------ shutdown
    async def drain(self, stop: asyncio.Event | None = None) -> bool:
        """Wait until nothing is pending or running; False if ``stop`` was set first."""
        if stop is None:
            await self._idle.wait()
            return True
        idle = asyncio.ensure_future(self._idle.wait())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({idle, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            stopped.cancel()
        return self._idle.is_set()

    async def abort(self) -> None:
        """Skip what is pending (logged) and terminate what runs; returns once all are reaped."""
        self.closed = True
        while self.pending:
            _skipped(self.pending.popleft())
        self._aborting.set()
        tasks = list(self.running)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._idle.set()


def _skipped(firing: Firing) -> None:
    log.warning(
        "pending notification skipped",
        subject=firing.subject,
        notify_event=firing.event,
        action=firing.action,
    )


def _who(firing: Firing) -> dict[str, str]:
    return {"subject": firing.subject, "notify_event": firing.event, "action": firing.action}


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    """Everything the script writes, keeping the first OUTPUT_CAP bytes (the rest is drained)."""
    kept = bytearray()
    while True:
        block = await stream.read(1 << 16)
        if not block:
            return bytes(kept)
        if len(kept) < OUTPUT_CAP:
            kept += block[: OUTPUT_CAP - len(kept)]
