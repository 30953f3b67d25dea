"""Crash resume: the part of :class:`~monitord.daemon.monitor.Monitor` that decides between
resuming and recovering, takes snapshots of everything it follows and restores them (what a
snapshot is: :mod:`monitord.daemon.resume`).  ``resume_store`` is set by the service (its state
directory) and by the live daemon (the user's, :mod:`monitord.daemon.statedir`); a replay has
none.  Without a usable snapshot a crash is recovered from as the reference does (doc §4.7).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Any

import structlog

from monitord.core.workflow import WorkflowContext
from monitord.daemon.config import MonitorConfig
from monitord.daemon.jobstate_log import JobstateLog
from monitord.daemon.resume import (
    ResumePoint,
    ResumeStore,
    Snapshot,
    SnapshotClock,
    TrackedPoint,
    describe,
    dumps,
    new_stream,
    process_id,
    wait_gone,
)
from monitord.daemon.statefiles import read_info, state_path
from monitord.daemon.tracked import Tracked
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.marks import line_one_stream

log = structlog.get_logger(__name__)


class Resuming:
    """Snapshots and restores; the Monitor holds the state it works on (declared here)."""

    cfg: MonitorConfig
    ctx: WorkflowContext
    notifier: Any
    sinks: Any
    restart: bool
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
    resume_off = "no crash-resume snapshots"  # why, when ``resume_store`` is None
    _helpers: tuple[tuple[int, int], ...] | None = None

    def _build_outputs(self, run_dir: str, bd: Any) -> list[Any]:
        raise NotImplementedError  # the Monitor's

    def _resume_or_recover(self, run_dir: str, dagman_out: str, bd: Any) -> tuple[Any, list[Any]]:
        """Start-up after a crash (``monitord.recover`` left): the snapshot to resume from, or
        None and ``restart`` set (recover from line 1, said in one log line with the reason);
        and the events outputs, built for either."""
        recover = state_path(
            run_dir, "monitord.recover", output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
        )
        crashed = not self.cfg.replay and os.path.exists(recover)
        point, why = None, ""
        if crashed:
            point, why = self._resume_point_for(dagman_out, bd.wf_uuid)
        self.restart = self.cfg.replay or (crashed and point is None)
        sinks = self._build_outputs(run_dir, bd) if self.cfg.events else []
        stuck = [getattr(s, "name", "?") for s in sinks if not capabilities_of(s).resumes]
        if point is not None and stuck:
            point, self.restart = None, True
            why = "an output cannot resume from a snapshot: " + ", ".join(stuck)
            sinks = self._build_outputs(run_dir, bd)
        if crashed and point is None:
            log.warning("monitord.recover found: recovering from line 1", run_dir=run_dir, why=why)
        if point is not None:
            left = wait_gone(point.helpers)  # before any sink reads its delivery marks
            if left:
                log.warning("the crashed daemon's sink processes are still running", pids=left)
        if self.resume_store is not None:
            self.marks_stream = point.stream if point is not None else self._new_stream(run_dir, bd)
        return point, sinks

    def _new_stream(self, run_dir: str, bd: Any) -> str:
        """A start from line 1 (first start, recovery) counts in the root workflow's line-1
        stream, so events produced again carry the numbers they had (sinks/runtime/marks.py);
        one that goes on where a clean stop left off (``monitord.info``) counts in a new one."""
        info = state_path(
            run_dir, "monitord.info", output_dir=self.cfg.output_dir, wf_uuid=bd.wf_uuid
        )
        if self.restart or not read_info(info).get("monitord_dagman_out_sequence"):
            return line_one_stream(bd.wf_uuid)
        return new_stream()

    def _resume_point_for(self, dagman_out: str, root_uuid: str) -> tuple[ResumePoint | None, str]:
        """The snapshot of this workflow if the files on disk still agree with it; else why not."""
        if self.resume_store is None:
            return None, self.resume_off
        return self.resume_store.load_why(dagman_out, root_uuid)

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
        self._record_helpers(point)

    def _record_helpers(self, point: ResumePoint) -> None:
        """The snapshot resumed from names this daemon's sink processes at once: killed before
        its own first snapshot, its successor waits for them too (an unchanged snapshot)."""
        if self.resume_store is None:
            return
        point.helpers = self._helper_ids()
        try:
            self.resume_store.write(Snapshot(point.root_dagman_out, dumps(point)))
        except Exception as exc:  # the older snapshot stays: still a valid one
            log.warning("cannot rewrite the resume snapshot", error=repr(exc))

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
            helpers=self._helper_ids(),
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

    def _helper_ids(self) -> tuple[tuple[int, int], ...]:
        """This daemon's sink processes (a resumed successor waits for them to be gone)."""
        if self._helpers is None:
            pids = [getattr(w, "pid", None) for w in getattr(self.sinks, "workers", [])]
            ids = (process_id(pid) for pid in pids if pid)
            self._helpers = tuple(i for i in ids if i is not None)
        return self._helpers

    def forget_marks(self) -> None:
        """After close, the workflow ended in order: a sink that delivered every event drops its
        delivery marks (from a SQLite database, the table too), as the service does."""
        root = self.tracked_all[0].wf if self.tracked_all else None
        if not self.marks_stream or root is None or not root.finished:
            return
        for worker in getattr(self.sinks, "workers", []):
            if (
                capabilities_of(worker.sink).keeps_marks
                and not worker.failed
                and not worker.spooled
                and not worker.queued
            ):
                worker.sink.forget_marks(root.uuid)
