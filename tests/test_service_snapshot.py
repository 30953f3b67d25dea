"""What the service's status snapshot reads of a followed workflow's live parts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from monitord.daemon.config import MonitorConfig
from monitord.service.metrics import render_metrics
from monitord.service.sinkpool import SinkPool
from monitord.service.snapshot import service_snapshot
from monitord.service.workflows import Followed, ServiceMonitor
from notifications.matching import Firing


async def test_running_and_queued_notification_scripts_show_in_the_snapshot(
    tmp_path: Path,
) -> None:
    """One slot (notifications max 1) and two firings: one script runs, one waits; both show
    in the snapshot and /metrics, and the counts fall back to 0 when they are gone."""
    out = str(tmp_path / "wf.dag.dagman.out")
    config = MonitorConfig(out, replay=False, notifications_max=1)
    pool = SinkPool(local_lanes=1)
    monitor = ServiceMonitor(
        config,
        watcher=SimpleNamespace(wait=None),  # type: ignore[arg-type]
        pool=pool,
        key=str(tmp_path),
    )
    followed = {str(tmp_path): Followed(out, config, "attach", 0, monitor=monitor)}
    inner = monitor.monitor
    inner.notifications.start(str(tmp_path), inner.ctx)
    notifier = monitor.notifier
    assert notifier is not None
    try:
        for n in range(2):
            env = {"PEGASUS_EVENT": "at_end", "PEGASUS_N": str(n)}
            notifier.pool.submit(Firing("job_a", "at_end", "sleep 60", env))
        snap = service_snapshot(followed, None, 1.0)
        assert (snap.notifications_running, snap.notifications_queued) == (1, 1)
        text = render_metrics(snap)
        assert "monitord_notifications_running 1.0" in text
        assert "monitord_notifications_queued 1.0" in text
    finally:
        stop = asyncio.Event()
        stop.set()
        await asyncio.wait_for(notifier.aclose(stop), 30)
        pool.close()
    snap = service_snapshot(followed, None, 1.0)
    assert (snap.notifications_running, snap.notifications_queued) == (0, 0)
