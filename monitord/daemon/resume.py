"""Crash resume from snapshots: where a restarted service or live daemon goes on, not line 1.

The reference recovers from a crash by re-reading every dagman.out from line 1 into fresh
outputs (doc §4.7).  The service and the live daemon do better: every few seconds a Monitor
takes a snapshot of everything it follows -- each workflow's machine
(:class:`~monitord.core.workflow.Workflow` without its context), how many dagman.out bytes
were fed, how long its jobstate.log was -- and the checkpointer writes it once the sinks hold (or have spooled) every event published
before it.  After ``kill -9`` (or a service stop) the next start restores the machines,
cuts each jobstate.log back to its recorded length and follows every dagman.out from its
recorded offset; the events it produces again after the snapshot carry the same delivery
marks as before (:mod:`sinks.runtime.marks`), so a sink that kept its marks (SQL) skips the
ones it already holds and the outputs equal a replay.

A snapshot is used only when the crash left ``monitord.recover`` (a clean end removes both),
every file still agrees with it, and every events output can resume (``Capabilities.resumes``;
an events file, say, cannot and makes the workflow recover as the reference does).

Snapshots are pickles, so they live only in a state directory of the service's or the user's
own (never in a submit directory others may write: :mod:`monitord.daemon.statedir`), written
whole and renamed into place.
"""

from __future__ import annotations

import copyreg
import hashlib
import io
import os
import pickle
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import structlog

from monitord.core.workflow import Workflow
from monitord.system.atomic import replace_file

log = structlog.get_logger(__name__)

VERSION = 8  # 2: JobInstance.known_state; 3: Workflow.latest holds the instances (no .jobs);
# 4: a finished instance's record (core/jobinstance.py) keeps its states as codes (core/jobinstance.py STATE_CODES);
# 5: its values packed by _encode, its shared texts numbered in Workflow.texts
# 6: _encode packs a sched id and a work directory ending in a number as numbers
# 7: a record's values laid out by position (_encode_positional); a 6's records still decode
# (their first byte tells them apart), so a snapshot of 6 is read too, and a 6 daemon reads
# none of 7
# 8: a record is a plain bytes, not a bytes subclass (a 7 daemon would take one for a live
# instance); the 6 and 7 snapshots' records, pickled as the subclass, load as plain bytes
READS = (6, 7, VERSION)
MIN_INTERVAL = 2.0  # seconds between snapshots of a Monitor ...
COST_FACTOR = 20.0  # ... and at least this many times what the last one took


def new_stream() -> str:
    """A fresh counting session for delivery marks (a daemon that does not resume)."""
    return uuid.uuid4().hex


@dataclass
class TrackedPoint:
    """One (sub-)workflow in a snapshot."""

    wf: Workflow
    run_dir: str
    dagman_out: str
    files: dict[str, str]
    started_at: float
    exit_code: int
    offset: int  # dagman.out bytes fed to ``wf`` (complete lines)
    jobstate_path: str | None
    jobstate_size: int
    ended: bool


@dataclass
class ResumePoint:
    """Everything one Monitor follows, at one moment between two fed chunks."""

    root_uuid: str
    root_dagman_out: str
    stream: str
    counts: dict[str, int]
    tracked: list[TrackedPoint]
    seen_dagman_outs: set[str]
    seen_dirs: dict[str, tuple[str, str | None]]
    taken_at: float = field(default_factory=time.time)
    version: int = VERSION

    def problem(self) -> str | None:
        """Why the files on disk no longer agree with this snapshot (None: they do)."""
        if self.version not in READS:
            return f"snapshot version {self.version}, not {VERSION}"
        for point in self.tracked:
            if point.ended:
                continue
            try:
                size = os.path.getsize(point.dagman_out)
            except OSError:
                size = -1
            if point.offset and size < point.offset:
                return f"{point.dagman_out} is shorter than the snapshot's offset"
            if point.jobstate_path is not None:
                try:
                    js_size = os.path.getsize(point.jobstate_path)
                except OSError:
                    js_size = -1
                if js_size < point.jobstate_size:
                    return f"{point.jobstate_path} is shorter than in the snapshot"
        return None


@dataclass
class Snapshot:
    """A pickled :class:`ResumePoint`, waiting in the checkpointer for the sinks' flush."""

    root_dagman_out: str
    data: bytes


class ResumeStore:
    """Snapshots: ``<state dir>/resume/<hash of the root dagman.out>.pickle`` (by path: copies
    of one submit directory share their wf_uuid); the service's state directory, or the live
    daemon's (:mod:`monitord.daemon.statedir`)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def path(self, root_dagman_out: str) -> str:
        key = hashlib.sha256(os.path.abspath(root_dagman_out).encode()).hexdigest()[:32]
        return os.path.join(self.directory, f"{key}.pickle")

    def write(self, snapshot: Snapshot) -> None:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        replace_file(self.path(snapshot.root_dagman_out), snapshot.data, prefix=".snapshot-")

    def load(self, root_dagman_out: str, root_uuid: str) -> ResumePoint | None:
        """The workflow's snapshot, or None (none, or unusable)."""
        return self.load_why(root_dagman_out, root_uuid)[0]

    def load_why(self, root_dagman_out: str, root_uuid: str) -> tuple[ResumePoint | None, str]:
        """The workflow's snapshot, or None and why there is none to use (logged by the
        caller, in the one line that says the workflow recovers from line 1)."""
        path = self.path(root_dagman_out)
        try:
            with open(path, "rb") as fh:
                point = pickle.load(fh)
        except FileNotFoundError:
            return None, "no snapshot yet"
        except Exception as exc:  # a damaged file means recovery, never a traceback
            return None, f"damaged snapshot {path}: {exc!r}"
        if (
            not isinstance(point, ResumePoint)
            or point.root_uuid != root_uuid
            or point.root_dagman_out != os.path.abspath(root_dagman_out)
        ):
            return None, f"{path} is not a snapshot of this workflow"
        why = point.problem()
        if why is not None:
            return None, why
        return point, ""

    def remove(self, root_dagman_out: str) -> None:
        try:
            os.unlink(self.path(root_dagman_out))
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning(
                "cannot remove the resume snapshot", path=self.path(root_dagman_out), error=str(exc)
            )


class SnapshotClock:
    """When the next snapshot is due: every MIN_INTERVAL seconds at most, and only once the
    daemon itself used COST_FACTOR times the CPU the last snapshot took (its process CPU,
    not the wall: on a loaded machine a follow stretched 3x took 3x the snapshots of the same
    work, each O(jobs), bench/README.md "live30c").  Snapshots so never take more than
    1/COST_FACTOR of the daemon's CPU, whatever the machine's load."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.process_time,
    ) -> None:
        self._clock, self._cpu = clock, cpu
        self._next = 0.0  # wall clock
        self._next_cpu = 0.0  # the process's CPU clock

    def due(self) -> bool:
        return self._clock() >= self._next and self._cpu() >= self._next_cpu

    def taken(self, cpu_seconds: float) -> None:
        self._next = self._clock() + MIN_INTERVAL
        self._next_cpu = self._cpu() + COST_FACTOR * cpu_seconds


CHUNK = 512  # entries per piece of a workflow's large dicts pickled once (SnapshotCache)
# A workflow's dicts that grow with its jobs, and the values an entry keeps as long as it does
# not change: a node's latest instance once finished (its record, a bytes), output
# counters.
PIECED = {"latest": bytes, "out_counters": int}


@dataclass
class _Piece:
    keys: tuple[Any, ...]
    values: tuple[Any, ...]
    blob: bytes  # list(zip(keys, values)), _packed


@dataclass
class _Frozen:
    """What one workflow's earlier snapshots pickled that has not changed since."""

    dag: Any = None  # the DagInfo object the blob is of (the .dag never changes once read)
    dag_blob: bytes = b""
    pieces: dict[tuple[str, int], _Piece] = field(default_factory=dict)  # (dict, start) -> piece


class SnapshotCache:
    """A snapshot without the O(jobs) pickling every time: the parts of a workflow that do not
    change are pickled once and their bytes reused by every later snapshot.

    The parsed ``.dag`` never changes once read.  The dicts that grow with the jobs (PIECED:
    ``latest``, whose finished instances' records are immutable bytes, and
    ``out_counters``) are cut by insertion position into pieces of CHUNK entries; a piece whose
    values are all immutable is pickled once and reused for as long as the keys and values at
    its positions are equal (a rescue DAG's restart, which drops records, shifts the positions:
    the pieces are pickled again).  Live instances are pickled each time with the rest.  A
    restored workflow equals the one pickled whole (``tests/test_resume_pieces.py``).
    """

    def __init__(self) -> None:
        self._frozen: dict[str, _Frozen] = {}

    def reduce(self, wf: Any) -> tuple[Any, ...]:
        """``wf``'s reduce tuple: its state with the .dag and the unchanged pieces as bytes."""
        frozen = self._frozen.setdefault(wf.uuid, _Frozen())
        state = wf.__getstate__()
        dag = state.pop("dag", None)
        if dag is not None:
            if frozen.dag is not dag:
                frozen.dag, frozen.dag_blob = dag, _packed(dag)
            dag = frozen.dag_blob
        pieces: dict[tuple[str, int], _Piece] = {}
        cut: dict[str, list[bytes | list[tuple[Any, Any]]]] = {}
        for name, kind in PIECED.items():
            table = state.pop(name)
            # a piece at a time, not the whole dict's keys and values as two tuples: at
            # 100,000 jobs those were 3.2 MB more at every snapshot (bench/README.md "live30g")
            keys, values = iter(table), iter(table.values())
            parts = cut[name] = []
            for start in range(0, len(table), CHUNK):
                k, v = tuple(islice(keys, CHUNK)), tuple(islice(values, CHUNK))
                piece = frozen.pieces.get((name, start))
                if piece is None or piece.keys != k or piece.values != v:
                    piece = None
                    if len(v) == CHUNK and all(isinstance(x, kind) for x in v):
                        piece = _Piece(k, v, _packed(list(zip(k, v, strict=True))))
                if piece is None:
                    parts.append(list(zip(k, v, strict=True)))
                else:
                    pieces[name, start] = piece
                    parts.append(piece.blob)
        frozen.pieces = pieces
        # NEWOBJ first (the object memoized before its state: references back to it work).
        return (_NEWOBJ, (type(wf),), (state, dag, cut), None, None, _restore)


_NEWOBJ = copyreg.__newobj__  # type: ignore[attr-defined]


def _packed(obj: Any) -> bytes:
    """``obj`` pickled and compressed: kept for as long as it does not change, so small
    (zlib level 1: 6.6 MB of records and .dag at 20,000 jobs are 0.9 MB, 35 ms once)."""
    return zlib.compress(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL), 1)


def _unpacked(blob: bytes) -> Any:
    return pickle.loads(zlib.decompress(blob))


def _restore(wf: Any, state: tuple[Any, Any, dict[str, list[Any]]]) -> None:
    """Unpickling: the workflow whose state :meth:`SnapshotCache.reduce` cut into pieces."""
    rest, dag, cut = state
    for name, parts in cut.items():
        table: dict[Any, Any] = {}
        for part in parts:
            table.update(_unpacked(part) if isinstance(part, bytes) else part)
        rest[name] = table
    if isinstance(dag, bytes):
        dag = _unpacked(dag)
    wf.__setstate__({**rest, "dag": dag})


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, cache: SnapshotCache) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._cache = cache

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Workflow:
            return self._cache.reduce(obj)
        return NotImplemented


def dumps(point: ResumePoint, cache: SnapshotCache | None = None) -> bytes:
    """``point`` pickled; with ``cache``, what did not change since its last use is reused."""
    buf = io.BytesIO()
    _Pickler(buf, cache if cache is not None else SnapshotCache()).dump(point)
    return buf.getvalue()


def describe(point: Any) -> dict[str, Any]:
    """Log fields of a snapshot resumed from."""
    following = [p for p in point.tracked if not p.ended]
    return {
        "snapshot_age_seconds": round(time.time() - point.taken_at, 1),
        "workflows": len(following),
        "resumed_at_bytes": sum(p.offset for p in point.tracked),  # dagman.out bytes not read again
    }
