"""The one durable spool of every sink: a segment log (:mod:`.segments`) and batches on it.

:mod:`.segments` is the storage (append-only CRC-checked frames, a durable cursor, flock,
torn-tail repair); the delivery runtime (:mod:`sinks.runtime.runner`) keeps one event batch
per frame in it through :class:`~.batches.BatchSpool`, for every sink.
"""

from sinks.runtime.spool.batches import (
    DEFAULT_DRAIN_TIMEOUT,
    DEFAULT_FIRST_BACKOFF,
    DEFAULT_MAX_BACKOFF,
    DIR_PROPERTY,
    DRAIN_TIMEOUT_PROPERTY,
    MAX_BACKOFF_PROPERTY,
    SPOOL_DIR_NAME,
    BatchSpool,
    SpoolSettings,
    SpoolUnavailable,
    sink_identity,
    sink_key,
)
from sinks.runtime.spool.segments import Position, Record, Spool, SpoolError

__all__ = [
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_FIRST_BACKOFF",
    "DEFAULT_MAX_BACKOFF",
    "DIR_PROPERTY",
    "DRAIN_TIMEOUT_PROPERTY",
    "MAX_BACKOFF_PROPERTY",
    "SPOOL_DIR_NAME",
    "BatchSpool",
    "Position",
    "Record",
    "Spool",
    "SpoolError",
    "SpoolSettings",
    "SpoolUnavailable",
    "sink_identity",
    "sink_key",
]
