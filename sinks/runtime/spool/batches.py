"""A sink's durable backlog: the event batches it could not take yet, on disk, in order.

The runner (:mod:`sinks.runtime.runner`) gives every sink the same safety net: while a
sink is down (server restarting, connection refused, deadlock storm) its
batches are appended here instead of blocking the daemon, and once the sink is
back the worker writes them out, oldest first, before any new batch.  A daemon
stopped while a sink was still down leaves the spool behind; the next daemon
for the same run directory delivers it first (resume), or discards it when the
outputs start over (replay, recovery).

Storage is the segment log of :mod:`sinks.runtime.spool.segments` (CRC-checked frames,
durable cursor, flock, torn-tail repair): one frame per batch, its key holding the batch's event count and
when it was appended, its body the batch as :func:`sinks.runtime.codec.encode_batch`
makes it.

Layout: ``<run dir>/monitord.spool/<sink key>/`` (``<outdir>/<wf_uuid>-monitord.spool/…``
with ``-o``; ``<dir>/<wf_uuid>/…`` with the property ``pegasus.monitord.spool.dir``), where
the sink key is a hash of the sink's password-free URL or path.  Other properties:
``pegasus.monitord.spool.drain_timeout`` (seconds a stopping daemon keeps trying a down
sink before leaving the rest spooled, default 10) and ``pegasus.monitord.spool.max_backoff``
(cap of the delay between attempts, default 5).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from sinks.runtime.capabilities import display_url_of
from sinks.runtime.spool.segments import Record, Spool, SpoolError

log = structlog.get_logger(__name__)

SPOOL_DIR_NAME = "monitord.spool"
DIR_PROPERTY = "pegasus.monitord.spool.dir"
DRAIN_TIMEOUT_PROPERTY = "pegasus.monitord.spool.drain_timeout"
MAX_BACKOFF_PROPERTY = "pegasus.monitord.spool.max_backoff"
DEFAULT_DRAIN_TIMEOUT = 10.0  # seconds a stopping daemon keeps trying a down sink
DEFAULT_MAX_BACKOFF = 5.0  # cap of the exponential backoff between attempts
DEFAULT_FIRST_BACKOFF = 0.5


class SpoolUnavailable(Exception):
    """The spool cannot be used (directory not writable, locked by another daemon, ...)."""


@dataclass(frozen=True)
class SpoolSettings:
    """Where a daemon's sinks spool and how they retry; passed to worker processes (picklable).

    ``restart``: the outputs start over (replay, recovery), so a spool left by an earlier
    daemon is stale and discarded; otherwise it is delivered before anything new.
    """

    root: str
    restart: bool = False
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    first_backoff: float = DEFAULT_FIRST_BACKOFF
    max_backoff: float = DEFAULT_MAX_BACKOFF

    @classmethod
    def from_properties(
        cls,
        default_root: str,
        *,
        restart: bool,
        workflow: str,
        properties: Mapping[str, str] | None = None,
    ) -> SpoolSettings:
        """Settings for one daemon; a bad number in a property is logged and ignored.

        A configured directory may serve many workflows, so each gets its own
        ``<dir>/<workflow>`` in it (a relative one is taken from ``default_root``'s directory).
        """
        props = properties or {}
        root = default_root
        if configured := props.get(DIR_PROPERTY):
            base = os.path.join(os.path.dirname(default_root), os.path.expanduser(configured))
            root = os.path.join(base, workflow)
        return cls(
            root=root,
            restart=restart,
            drain_timeout=_seconds(props, DRAIN_TIMEOUT_PROPERTY, DEFAULT_DRAIN_TIMEOUT),
            max_backoff=_seconds(props, MAX_BACKOFF_PROPERTY, DEFAULT_MAX_BACKOFF),
        )

    def path_for(self, sink: Any) -> str:
        return os.path.join(self.root, sink_key(sink))


def _seconds(props: Mapping[str, str], key: str, default: float) -> float:
    value = props.get(key)
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if seconds < 0:
        log.error("bad property value, using the default", property=key, default=default)
        return default
    return seconds


def sink_identity(sink: Any) -> str:
    """What names a sink's output without its password: its safe URL, else its name."""
    display = display_url_of(sink)
    return f"{type(sink).__name__}:{display if display is not None else sink.name}"


def sink_key(sink: Any) -> str:
    """A stable directory name for a sink's spool (same output -> same spool)."""
    return hashlib.sha256(sink_identity(sink).encode("utf-8")).hexdigest()[:16]


class BatchSpool:
    """One sink's spooled batches.  One appending thread at a time (the runner serialises
    ``append``/``sync``/``discard`` under its lock); ``head``/``commit`` run on its worker."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._counts = threading.Lock()
        self._spool: Spool | None = None
        self._head: Record | None = None
        self.events = 0  # events in the spool (appended, not yet committed)
        self.batches = 0
        self.bytes = 0
        self._ages: deque[tuple[float, int]] = deque()  # (appended at, bytes) per batch
        self.appended_events = 0  # totals over this daemon's life
        self.committed_events = 0

    @property
    def is_open(self) -> bool:
        return self._spool is not None

    def open(self) -> None:
        """Lock and recover the spool; counts what an earlier daemon left in it."""
        spool = Spool(self.path)
        try:
            spool.open()
        except SpoolError as exc:
            raise SpoolUnavailable(str(exc)) from None
        self._spool = spool
        events = 0
        ages: deque[tuple[float, int]] = deque()
        while True:
            records = spool.read_batch(max_records=1000)
            if not records:
                break
            for record in records:
                events += _count(record)
                ages.append((_appended_at(record), len(record.body)))
        spool.rewind()
        self.events, self.batches, self._ages = events, len(ages), ages
        self.bytes = sum(size for _, size in ages)

    def discard(self) -> int:
        """Forget every spooled batch (the outputs start over); returns the events dropped."""
        spool = self._require()
        dropped = 0
        while True:
            records = spool.read_batch(max_records=1000)
            if not records:
                break
            spool.commit(records[-1].end, len(records))
            dropped += sum(_count(r) for r in records)
        self._head = None
        self.forget_damaged()
        return dropped

    def forget_damaged(self) -> None:
        """Nothing readable is left (damaged frames were skipped): the counts say so too."""
        with self._counts:
            self.events = self.batches = self.bytes = 0
            self._ages.clear()

    def append(self, count: int, data: bytes) -> None:
        """One batch (``data`` from ``encode_batch``, ``count`` events), as one write."""
        now = time.time()
        self._require().append([(f"{count}:{now:.3f}", data)])
        with self._counts:
            self.events += count
            self.batches += 1
            self.bytes += len(data)
            self._ages.append((now, len(data)))
            self.appended_events += count

    def sync(self) -> None:
        """Make every appended batch durable (fsync)."""
        if self._spool is not None:
            self._spool.sync()

    def head(self) -> tuple[int, bytes] | None:
        """The oldest batch not yet committed, as ``(count, data)``; None when empty."""
        if self._head is None:
            records = self._require().read_batch(max_records=1)
            if not records:
                return None
            self._head = records[0]
        return _count(self._head), self._head.body

    def commit(self) -> None:
        """The batch returned by :meth:`head` is in the sink (durably): drop it."""
        spool, record = self._require(), self._head
        assert record is not None, "commit without head"
        spool.commit(record.end, 1)
        self._head = None
        count = _count(record)
        with self._counts:
            self.events -= count
            self.batches -= 1
            if self._ages:
                self.bytes -= self._ages.popleft()[1]
            self.committed_events += count

    def oldest_age(self) -> float:
        """Seconds since the oldest spooled batch was appended (0 when empty)."""
        with self._counts:
            oldest = self._ages[0][0] if self._ages else None
        return max(0.0, time.time() - oldest) if oldest else 0.0

    def close(self) -> None:
        """Release the spool; an empty one is removed (directory and all)."""
        spool, self._spool = self._spool, None
        if spool is None:
            return
        spool.close()
        if self.batches == 0:
            _remove_tree(self.path)

    def _require(self) -> Spool:
        if self._spool is None:
            raise SpoolUnavailable(f"the spool {self.path} is not open")
        return self._spool


def _count(record: Record) -> int:
    """The frame key is ``<events>:<unix time appended>`` (older spools: ``<events>``)."""
    try:
        return int(record.routing_key.partition(":")[0])
    except ValueError:
        return 0


def _appended_at(record: Record) -> float:
    try:
        return float(record.routing_key.partition(":")[2])
    except ValueError:
        return time.time()  # unknown: counted from now


def _remove_tree(path: str) -> None:
    """Remove an empty spool's files, its directory and an empty parent ("monitord.spool")."""
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        try:
            os.unlink(os.path.join(path, name))
        except OSError:
            return
    for directory in (path, os.path.dirname(path)):
        try:
            os.rmdir(directory)
        except OSError:
            return
