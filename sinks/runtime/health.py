"""A sink's delivery health: what health checks, status pages and metrics show."""

from __future__ import annotations

from typing import Any

from sinks.runtime.policy import DISABLED, DOWN, DRAINING, UP

_SEVERITY = {UP: 0, DRAINING: 1, DOWN: 2, DISABLED: 3}


def merge_health(name: str, snaps: list[dict[str, Any]]) -> dict[str, Any]:
    """One destination's health from its deliveries: the worst state (and since when), the
    backlog summed, the oldest undelivered event, the workflows not delivering."""
    worst = max(snaps, key=lambda s: _SEVERITY.get(s["state"], 0))
    state = worst["state"]
    since = [s["since"] for s in snaps if s["state"] == state and s.get("since")]
    return {
        "name": name,
        "state": state,
        "since": min(since) if since else None,
        "last_error": worst.get("last_error") if state != UP else None,
        "workflows": len(snaps),
        "workflows_not_up": sorted(
            str(s["workflow"]) for s in snaps if s["state"] != UP and s.get("workflow")
        ),
        "spooled_events": sum(int(s.get("spooled_events", 0)) for s in snaps),
        "spooled_bytes": sum(int(s.get("spooled_bytes", 0)) for s in snaps),
        "oldest_age": max(float(s.get("oldest_age", 0.0)) for s in snaps),
        "queued_batches": sum(int(s.get("queued_batches", 0)) for s in snaps),
        "retries": sum(int(s.get("retries", 0)) for s in snaps),
        "permanent_failures": sum(int(s.get("permanent_failures", 0)) for s in snaps),
        "events_written": sum(int(s.get("events_written", 0)) for s in snaps),
        "row_by_row_batches": sum(int(s.get("row_by_row_batches", 0)) for s in snaps),
        "rows_rejected": sum(int(s.get("rows_rejected", 0)) for s in snaps),
    }
