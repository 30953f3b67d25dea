"""The parts of a :class:`~monitord.daemon.monitor.Monitor` that vary, as small protocols.

The per-workflow daemon, the service and the command line run the same Monitor; what differs
is handed to it as objects, never as subclasses overriding its private steps:

- :class:`Outputs`: which sink set it publishes to (the daemon's own executors:
  :class:`~monitord.daemon.outputs.LocalOutputs`; the service's shared lanes:
  ``monitord.service.workflows.LaneOutputs``);
- :class:`ChangeWaiter`: how it waits for new dagman.out bytes (the daemon: a
  :class:`~monitord.daemon.tail.ChangeWatch` per file, :class:`WatchWaiter`; the service: its one
  file watcher);
- :class:`MonitorObserver`: what is counted per chunk and per published batch (progress bars,
  the service's status page);
- whether and how it snapshots for a crash resume: :class:`~monitord.daemon.resuming.CrashResume`;
- :class:`LineRecords`: a replay's dagman.out lines classified elsewhere (``--read-ahead``'s
  worker, :class:`~monitord.daemon.readahead.ReadAhead`), or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from monitord.core.events import StampedeEvent
from monitord.core.linerecords import Record
from monitord.daemon.tail import ChangeWatch
from monitord.daemon.tracked import Tracked
from sinks.runtime.base import Sink
from sinks.runtime.spool import SpoolSettings


class SinkSetLike(Protocol):
    """What the Monitor calls on a sink set (``SinkSet``, the service's ``SharedSinkSet``, and
    either with the event plugins beside it)."""

    def __bool__(self) -> bool: ...

    def start(self) -> None: ...

    def publish(self, batch: Sequence[StampedeEvent]) -> None: ...

    def flush(self) -> None:
        """Every batch published so far is in its sink or durably spooled."""

    def close(self) -> None:
        """Deliver what is left (as the policy allows), then close every sink."""


class Outputs(Protocol):
    """Which sink set a Monitor publishes to, and what it knows of that set's executors."""

    def sink_set(self, sinks: list[Sink], spool: SpoolSettings | None) -> SinkSetLike:
        """The executors for ``sinks`` (built once, by ``Monitor.start``)."""

    async def settle(self) -> None:
        """Before ``close``: wait, holding no worker thread, until what was published is
        delivered or spooled (a no-op where ``close`` itself waits)."""

    def forget_marks(self, root_uuid: str) -> None:
        """The workflow ended in order: every sink that delivered all its events drops its
        delivery marks (worker thread, after ``close``)."""


class ChangeWaiter(Protocol):
    """How the follow loop waits for a dagman.out to grow (or appear)."""

    def watch(self, path: str) -> None:
        """Following ``path`` starts."""

    async def wait(self, path: str, timeout: float) -> None:
        """Return when ``path`` may have changed, or after ``timeout`` seconds."""

    async def unwatch(self, path: str) -> None:
        """Following ``path`` ended."""

    async def close(self) -> None: ...


class MonitorObserver(Protocol):
    """Told what the Monitor processes; called from worker threads, must be cheap."""

    def added(self, tracked: Tracked, *, opened: bool, ended: bool) -> None:
        """A (sub-)workflow joined: ``opened`` now (else restored from a snapshot), ``ended``
        already (restored after its end)."""

    def fed(self, tracked: Tracked, lines: list[str]) -> None:
        """``lines`` of ``tracked``'s dagman.out are about to be fed to its machine."""

    def published(self, events: Sequence[StampedeEvent]) -> None:
        """``events`` go to the sinks now."""

    def ended(self, tracked: Tracked) -> None:
        """Following ``tracked`` ended (before it is ended in order, or left for a successor)."""


class LineRecords(Protocol):
    """The records of a chunk of a dagman.out's lines, classified ahead of the parser."""

    def records(self, path: str, place: tuple[int, int, int, int]) -> list[Record] | None:
        """The records of the chunk at ``place`` (the file's inode, the chunk's first line's
        number, its line count, its size) of ``path``; None: none, the parser classifies."""
        ...


class MarkKeeper(Protocol):
    """A sink whose capabilities say it keeps delivery marks (``keeps_marks``)."""

    def forget_marks(self, root_uuid: str) -> None: ...


class WatchWaiter:
    """The per-workflow daemon's waiter: one long-lived ChangeWatch per followed dagman.out
    (inotify, or polling when ``polling``), made on the first wait."""

    def __init__(self, *, polling: bool | None = None) -> None:
        self.polling = polling
        self._watches: dict[str, ChangeWatch] = {}

    def watch(self, path: str) -> None:
        """Nothing yet: a file that never needs a wait never gets a watch."""

    async def wait(self, path: str, timeout: float) -> None:
        watch = self._watches.get(path)
        if watch is None:
            watch = self._watches[path] = ChangeWatch(path, polling=self.polling).start()
        await watch.wait(timeout)

    async def unwatch(self, path: str) -> None:
        watch = self._watches.pop(path, None)
        if watch is not None:
            await watch.close()

    async def close(self) -> None:
        for path in list(self._watches):
            await self.unwatch(path)
