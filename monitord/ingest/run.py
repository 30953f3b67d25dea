"""``monitord ingest --config FILE``: the process around the consumer (signals, HTTP, logs)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

import setproctitle
import structlog

from monitord.ingest.config import IngestConfig
from monitord.ingest.consumer import Ingest
from monitord.ingest.http import start_http
from monitord.ingest.metrics import IngestStats
from monitord.ingest.store import Store
from monitord.system import collector
from sinks.runtime.base import SinkError

log = structlog.get_logger(__name__)
#: the cyclic collector's young threshold in the program (the interpreter's: 700)
YOUNG = 20_000
#: database writers (connections loading batches at once) of one process, at most one per
#: partition: a batch's time is mostly round trips to the database, which overlap
DB_WRITERS = 4


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop when it is installed (the ``ingest`` extra), else None (asyncio's).

    The event loop's thread is the ingest's bound (an AMQP frame read, a task and a few
    queue hand-overs per message, all in aiormq); uvloop's scheduling and socket transport
    take ~7 % less of its CPU per message (bench/README.md, ingest30i).  The consumer uses
    only asyncio's API, so either loop runs it."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def settle_collector() -> None:
    """Once the database is open, what is alive lives as long as the process (modules,
    SQLAlchemy's tables and engines): frozen out of the cyclic collector's walks; and young
    collections every :data:`YOUNG` allocations net, not 700.  Delivered messages wait in
    the lanes' buffers (up to ``prefetch`` a partition) until their batch commits, so at 700
    they were walked again and again: 613 young, 56 middle and 5 full collections took 0.70 s
    of 6.9 s CPU for 52,000 messages; at 20,000: 2 young ones, 0.01 s (bench/README.md,
    ingest30i).  Almost nothing the ingest makes is cyclic garbage (the buffers are freed by
    their reference counts), so the higher threshold holds little more memory."""
    collector.settle(YOUNG)


def run_ingest(cfg: IngestConfig) -> int:
    """The program: :func:`ingest` on its event loop (:func:`loop_factory`), the collector
    settled once the database is open (:func:`settle_collector`; an in-process caller of
    :func:`ingest` keeps its own)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(ingest(cfg, opened=settle_collector))


async def ingest(cfg: IngestConfig, opened: Callable[[], None] | None = None) -> int:
    """Run until SIGTERM/SIGINT; the database must be reachable at start (its schema is
    checked and created then), the broker may come later.  ``opened``: called once the
    database is open."""
    setproctitle.setproctitle(f"monitord ingest {cfg.path or ''}".strip())  # no URL: passwords
    stores = [
        Store(cfg.database, master_db_url=cfg.master_db_url)
        for _ in range(min(DB_WRITERS, cfg.partitions))
    ]
    store = stores[0]
    try:
        for each in stores:  # (one after the other: the first creates the schema)
            await asyncio.to_thread(each.open)
    except SinkError as exc:
        log.error("ingest: cannot open the database", error=str(exc))
        for each in stores:
            await asyncio.to_thread(each.close)
        return 1
    if opened is not None:
        opened()
    stats = IngestStats()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runner = await start_http(stats, cfg.http_listen)
    log.info(
        "ingest: started",
        db=store.display_url,
        partitions=cfg.partitions,
        member=cfg.member,
        loop=type(loop).__module__.split(".")[0],
    )
    try:
        await Ingest(cfg, stores, stats).run(stop)
    finally:
        if runner is not None:
            await runner.cleanup()
        for each in stores:
            await asyncio.to_thread(each.close)
        log.info("ingest: stopped", loaded=stats.loaded, duplicates=stats.duplicates)
    return 0
