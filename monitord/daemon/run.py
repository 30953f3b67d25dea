"""The daemon's two modes as coroutines: replay (``-r``) and follow (live, signals)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from monitord.daemon.config import MonitorConfig
from monitord.daemon.monitor import Monitor
from monitord.daemon.outputs import LocalOutputs, check_outputs
from monitord.daemon.parts import MonitorObserver
from monitord.daemon.statedir import daemon_resume_store

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


async def run_follow(config: MonitorConfig, monitor: Monitor[LocalOutputs] | None = None) -> int:
    """Live mode (``-N`` / no ``-r``): follow until DAGMan and every sub-workflow are done.

    SIGINT and SIGTERM end every workflow in order (exit code 1 in jobstate.log, monitord.info
    written, monitord.recover removed) after the sinks have flushed; the process exits 1.
    SIGUSR1 / SIGUSR2 make the log one step more / less verbose; SIGHUP is ignored.
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
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, lambda: log.info("SIGHUP ignored"))
    loop.add_signal_handler(signal.SIGUSR1, _log_level_changed, +1)
    loop.add_signal_handler(signal.SIGUSR2, _log_level_changed, -1)
    try:
        await asyncio.to_thread(monitor.start)
        await monitor.follow_all(stop)
    finally:
        await monitor.close(stop)  # (a workflow ended in order: its delivery marks dropped)
    check_outputs(monitor.outputs, monitor.destinations)
    return 1 if stop.is_set() else 0


async def run_replay(config: MonitorConfig, monitor: Monitor[LocalOutputs] | None = None) -> int:
    """Replay mode (``-r``): rebuild every output from the finished workflow's files.

    Fails (:class:`MonitordError`) when no requested destination holds every event (the
    ``monitord replay`` command is stricter: :func:`~monitord.daemon.undelivered.check_delivered`).
    SIGINT/SIGTERM end it at once (:mod:`monitord.daemon.interrupt`): :class:`ReplayInterrupted`.
    """
    from monitord.daemon.interrupt import ReplayStop
    from monitord.daemon.undelivered import check_delivered

    monitor = monitor or daemon_monitor(config)
    stop = ReplayStop(monitor)
    stop.install()
    try:
        await asyncio.to_thread(monitor.start)
        if stop.event.is_set():
            stop.interrupt_sinks()  # the signal came while they were being built
        await monitor.replay_all(stop.event)
    finally:
        await monitor.close(stop.event if stop.signum else None)
        stop.remove()
    if stop.signum is not None:
        raise stop.error()
    check_outputs(monitor.outputs, monitor.destinations)
    check_delivered(monitor, strict=False)
    return 0
