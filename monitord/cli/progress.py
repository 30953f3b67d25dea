"""What ``monitord replay`` / ``monitord follow`` show on a terminal: progress, then a summary.

Command-line layer.  :class:`ProgressCounter` observes the daemon's Monitor and counts (bytes
and lines fed, events, job instances ended); :func:`run_with_progress` draws them with rich
while the daemon runs (lines/s, jobs done, percent of the dagman.out files and an ETA from
their sizes) when stderr is a terminal; :func:`summary_line` is the one line printed at the
end; :func:`working` is a spinner for a step without figures (``monitord demo``'s generator).
The counters are written by the daemon's worker threads and only read here, so they
are approximate while running and exact at the end.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from monitord.core.events import JobInstMainEnd, StampedeEvent
from monitord.daemon.monitor import Monitor, Tracked
from monitord.daemon.outputs import LocalOutputs
from monitord.daemon.undelivered import closed_by_reader
from monitord.system.secrets import mask_url_passwords as masked
from sinks.plugins.host import plugin_snapshot
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.executor import Executor
from sinks.runtime.health import SinkHealth

if TYPE_CHECKING:
    from rich.progress import Progress

REFRESH = 0.25  # seconds between two readings of the counters


class ProgressCounter:
    """Counts what a Monitor processes, for the progress display and the summary (a
    :class:`~monitord.daemon.parts.MonitorObserver`)."""

    def __init__(self, *, count_jobs: bool = True) -> None:
        self.started = time.monotonic()
        self.opened: list[Tracked] = []  # every (sub-)workflow this run follows, as found
        self.bytes_fed = 0
        self.lines_fed = 0
        self.events_total = 0
        self.instances_ended = 0
        # per workflow, its jobs with an ended instance as a dict's keys (the names are the
        # .dag's, shared): ~40 B a job where a set of (workflow, job) tuples took ~160 B.
        # Kept only when a bar or a summary will read it (``count_jobs``): a quiet run
        # kept it to its end for nothing (3.8 MB at 100,000 jobs)
        self.jobs_ended: dict[Any, dict[Any, None]] | None = {} if count_jobs else None

    def added(self, tracked: Tracked, *, opened: bool, ended: bool) -> None:
        # a workflow a snapshot restores unfinished is followed by this run too: the summary
        # of a restarted follow names it (it said "followed 0 workflows" before)
        if opened or not ended:
            self.opened.append(tracked)

    def fed(self, tracked: Tracked, lines: list[str]) -> None:
        self.lines_fed += len(lines)
        self.bytes_fed += sum(map(len, lines)) + len(lines)

    def published(self, events: Sequence[StampedeEvent]) -> None:
        self.events_total += len(events)
        jobs_ended = self.jobs_ended
        end: Any
        for end in events:
            if type(end) is JobInstMainEnd:
                self.instances_ended += 1
                if jobs_ended is None:
                    continue
                ended = jobs_ended.get(end.xwf_id)
                if ended is None:
                    ended = jobs_ended[end.xwf_id] = {}
                ended[end.job_id] = None

    def ended(self, tracked: Tracked) -> None:
        """Nothing: a workflow's end shows in the jobs and bytes it had."""

    def jobs_done(self) -> int:
        """Jobs with an ended instance: what the bar and the summary both count."""
        if self.jobs_ended is None:
            raise RuntimeError("jobs are not counted (count_jobs=False)")
        return sum(map(len, list(self.jobs_ended.values())))

    def bytes_total(self) -> int:
        """The size of every dagman.out found so far (live: it grows)."""
        total = 0
        for tracked in list(self.opened):
            try:
                total += os.path.getsize(tracked.dagman_out)
            except OSError:
                pass
        return total


def no_dagman_lines(counter: ProgressCounter) -> str | None:
    """The error for a replay whose dagman.out had no line DAGMan writes (None: it had some)."""
    opened = counter.opened
    if not opened or opened[0].wf is None:
        return None
    wf = opened[0].wf
    if wf.state is not None or wf.latest or wf.dagman_id is not None or wf.dagman_pid is not None:
        return None
    lines = wf.line_no
    what = "is empty" if lines == 0 else f"has {lines} lines, none of them DAGMan's"
    return f"{opened[0].dagman_out} {what}: nothing to replay (is it a DAGMan .dagman.out file?)"


def summary_line(monitor: Monitor[LocalOutputs], counter: ProgressCounter, *, replay: bool) -> str:
    """``replayed 3 workflows in 1.2 s: 120 jobs done, 131 job instances, 2345 events, ...``.

    Jobs are counted as the progress bar counts them (:meth:`ProgressCounter.jobs_done`).
    """
    seconds = time.monotonic() - counter.started
    workflows = [t.wf for t in counter.opened if t.wf is not None]
    parts = [
        f"{counter.jobs_done()} jobs done",
        f"{counter.instances_ended} job instances",
        f"{counter.events_total} events",
    ]
    out_of_order = sum(wf.out_of_order for wf in workflows)  # handled, but worth a look
    if out_of_order:
        noun = "state" if out_of_order == 1 else "states"
        parts.append(f"{out_of_order} job {noun} out of DAGMan's order")
    parts += _stored_parts(monitor.outputs.workers)
    jobstate = _jobstate_part(counter.opened)
    if jobstate:
        parts.append(jobstate)
    parts += [_plugin_part(p) for p in plugin_snapshot(monitor.sinks)]
    verb = "replayed" if replay else "followed"
    count = len(workflows)
    noun = "workflow" if count == 1 else "workflows"
    return f"monitord: {verb} {count} {noun} in {seconds:.1f} s: " + ", ".join(parts)


def _plugin_part(p: SinkHealth) -> str:
    """``plugin raiser (stopped): 6 delivered, 4 errors, last error: ...``."""
    hooks = p.plugin
    assert hooks is not None  # (plugin_snapshot: a plugin's health carries its hooks)
    counts = [f"{hooks.delivered} delivered"]
    for key, value in (
        ("dropped", p.dropped),
        ("spooled", p.spooled),
        ("errors", hooks.errors),
        ("restarts", hooks.restarts),
    ):
        if value:
            counts.append(f"{value} {key}")
    delivery = p.delivery_state
    state = hooks.state + (f", delivery {delivery}" if delivery not in (None, "up") else "")
    tail = f", last error: {hooks.last_error}" if hooks.last_error else ""
    return f"plugin {p.name} ({state}): " + ", ".join(counts) + tail


def _stored_parts(workers: Sequence[Executor]) -> list[str]:
    """``stored in 1 of 2 destinations (sqlite:////r/w.stampede.db; not in /tmp/e.bp)``.

    Each destination is named, its password masked; the dashboard database is best effort,
    not a destination: only its failure is mentioned (``dashboard not updated``).
    """
    whole: list[str] = []
    short: list[str] = []
    left = 0
    dashboard_failed = False
    for worker in workers:
        try:
            health = worker.health()
            dest = masked(health.destination or health.name)
        except Exception:  # noqa: BLE001 - the summary never fails a run that succeeded
            continue
        if capabilities_of(worker.sink).dashboard:
            dashboard_failed = health.disabled
            continue
        spooled = health.left_behind or health.spooled
        left += spooled
        unread = closed_by_reader([worker])
        if unread:
            dest += f": its reader closed it, {unread[0][1]} events not written"
        (short if health.disabled or spooled or unread else whole).append(dest)
    parts = []
    total = len(whole) + len(short)
    if total:
        noun = "destination" if total == 1 else "destinations"
        names = " and ".join(whole) + ("; " if whole and short else "")
        names += ("not in " + " and ".join(short)) if short else ""
        parts.append(f"stored in {len(whole)} of {total} {noun} ({names})")
    if left:
        parts.append(f"{left} events spooled for the next daemon")
    if dashboard_failed:
        parts.append("dashboard not updated")
    return parts


def _jobstate_part(opened: Sequence[Tracked]) -> str | None:
    """``jobstate.log /r/jobstate.log`` (the root workflow's; sub-workflows' sit in their dirs)."""
    paths = [t.jobstate.path for t in opened if t.jobstate is not None]
    if not paths:
        return None
    more = len(paths) - 1
    return f"jobstate.log {paths[0]}" + (
        f" (and {more} sub-workflow{'s' if more > 1 else ''}')" if more else ""
    )


async def run_with_progress(
    run: Coroutine[Any, Any, int],
    counter: ProgressCounter,
    *,
    replay: bool,
    stream: TextIO,
) -> int:
    """Await ``run`` while a progress bar on ``stream`` (a terminal) shows ``counter``'s figures.

    Whatever is written to stderr meanwhile (log lines of this process and of its
    children) is printed above the bar (:mod:`monitord.cli.terminal`).
    """
    from rich.text import Text

    from monitord.cli.terminal import stderr_lines, terminal_file

    terminal = terminal_file(stream)
    progress = _progress_bar(terminal)
    first = "replaying" if replay else "catching up"
    task = progress.add_task(first, total=None, rate=0.0, jobs=0)

    def refresh() -> None:
        total = counter.bytes_total()
        done = min(counter.bytes_fed, total)
        elapsed = max(time.monotonic() - counter.started, 1e-6)
        description = first
        if not replay and total and done >= total:
            description = "following"
        progress.update(
            task,
            description=description,
            total=total or None,
            completed=done,
            rate=counter.lines_fed / elapsed,
            jobs=counter.jobs_done(),
        )

    def above(line: str) -> None:
        progress.console.print(Text.from_ansi(line), soft_wrap=True)

    async def keep_refreshing() -> None:
        while True:
            refresh()
            await asyncio.sleep(REFRESH)

    try:
        with progress, stderr_lines(above):
            refresher = asyncio.create_task(keep_refreshing())
            try:
                return await run
            finally:
                refresher.cancel()
                refresh()
    finally:
        terminal.close()


def _progress_bar(terminal: TextIO) -> Progress:
    """The bar's columns: bytes done, lines per second, jobs done, time elapsed and left."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]:>9,.0f} lines/s"),
        TextColumn("{task.fields[jobs]:>7,} jobs done"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(file=terminal),
        transient=True,  # the summary line replaces it
        redirect_stdout=False,  # stdout may be an events output (-d -)
        redirect_stderr=False,  # caught below, at the descriptor
    )


@contextmanager
def working(description: str, stream: TextIO, *, show: bool) -> Iterator[None]:
    """While inside, a spinner with ``description`` and the time elapsed on ``stream`` (a
    terminal), for a step that reports no figures of its own; nothing when ``show`` is false."""
    if not show:
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from monitord.cli.terminal import stderr_lines, terminal_file

    terminal = terminal_file(stream)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(file=terminal),
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,  # caught below, at the descriptor: printed above the spinner
    )

    def above(line: str) -> None:
        progress.console.print(Text.from_ansi(line), soft_wrap=True)

    try:
        with progress, stderr_lines(above):
            progress.add_task(description, total=None)
            yield
    finally:
        terminal.close()
