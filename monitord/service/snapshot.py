"""What the service reports: one status line per followed (sub-)workflow, and its sinks."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from monitord.service.jobcounts import job_counts, percent_done
from monitord.service.scan import RootScanner
from monitord.service.status import (
    ServiceSnapshot,
    WatchedRootStatus,
    WorkflowStatus,
    plugin_status,
)
from monitord.service.workflows import Followed, TrackedStats
from notifications.pool import ScriptLoad
from sinks.plugins.host import plugin_snapshot


def service_snapshot(
    followed: Mapping[str, Followed],
    pool: Any,
    started_at: float,
    scanners: Sequence[RootScanner] = (),
) -> ServiceSnapshot:
    """The status page's and ``monitord status``'s view of every followed workflow and sink,
    and of the watched roots (as their last scan found them: no file system access here)."""
    now = time.time()
    workflows = [status for item in followed.values() for status in workflow_statuses(item, now)]
    sinks = [] if pool is None else pool.health()
    plugins = [
        plugin_status(item.wf_uuid or item.dagman_out, snap)
        for item in followed.values()
        if item.monitor is not None
        for snap in plugin_snapshot(item.monitor.sinks)
    ]
    scripts = notification_load(followed)
    return ServiceSnapshot(
        started_at=started_at,
        workflows=workflows,
        sinks=sinks,
        notifications_running=scripts.running,
        notifications_queued=scripts.queued,
        plugins=plugins,
        roots=[root_status(s, followed) for s in scanners],
    )


def workflow_statuses(item: Followed, now: float) -> list[WorkflowStatus]:
    """A followed root workflow and its sub-workflows, one line each (the root's first: it
    carries the Monitor's event rate, total and undelivered events)."""
    monitor = item.monitor
    if monitor is None or not monitor.stats:
        return [
            WorkflowStatus(
                wf_uuid=item.wf_uuid or "",
                dagman_out=item.dagman_out,
                run_dir=item.run_dir,
                state="starting",
                jobs={},
                percent_done=0.0,
                lag_bytes=0,
                lag_seconds=0.0,
                events_per_second=0.0,
                events_total=0,
            )
        ]
    rate = monitor.rate.rate()
    out = []
    for index, stats in enumerate(monitor.stats):
        status = _tracked_status(item, stats, now)
        if index == 0:
            status.events_per_second = rate
            status.events_total = monitor.events_total
            status.zone_warnings = monitor.zone_warnings
            status.undelivered = undelivered_events(item)
            if status.undelivered and stats.ended and item.exit_code is None:
                status.state = "delivering"  # ended, but not all its events are in the sinks yet
        out.append(status)
    return out


def _tracked_status(item: Followed, stats: TrackedStats, now: float) -> WorkflowStatus:
    """One (sub-)workflow: its jobs, state and how far behind its dagman.out it is."""
    tracked = stats.tracked
    wf = tracked.wf
    try:
        st = os.stat(tracked.dagman_out)
        size, mtime = st.st_size, st.st_mtime
    except OSError:
        size, mtime = 0, now
    lag = max(0, size - tracked.offset) if not stats.ended else 0  # bytes not fed yet
    counts = job_counts(wf) if wf is not None else {}
    return WorkflowStatus(
        wf_uuid=wf.uuid if wf is not None else (item.wf_uuid or ""),
        dagman_out=tracked.dagman_out,
        run_dir=tracked.run_dir,
        state=_state(wf, stats.ended, item.stop.is_set()),
        jobs=counts,
        percent_done=percent_done(counts) if counts else 0.0,
        lag_bytes=lag,
        lag_seconds=max(0.0, now - mtime) if lag else 0.0,
        events_per_second=0.0,
        events_total=0,
        out_of_order=wf.out_of_order if wf is not None else 0,
    )


def root_status(scanner: RootScanner, followed: Mapping[str, Followed]) -> WatchedRootStatus:
    """A watched root: listed at its last scan?  How many followed root workflows below it?"""
    below = (scanner.resolved or scanner.root).rstrip(os.sep) + os.sep
    count = sum(1 for key in followed if key.startswith(below))  # keys: real paths
    problem = scanner.problem if scanner.scanned else "not scanned yet"
    return WatchedRootStatus(
        root=scanner.root, exists=problem is None, workflows=count, problem=problem
    )


def notification_load(followed: Mapping[str, Followed]) -> ScriptLoad:
    """Notification scripts running and waiting, over every followed workflow."""
    total = ScriptLoad()
    for item in followed.values():
        notifier = item.monitor.notifier if item.monitor is not None else None
        if notifier is not None:
            total += notifier.load()
    return total


def undelivered_events(item: Followed) -> int:
    """Events of the workflow its sinks have not taken yet (spooled or queued)."""
    return item.monitor.outputs.undelivered if item.monitor is not None else 0


def _state(wf: Any, ended: bool, stopping: bool) -> str:
    if wf is None:
        return "waiting"
    if ended or wf.dagman_exit is not None:
        if wf.dagman_exit is None:
            return "ended"
        return "success" if wf.dagman_exit == 0 else "failure"
    if stopping:
        return "stopping"
    return "running"
