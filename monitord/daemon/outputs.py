"""A Monitor's events outputs: the destinations asked for, and its last word on its plugins."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import structlog

from monitord.core.readers.default_db import default_db_url
from monitord.daemon.config import MonitorConfig
from sinks.plugins.host import plugin_snapshot
from sinks.registry import build_dashboard_sink, build_sink
from sinks.runtime.base import Sink

log = structlog.get_logger(__name__)


@dataclass
class Destinations:
    """The events outputs asked for (-d, properties, the default DB), built but not opened."""

    sinks: list[Sink] = field(default_factory=list)
    requested: int = 0  # destinations asked for (the dashboard is not one)
    errors: list[str] = field(default_factory=list)  # why some could not even be created


def build_outputs(cfg: MonitorConfig, run_dir: str, bd: Any, *, restart: bool) -> Destinations:
    """Every destination ``cfg`` asks for; a bad one is logged, counted and left out."""
    dests = [d or default_db_url(run_dir, bd) for d in (cfg.dests or [None])]
    out = Destinations(requested=len(dests))
    for dest in dests:
        try:
            out.sinks.append(
                build_sink(
                    dest,
                    run_dir=run_dir,
                    restart=restart,
                    encoding=cfg.encoding,
                    root_wf_uuid=bd.wf_uuid,
                    pegasus_version=bd.planner_version,
                    properties=cfg.properties,
                )
            )
        except Exception as exc:  # a bad destination disables only itself
            log.error("cannot create events output, disabling it", error=str(exc))
            out.errors.append(str(exc))
    if cfg.dashboard and out.sinks:
        from sinks.sql.dashboard import default_dashboard_url

        try:
            out.sinks.append(
                build_dashboard_sink(
                    cfg.dashboard_url or default_dashboard_url(),
                    root_wf_uuid=bd.wf_uuid,
                    db_url=dests[0],
                    restart=restart,
                    pegasus_version=bd.planner_version,
                )
            )
        except Exception as exc:
            log.warning("dashboard disabled", error=str(exc))
    return out


def log_plugins(sinks: Any) -> None:
    """The daemon's last word on its event plugins: each one's counters and delivery state
    (a warning when one was skipped, raised, dropped events or was not fed to the end)."""
    plugins = plugin_snapshot(sinks)
    if not plugins:
        return
    keys = ("state", "delivery", "delivered", "dropped", "spooled", "errors", "restarts")
    summary = {
        p["name"]: {
            **{k: p[k] for k in keys if p.get(k) is not None},
            **({"last_error": p["last_error"]} if p.get("last_error") else {}),
        }
        for p in plugins
    }
    troubled = any(
        p.get("state") in ("skipped", "stuck")
        or p.get("errors")
        or p.get("dropped")
        or p.get("delivery") not in (None, "up")
        for p in plugins
    )
    (log.warning if troubled else log.info)("event plugins at exit", plugins=summary)
