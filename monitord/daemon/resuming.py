"""Crash resume, as one collaborator of the Monitor: the decision between resuming and
recovering, the delivery marks its batches carry, and the snapshots it takes and restores (what a
snapshot is: :mod:`monitord.daemon.resume`).  ``store`` is set by the service (its state
directory) and by the live daemon (the user's, :mod:`monitord.daemon.statedir`); a replay has
none.  Without a usable snapshot a crash is recovered from as the reference does (doc §4.7).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import structlog

from monitord.core.events import StampedeEvent
from monitord.core.workflow import WorkflowContext
from monitord.daemon.jobstate_log import JobstateLog
from monitord.daemon.registry import Registry
from monitord.daemon.resume import (
    ResumePoint,
    ResumeStore,
    Snapshot,
    SnapshotCache,
    SnapshotClock,
    TrackedPoint,
    dumps,
    new_stream,
)
from monitord.daemon.statefiles import read_info
from monitord.daemon.tracked import Tracked
from sinks.runtime.base import Sink
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.marks import MarkedBatch, Marks, count_batch, line_one_stream

log = structlog.get_logger(__name__)


class CrashResume:
    """Whether and how a Monitor snapshots what it follows, and resumes from a snapshot.

    ``stream``: number the published batches for the sinks' delivery marks even without a
    store (a bench); with a store, :meth:`decide` picks it (the snapshot's, or a new one).
    """

    def __init__(
        self,
        store: ResumeStore | None = None,
        *,
        off: str = "no crash-resume snapshots",
        stream: str | None = None,
    ) -> None:
        self.store = store
        self.off = off  # why there is no store
        self.stream = stream  # delivery marks' stream (sinks/runtime/marks.py), None: unmarked
        self.counts: dict[str, int] = {}  # per workflow: events published (the marks)
        self.resumed: ResumePoint | None = None  # the snapshot this start resumed from
        self._clock = SnapshotClock()
        self._cache = SnapshotCache()  # what earlier snapshots pickled that did not change
        self._failed = False  # the last snapshot failed (logged once)
        self.last_written: float | None = None  # when this daemon last wrote a snapshot

    # ------------------------------------------------------------------ the decision
    def decide(
        self,
        *,
        crashed: bool,
        replay: bool,
        run_dir: str,
        dagman_out: str,
        root_uuid: str,
        info: str,
        build: Callable[[bool], list[Sink]],
    ) -> tuple[ResumePoint | None, bool, list[Sink]]:
        """Start-up: the snapshot to resume from (None: recover from line 1 after a
        ``crashed`` predecessor, said in one log line with the reason); whether the outputs
        start over (``restart``); the events outputs, built by ``build(restart)``.  ``info``:
        the workflow's ``monitord.info`` (where a clean stop left off)."""
        point, why = None, ""
        if crashed:
            if self.store is None:
                why = self.off
            else:
                point, why = self.store.load_why(dagman_out, root_uuid)
        restart = replay or (crashed and point is None)
        sinks = build(restart)
        stuck = [s.name for s in sinks if not capabilities_of(s).resumes]
        if point is not None and stuck:
            point, restart = None, True
            why = "an output cannot resume from a snapshot: " + ", ".join(stuck)
            sinks = build(restart)
        if crashed and point is None:
            log.warning("monitord.recover found: recovering from line 1", run_dir=run_dir, why=why)
        if self.store is not None:
            self.stream = (
                point.stream if point is not None else _new_stream(restart, info, root_uuid)
            )
        log.debug(
            "start-up: "
            + ("resume from a snapshot" if point else "outputs start over" if restart else "go on"),
            crashed=crashed,
            replay=replay,
            why=why or None,
            snapshots=self.store is not None,
        )
        return point, restart, sinks

    def restore(
        self, point: ResumePoint, ctx: WorkflowContext
    ) -> list[tuple[Tracked, TrackedPoint]]:
        """Every workflow of the snapshot, as it was then (its jobstate.log cut back)."""
        self.resumed = point
        self.counts = dict(point.counts)
        out = []
        for p in point.tracked:
            p.wf.attach(ctx)
            jobstate = None
            if not p.ended and p.jobstate_path is not None:
                jobstate = JobstateLog(p.jobstate_path)
                jobstate.cut_back(p.jobstate_size)
                jobstate.open()
            tracked = Tracked(
                p.wf, p.run_dir, p.dagman_out, jobstate, p.started_at, p.files, p.exit_code,
                offset=p.offset,
            )  # fmt: skip
            out.append((tracked, p))
        return out

    def rewrite(self, point: ResumePoint) -> None:
        """The snapshot resumed from, written again (unchanged) at once: from its start this
        daemon has a snapshot of its own (a stop says the next start goes on from it;
        ``tests/kills.py`` waits for this fresh file before it kills the resumed daemon)."""
        if self.store is None:
            return
        try:
            self.store.write(Snapshot(point.root_dagman_out, dumps(point, self._cache)))
            self.last_written = time.time()
        except Exception as exc:  # the older snapshot stays: still a valid one
            log.warning("cannot rewrite the resume snapshot", error=repr(exc))

    # ------------------------------------------------------------------ publishing
    def mark(self, batch: list[StampedeEvent]) -> Sequence[StampedeEvent]:
        """``batch``, numbered for a crash resume when there is a stream."""
        if self.stream is None:
            return batch
        return MarkedBatch(batch, Marks(self.stream, count_batch(batch, self.counts)))

    # ------------------------------------------------------------------ snapshots
    def due(self) -> bool:
        """A snapshot would be taken now (a follow publishes its pending events first)."""
        return self.store is not None and self._clock.due()

    def take(self, registry: Registry, *, now: bool = False) -> Snapshot | None:
        """The feed lock held, between two chunks: a snapshot if one is due (``now``: at once),
        to be written once the sinks hold what it covers (:meth:`write`)."""
        if self.store is None or registry.root_uuid is None or not registry.tracked:
            return None
        if now:
            self._clock = SnapshotClock()
        if not self._clock.due():
            return None
        started = time.thread_time()  # this worker thread's CPU: the snapshot's cost
        points = []
        for t in registry.tracked:
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
            registry.root_uuid,
            registry.tracked[0].dagman_out,
            self.stream or "",
            dict(self.counts),
            points,
            set(registry.seen_dagman_outs),
            dict(registry.seen_dirs),
        )
        snapshot = None
        try:
            snapshot = Snapshot(point.root_dagman_out, dumps(point, self._cache))
        except Exception as exc:  # never stop following for a snapshot: recovery still works
            if not self._failed:
                log.warning("cannot take a resume snapshot", error=repr(exc))
            self._failed = True
        self._clock.taken(time.thread_time() - started)
        return snapshot

    def write(self, snapshot: Snapshot, registry: Registry, lock: threading.Lock) -> None:
        """The checkpointer's turn: the sinks hold everything the snapshot covers."""
        store = self.store
        root = registry.root.wf if registry.root is not None else None
        if store is None or root is None or root.finished:
            return  # ended in order meanwhile: nothing to resume
        try:
            store.write(snapshot)  # not under the feed lock: followers go on meanwhile
        except OSError as exc:  # the next start resumes from an older one, or recovers
            if not self._failed:  # once, not every two seconds
                log.warning(
                    "cannot write the resume snapshot", path=store.directory, error=str(exc)
                )
            self._failed = True
            return
        self._failed = False
        self.last_written = time.time()
        with lock:
            if root.finished:  # it ended while the file was written
                store.remove(snapshot.root_dagman_out)

    def ended(self, root_dagman_out: str) -> None:
        """The root workflow ended in order: nothing to resume."""
        if self.store is not None:
            self.store.remove(root_dagman_out)


def _new_stream(restart: bool, info: str, root_uuid: str) -> str:
    """A start from line 1 (first start, recovery) counts in the root workflow's line-1
    stream, so events produced again carry the numbers they had (sinks/runtime/marks.py);
    one that goes on where a clean stop left off (``monitord.info``) counts in a new one."""
    if restart or not read_info(info).get("monitord_dagman_out_sequence"):
        return line_one_stream(root_uuid)
    return new_stream()
