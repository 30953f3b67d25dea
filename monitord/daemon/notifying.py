"""A live Monitor's notification scripts (issue 6, doc §11): never in a replay, which so does
not import the ``notifications`` package (~5 ms of a command's start-up,
``tests/test_cli_startup.py``)."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import structlog

from monitord.core.workflow import WorkflowContext
from monitord.daemon.config import MonitorConfig
from monitord.daemon.errors import MonitordError

if TYPE_CHECKING:
    from notifications.notifier import Notifier

log = structlog.get_logger(__name__)


class Notifications:
    """The Monitor's :class:`Notifier` (None until :meth:`start`, and in a replay).

    ``scripts_as_owner``: a service running as root runs each user's scripts as the owner of
    the submit directory.
    """

    def __init__(self, cfg: MonitorConfig, *, scripts_as_owner: bool = False) -> None:
        self.cfg = cfg
        self.scripts_as_owner = scripts_as_owner
        self.notifier: Notifier | None = None
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    def start(self, run_dir: str, ctx: WorkflowContext) -> None:
        cfg = self.cfg
        if cfg.replay or not cfg.notifications or cfg.notifications_max <= 0:
            return
        from notifications.notifier import Notifier

        if 0 < cfg.notifications_timeout < 5:
            log.warning("notification timeout below 5 s", timeout=cfg.notifications_timeout)
        run_as = None
        if self.scripts_as_owner:
            st = os.stat(run_dir)
            run_as = st.st_uid, st.st_gid
        try:
            self.notifier = Notifier.create(
                run_dir=run_dir,
                output_dir=cfg.output_dir,
                max_running=cfg.notifications_max,
                timeout=cfg.notifications_timeout,
                loop=self._loop,
                full_log=cfg.notifications_full_log,
                run_as=run_as,
            )
        except OSError as exc:
            raise MonitordError(f"cannot open the notifications log: {exc}") from None
        ctx.notifier = self.notifier

    def open_workflow(
        self, run_dir: str, bd: Any, dagman_out: str, recover_path: str | None
    ) -> None:
        """A (sub-)workflow's ``.notify``; scripts already run stay suppressed (doc §11.4)."""
        if self.notifier is not None:
            self.notifier.open_workflow(run_dir, bd, dagman_out, recover_path)

    async def close(
        self, ctx: WorkflowContext, stop: asyncio.Event | None, *, shutting_down: bool
    ) -> None:
        """Queued scripts run to their end (within their timeout) unless the daemon was
        stopped (``stop`` set, or a service stop)."""
        if self.notifier is None:
            return
        if stop is None and shutting_down:
            stop = asyncio.Event()  # service stop: do not wait for scripts
            stop.set()
        ctx.notifier = None
        try:
            await self.notifier.aclose(stop)
        except Exception as exc:  # never fail the daemon's exit
            log.error("notifications shutdown failed", error=repr(exc))
