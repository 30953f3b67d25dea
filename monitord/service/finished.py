"""The workflows the service saw end lately: what the status lists, what a re-attach is told.

Kept for ``[service] keep_finished_seconds`` (persisted with the followed list, so a restart
keeps them), keyed by the dagman.out's real path.  A workflow whose dagman.out has not changed
since it ended (same size and mtime) is still over: attaching it again gets its outcome instead
of following it a second time.
"""

from __future__ import annotations

import os
import time

from monitord.daemon.config import MonitorConfig
from monitord.service.discovery import file_stamp
from monitord.service.status import FinishedStatus
from monitord.service.store import Ended
from monitord.service.workflows import Followed


class FinishedWorkflows:
    def __init__(self, keep_seconds: float) -> None:
        self.keep_seconds = keep_seconds
        self._by_path: dict[str, Ended] = {}

    def load(self, ended: list[Ended]) -> None:
        self._by_path = {e.dagman_out: e for e in ended}
        self.expire()

    def record(self, item: Followed, exit_code: int, stamp: tuple[int, int]) -> Ended:
        monitor = item.monitor
        ended = Ended(
            item.dagman_out,
            exit_code,
            *stamp,
            time.time(),
            wf_uuid=item.wf_uuid or "",
            outcome=item.outcome or "incomplete",
            events=monitor.events_total if monitor is not None else 0,
            dagman_exit=item.dagman_exit,
        )
        self._by_path[item.dagman_out] = ended
        return ended

    def expire(self) -> bool:
        """Forget the workflows older than the horizon; True when any went."""
        horizon = time.time() - self.keep_seconds
        old = [path for path, e in self._by_path.items() if e.at < horizon]
        for path in old:
            del self._by_path[path]
        return bool(old)

    def unchanged(self, path: str) -> Ended | None:
        """The end of ``path`` if its dagman.out is as it was then (nothing new to follow)."""
        ended = self._by_path.get(path)
        if ended is None or (ended.size, ended.mtime_ns) != file_stamp(path):
            return None
        return ended

    def entries(self) -> list[Ended]:
        return list(self._by_path.values())

    def statuses(self) -> list[FinishedStatus]:
        """The status's view, the most recent end first."""
        return [
            FinishedStatus(
                wf_uuid=e.wf_uuid,
                dagman_out=e.dagman_out,
                run_dir=os.path.dirname(e.dagman_out),
                outcome=e.outcome or "unknown",  # ended before outcomes were kept
                ended_at=e.at,
                events_total=e.events,
                exit_code=e.exit_code,
                dagman_exit=e.dagman_exit,
            )
            for e in sorted(self._by_path.values(), key=lambda e: e.at, reverse=True)
        ]


def ended_item(key: str, config: MonitorConfig, uid: int, ended: Ended) -> Followed:
    """A followed entry standing for a workflow that ended already (a re-attach gets it)."""
    item = Followed(key, config, "attach", uid, wf_uuid=ended.wf_uuid or None)
    item.exit_code = ended.exit_code
    item.outcome = ended.outcome or None
    return item
