"""Crash resume: the part of :class:`~monitord.daemon.monitor.Monitor` that takes snapshots of
everything it follows and restores them (what a snapshot is and where it is kept:
:mod:`monitord.daemon.resume`).  Only the service sets ``resume_store``; the per-workflow daemon
recovers from a crash as the reference does (doc §4.7).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import structlog

from monitord.core.workflow import WorkflowContext
from monitord.daemon.jobstate_log import JobstateLog
from monitord.daemon.resume import (
    ResumePoint,
    ResumeStore,
    Snapshot,
    SnapshotClock,
    TrackedPoint,
    describe,
    dumps,
)
from monitord.daemon.tracked import Tracked

log = structlog.get_logger(__name__)


class Resuming:
    """Snapshots and restores; the Monitor holds the state it works on (declared here)."""

    ctx: WorkflowContext
    notifier: Any
    pending: deque[Tracked]
    done: list[Tracked]
    seen_dagman_outs: set[str]
    seen_dirs: dict[str, tuple[str, str | None]]
    root_uuid: str | None
    _feed_lock: threading.Lock
    resume_store: ResumeStore | None
    resumed: ResumePoint | None
    marks_stream: str | None
    event_counts: dict[str, int]
    tracked_all: list[Tracked]
    _snapshot_clock: SnapshotClock
    _fresh_snapshot: Snapshot | None
    _snapshot_failed = False  # the last write failed (logged once)

    def _resume_point_for(self, dagman_out: str, root_uuid: str) -> ResumePoint | None:
        """The service's snapshot of this workflow, if the files on disk still agree with it."""
        if self.resume_store is None:
            return None
        point = self.resume_store.load(dagman_out, root_uuid)
        if point is None:
            return None
        why = point.problem()
        if why is not None:
            log.warning("cannot resume from the snapshot, recovering from line 1", reason=why)
            return None
        return point

    def _restore(self, point: ResumePoint) -> None:
        """Every workflow of the snapshot, as it was then; the followers go on from there."""
        self.resumed = point
        self.seen_dagman_outs = set(point.seen_dagman_outs)
        self.seen_dirs = dict(point.seen_dirs)
        self.event_counts = dict(point.counts)
        for p in point.tracked:
            p.wf.attach(self.ctx)
            jobstate = None
            if not p.ended and p.jobstate_path is not None:
                jobstate = JobstateLog(p.jobstate_path)
                jobstate.cut_back(p.jobstate_size)
                jobstate.open()
            tracked = Tracked(
                p.wf, p.run_dir, p.dagman_out, jobstate, p.started_at, p.files, p.exit_code,
                offset=p.offset,
            )  # fmt: skip
            self._adopt(tracked)
            if p.ended:
                self.done.append(tracked)
                continue
            if self.notifier is not None:  # scripts already run stay suppressed (doc §11.4)
                self.notifier.open_workflow(
                    p.run_dir, p.wf.bd, p.dagman_out, p.files.get("recover")
                )
            self.pending.append(tracked)
        log.info("resuming from a snapshot, not from line 1", **describe(point))

    def _adopt(self, tracked: Tracked) -> None:
        """A (sub-)workflow joins the Monitor (opened, or restored from a snapshot)."""
        self.tracked_all.append(tracked)

    def _take_snapshot(self) -> None:
        """``_feed_lock`` held, between two chunks: a snapshot if one is due (the service)."""
        if self.resume_store is None or self.root_uuid is None or not self.tracked_all:
            return
        if not self._snapshot_clock.due():
            return
        started = time.monotonic()
        points = []
        for t in self.tracked_all:
            if t.wf is None:
                continue
            js = t.jobstate
            points.append(
                TrackedPoint(
                    t.wf, t.run_dir, t.dagman_out, dict(t.files), t.started_at, t.exit_code,
                    t.offset, js.path if js is not None else None,
                    js.size() if js is not None and not t.wf.finished else 0,
                    ended=t.wf.finished,
                )
            )  # fmt: skip
        point = ResumePoint(
            self.root_uuid,
            self.tracked_all[0].dagman_out,
            self.marks_stream or "",
            dict(self.event_counts),
            points,
            set(self.seen_dagman_outs),
            dict(self.seen_dirs),
        )
        try:
            data = dumps(point)
        except Exception as exc:  # never stop following for a snapshot: recovery still works
            if not self._snapshot_failed:
                log.warning("cannot take a resume snapshot", error=repr(exc))
            self._snapshot_failed = True
        else:
            self._fresh_snapshot = Snapshot(point.root_dagman_out, data)
        self._snapshot_clock.taken(started)

    def _write_snapshot(self, snapshot: Snapshot) -> None:
        """The checkpointer's turn: the sinks hold everything the snapshot covers."""
        store = self.resume_store
        root = self.tracked_all[0].wf if self.tracked_all else None
        if store is None or root is None or root.finished:
            return  # ended in order meanwhile: nothing to resume
        try:
            store.write(snapshot)  # not under the feed lock: followers go on meanwhile
        except OSError as exc:  # the next start resumes from an older one, or recovers
            if not self._snapshot_failed:  # once, not every two seconds
                log.warning(
                    "cannot write the resume snapshot", path=store.directory, error=str(exc)
                )
            self._snapshot_failed = True
            return
        self._snapshot_failed = False
        with self._feed_lock:
            if root.finished:  # it ended while the file was written
                store.remove(snapshot.root_dagman_out)
