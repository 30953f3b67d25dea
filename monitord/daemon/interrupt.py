"""Ctrl-C or SIGTERM during a replay: stop at once, keep the database sound, say so.

A replay rebuilds every output from line 1 (its database, jobstate.log and event files are
rotated or recreated), so an interrupted one owes nothing to the next run: the batch a sink is
writing commits (a transaction is never cut short), the batches still queued are dropped, no
new line is read, and one line says what was written and that the same command starts over.
The exit status is the shell's for the signal: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

import structlog

from monitord.daemon.errors import MonitordError
from monitord.system.secrets import mask_url_passwords
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.health import destination_of

if TYPE_CHECKING:
    from monitord.daemon.monitor import Monitor
    from monitord.daemon.outputs import LocalOutputs

log = structlog.get_logger(__name__)

SIGNALS = (signal.SIGINT, signal.SIGTERM)
STATUSES = frozenset(128 + sig for sig in SIGNALS)


class ReplayInterrupted(MonitordError):
    """A replay stopped by a signal: its line (no "error:"), status 128 + the signal's number."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message, exit_code=128 + signum)
        self.signum = signum


class ReplayStop:
    """While installed, SIGINT/SIGTERM stop the replay of ``monitor``: ``event`` is set (the
    read loop takes no further chunk) and every sink is interrupted."""

    def __init__(self, monitor: Monitor[LocalOutputs]) -> None:
        self.monitor = monitor
        self.event = asyncio.Event()
        self.signum: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> None:
        self._loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            self._loop.add_signal_handler(sig, self._on_signal, sig)

    def remove(self) -> None:
        if self._loop is not None:
            for sig in SIGNALS:
                self._loop.remove_signal_handler(sig)
            self._loop = None

    def _on_signal(self, signum: int) -> None:
        if self.signum is None:
            self.signum = signum
            log.info("replay interrupted, stopping", signal=signal.Signals(signum).name)
        self.event.set()
        self.interrupt_sinks()

    def interrupt_sinks(self) -> None:
        """Each sink ends after the batch in hand (none, if not built yet: see run_replay)."""
        for worker in self.monitor.outputs.workers:
            worker.interrupt()

    def error(self) -> ReplayInterrupted:
        """The one line for the user, once the sinks have closed."""
        assert self.signum is not None
        name = signal.Signals(self.signum).name
        written = [
            f"{worker.events_written} events to {mask_url_passwords(destination_of(worker.sink))}"
            for worker in self.monitor.outputs.workers
            if not capabilities_of(worker.sink).dashboard
        ]
        what = f"wrote {', '.join(written)} before stopping; " if written else ""
        return ReplayInterrupted(
            f"replay interrupted by {name}: {what}its outputs are incomplete. "
            "Run the same command again: a replay starts its outputs over from the beginning",
            self.signum,
        )
