"""What ``-v`` (DEBUG) and ``-vv`` (TRACE) show of a workflow's files: a Monitor observer.

DEBUG: in a replay one line per chunk of dagman.out handed to the parser (file, first line,
lines, bytes, read position, job files read before it; live, the follow loop logs its chunks) and one when a dagman.out is done (lines, bytes, job
files, seconds).  TRACE adds the kinds of the chunk's lines and of the events it made.  Never
one line per dagman.out line; at INFO each hook costs one integer comparison.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Sequence

import structlog

from monitord.core.events import StampedeEvent
from monitord.daemon import jobfiles
from monitord.daemon.tracked import Tracked
from monitord.system import loglevel

log = structlog.get_logger("monitord.progress")


class DebugLog:
    """A :class:`~monitord.daemon.parts.MonitorObserver` that logs progress at DEBUG/TRACE."""

    def __init__(self, *, chunks: bool = True) -> None:
        self.chunks = chunks  # a line per chunk (live, the follow loop logs its own)
        self._bytes: dict[int, int] = {}  # id(tracked) -> bytes of dagman.out fed so far
        self._began: dict[int, float] = {}
        self._files_at_start: dict[int, int] = {}

    def added(self, tracked: Tracked, *, opened: bool, ended: bool) -> None:
        """Nothing: the Monitor logs a workflow's start itself."""

    def fed(self, tracked: Tracked, lines: list[str]) -> None:
        level = loglevel.level()
        if level > logging.DEBUG:
            return
        key = id(tracked)
        size = sum(map(len, lines)) + len(lines)
        before = self._bytes.get(key, 0)
        if key not in self._began:
            self._began[key] = time.monotonic()
            self._files_at_start[key] = jobfiles.files_read()
        self._bytes[key] = before + size
        wf = tracked.wf
        if self.chunks:
            log.debug(
                "dagman.out chunk",
                file=os.path.basename(tracked.dagman_out),
                first_line=(wf.line_no if wf is not None else 0) + 1,
                lines=len(lines),
                bytes=size,
                position=before + size,
                job_files_read_before=jobfiles.files_read() - self._files_at_start[key],
            )

    def line_kinds(self) -> Counter[str] | None:
        """At TRACE, a counter the Monitor fills with the kinds its machine gives a chunk's
        lines as it feeds them (each line classified once); else None (nothing counted)."""
        return Counter() if loglevel.level() <= loglevel.TRACE else None

    def classified(self, tracked: Tracked, kinds: Counter[str]) -> None:
        log.trace("dagman.out line kinds", file=os.path.basename(tracked.dagman_out), **kinds)

    def published(self, events: Sequence[StampedeEvent]) -> None:
        if loglevel.level() > loglevel.TRACE:
            return
        log.trace("events to the sinks", events=len(events), **Counter(e.name for e in events))

    def ended(self, tracked: Tracked) -> None:
        if loglevel.level() > logging.DEBUG:
            return
        key = id(tracked)
        began = self._began.pop(key, time.monotonic())
        wf = tracked.wf
        log.debug(
            "dagman.out done",
            file=tracked.dagman_out,
            lines=wf.line_no if wf is not None else 0,
            bytes=self._bytes.pop(key, 0),
            job_files_read=jobfiles.files_read() - self._files_at_start.pop(key, 0),
            seconds=round(time.monotonic() - began, 3),
        )
