"""A delivery's own spool: opened when first needed, recovered at start, given up when broken.

One :class:`HeldSpool` per :class:`~sinks.runtime.delivery.Delivery` that has spool settings
(none for a sink that spools itself).  A spool that cannot be written (disk full, bad
permissions) is *broken*: the delivery then keeps its batches in memory, as without settings.
The caller holds the delivery's ``cond`` around every call except :meth:`recover`'s I/O.
"""

from __future__ import annotations

import os
from typing import Any

import structlog

from sinks.runtime.spool.batches import BatchSpool, SpoolSettings, SpoolUnavailable

log = structlog.get_logger("sinks.runtime.delivery")


class HeldSpool:
    """The spool of one sink's delivery (``settings`` None: memory only)."""

    def __init__(self, settings: SpoolSettings | None, sink: Any) -> None:
        self.settings = settings
        self.sink = sink
        self.spool: BatchSpool | None = None
        self.broken = False

    @property
    def ready(self) -> bool:
        """Open and writable."""
        spool = self.spool
        return spool is not None and spool.is_open and not self.broken

    @property
    def backlog(self) -> bool:
        """Holds batches (readable even if it can no longer be written)."""
        spool = self.spool
        return spool is not None and spool.is_open and spool.batches > 0

    @property
    def events(self) -> int:
        return self.spool.events if self.spool is not None else 0

    def figures(self) -> tuple[int, int, float]:
        """Events, bytes, age of the oldest (for the health record)."""
        spool = self.spool
        if spool is None:
            return 0, 0, 0.0
        return spool.events, spool.bytes, spool.oldest_age()

    def append(self, count: int, data: bytes) -> bool:
        """False (and broken) when the spool cannot take it."""
        assert self.spool is not None
        try:
            self.spool.append(count, data)
        except (OSError, SpoolUnavailable) as exc:
            self.break_(exc)
            return False
        return True

    def sync(self) -> None:
        if not self.ready:
            return
        assert self.spool is not None
        try:
            self.spool.sync()
        except OSError as exc:
            self.break_(exc)

    def break_(self, exc: BaseException) -> None:
        log.error(
            "cannot write the sink's spool, keeping its events in memory",
            sink=self.sink.name,
            spool=self.spool.path if self.spool else None,
            error=str(exc),
        )
        self.broken = True

    def ensure(self) -> bool:
        """Open (create) the spool if there is one; False in memory mode or when broken."""
        if self.settings is None or self.broken:
            return False
        if self.spool is None:
            self.spool = BatchSpool(self.settings.path_for(self.sink))
        if not self.spool.is_open:
            try:
                self.spool.open()
            except (OSError, SpoolUnavailable) as exc:
                self.break_(exc)
                return False
        return True

    def recover(self) -> None:
        """A spool left by an earlier daemon: delivered first, or discarded on restart."""
        if self.settings is None:
            return
        path = self.settings.path_for(self.sink)
        if not os.path.isdir(path) or not self.ensure():
            return
        spool = self.spool
        assert spool is not None
        if self.settings.restart:
            try:
                dropped = spool.discard()
            except OSError as exc:
                self.break_(exc)
                return
            if dropped:
                log.warning(
                    "outputs start over: discarding events an earlier daemon left spooled",
                    sink=self.sink.name,
                    events=dropped,
                    spool=path,
                )
        elif spool.batches:
            log.info(
                "delivering first the events an earlier daemon left spooled",
                sink=self.sink.name,
                events=spool.events,
                spool=path,
            )

    def close(self) -> int:
        """Close it; the number of events left undelivered (the caller says what comes of them)."""
        spool = self.spool
        if spool is None or not spool.is_open:
            return 0
        left = spool.events
        if spool.batches:
            log.warning(
                "events left undelivered in the spool",
                sink=self.sink.name,
                events=spool.events,
                batches=spool.batches,
                spool=spool.path,
            )
        spool.close()
        return left
