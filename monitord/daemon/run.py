"""The daemon's two modes as coroutines: replay (``-r``) and follow (live, signals)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import structlog

from monitord.daemon.config import MonitorConfig
from monitord.daemon.monitor import Monitor
from monitord.daemon.outputs import LocalOutputs, check_outputs, helper_processes
from monitord.daemon.parts import MonitorObserver
from monitord.daemon.statedir import daemon_resume_store

if TYPE_CHECKING:
    from monitord.daemon.readahead import ReadAhead

log = structlog.get_logger(__name__)


def _log_level_changed(direction: int) -> None:
    """SIGUSR1 (+1) / SIGUSR2 (-1): one step more / less verbose (doc §9.2)."""
    from monitord.system import loglevel

    before = loglevel.level()
    after = loglevel.more_verbose() if direction > 0 else loglevel.less_verbose()
    # Said at WARNING so that it shows at the default level and one step below it.
    log.warning(
        "log level changed", old=loglevel.level_name(before), new=loglevel.level_name(after)
    )


def daemon_monitor(
    config: MonitorConfig, observers: Sequence[MonitorObserver] = ()
) -> Monitor[LocalOutputs]:
    """The per-workflow daemon's Monitor: its own sink executors and file watches."""
    return Monitor(config, LocalOutputs(), observers=observers)


#: signals that stop a live daemon cleanly: its successor goes on where it stopped
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
NOTIFY_GRACE = 10.0  # seconds queued notification scripts may still run after a clean stop


async def run_follow(config: MonitorConfig, monitor: Monitor[LocalOutputs] | None = None) -> int:
    """Live mode (``-N`` / no ``-r``): follow until DAGMan and every sub-workflow are done.

    SIGINT, SIGTERM and SIGHUP stop it cleanly, as a crash would but tidily: the chunk in hand
    is finished, the sinks flush, a last snapshot is written and ``monitord.recover`` stays, so
    the next start resumes right there (without a snapshot store it re-reads from line 1, as
    the reference does after SIGTERM; never a partial state).  One line says where it stopped;
    the exit status is 128 + the signal's number.  A second such signal exits at once (the
    next start then resumes from the last snapshot taken, as after a crash).
    SIGUSR1 / SIGUSR2 make the log one step more / less verbose.
    After a crash (SIGKILL, OOM kill, reboot) the next start resumes from the last snapshot
    kept in the user's state directory (:mod:`monitord.daemon.statedir`).
    ``monitor``: a Monitor made for ``config`` by the caller (:func:`daemon_monitor`), e.g.
    with an observer that counts progress.
    """
    import signal

    monitor = monitor or daemon_monitor(config)
    resume = monitor.resume
    if resume.store is None:  # crash resume from the user's state dir (statedir.py)
        resume.store, why = daemon_resume_store(config)
        if resume.store is None:
            resume.off = why
            log.warning("crash resume is off", why=why)
    stop = asyncio.Event()
    stopped_by: list[signal.Signals] = []

    def clean_stop(sig: signal.Signals) -> None:
        if stopped_by:  # asked twice: now, as a crash (the last snapshot stays)
            log.warning("stopping at once", signal=sig.name)
            os._exit(128 + sig)
        stopped_by.append(sig)
        log.info("stopping: finishing the chunk in hand", signal=sig.name)
        monitor.shutting_down = True  # leave monitord.recover and a snapshot for the successor
        stop.set()

    loop = asyncio.get_running_loop()
    for name in STOP_SIGNALS:
        sig = signal.Signals[name]
        loop.add_signal_handler(sig, clean_stop, sig)
    loop.add_signal_handler(signal.SIGUSR1, _log_level_changed, +1)
    loop.add_signal_handler(signal.SIGUSR2, _log_level_changed, -1)
    try:
        await asyncio.to_thread(monitor.start)
        await monitor.follow_all(stop)
    finally:
        # A clean stop gives notification scripts already queued NOTIFY_GRACE seconds to run
        # (no successor runs them: it resumes after the lines that fired them).
        scripts_stop = stop
        if stopped_by:
            scripts_stop = asyncio.Event()
            loop.call_later(NOTIFY_GRACE, scripts_stop.set)
        await monitor.close(scripts_stop)  # (ended in order: its delivery marks dropped)
    check_outputs(monitor.outputs, monitor.destinations)
    root = monitor.registry.root
    if stopped_by and root is not None and root.wf is not None and not root.wf.finished:
        _say_where_stopped(monitor, stopped_by[0].name)
        return 128 + stopped_by[0]
    return 0


def _say_where_stopped(monitor: Monitor[LocalOutputs], signame: str) -> None:
    """The one line of a clean stop: where each followed dagman.out was left, and how the
    next start goes on."""
    resume = monitor.resume
    left = [t for t in monitor.registry.tracked if t.wf is not None and not t.wf.finished]
    where = {os.path.basename(t.dagman_out): t.wf.line_no for t in left if t.wf is not None}
    if resume.store is not None and resume.last_written is not None:
        log.warning(
            "stopped; the next start goes on from here",
            signal=signame,
            lines=where,
            snapshot=resume.store.path(monitor.registry.tracked[0].dagman_out),
        )
    else:
        log.warning(
            "stopped; the next start re-reads dagman.out from line 1",
            signal=signame,
            lines=where,
            why=resume.off if resume.store is None else "no snapshot could be written",
        )


async def run_replay(config: MonitorConfig, monitor: Monitor[LocalOutputs] | None = None) -> int:
    """Replay mode (``-r``): rebuild every output from the finished workflow's files.

    Fails (:class:`MonitordError`) when no requested destination holds every event (the
    ``monitord replay`` command is stricter: :func:`~monitord.daemon.undelivered.check_delivered`).
    SIGINT/SIGTERM end it at once (:mod:`monitord.daemon.interrupt`): :class:`ReplayInterrupted`.
    """
    from monitord.daemon.interrupt import ReplayStop
    from monitord.daemon.undelivered import check_delivered

    monitor = monitor or daemon_monitor(config)
    # One parser thread does the replay's work off the loop, in order (docs/architecture.md);
    # a pool could start a second thread for the next hand-off while the first turns idle.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="parser")
    )
    stop = ReplayStop(monitor)
    stop.install()
    ahead = _read_ahead(config, monitor)
    try:
        if ahead is not None:
            await asyncio.to_thread(ahead.start, _log_level())
        await asyncio.to_thread(monitor.start)
        if stop.event.is_set():
            stop.interrupt_sinks()  # the signal came while they were being built
        await monitor.replay_all(stop.event)
    finally:
        if ahead is not None:
            await asyncio.to_thread(ahead.close, finished=stop.signum is None)
        await monitor.close(stop.event if stop.signum else None)
        stop.remove()
    if stop.signum is not None:
        raise stop.error()
    check_outputs(monitor.outputs, monitor.destinations)
    check_delivered(monitor, strict=False)
    return 0


def _log_level() -> int:
    from monitord.system import loglevel

    return loglevel.level()


def _read_ahead(config: MonitorConfig, monitor: Monitor[LocalOutputs]) -> ReadAhead | None:
    """The replay's job files from a worker process (monitord/daemon/readahead.py): with
    ``--read-ahead``, or without ``--no-read-ahead`` by the rule of a large replay's helper
    processes (monitord/daemon/outputs.py ``helper_processes``)."""
    if not config.replay:
        return None
    wanted = config.read_ahead
    if wanted is None:
        wanted = helper_processes(config, "read-ahead")
    if not wanted:
        return None
    from monitord.core.jobreader import ParsingReader
    from monitord.daemon.prestart import read_ahead_plan
    from monitord.daemon.readahead import ReadAhead

    ahead = ReadAhead(read_ahead_plan(config), ParsingReader(monitor.ctx.read_text))
    monitor.ctx.reader = ahead
    monitor.line_records = ahead
    return ahead
