"""The Prometheus exposition of a :class:`~monitord.service.status.ServiceSnapshot` (/metrics)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from monitord.service.status import JOB_COLUMNS, ServiceSnapshot

PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def render_metrics(snapshot: ServiceSnapshot) -> str:
    """The snapshot in the Prometheus text exposition format 0.0.4."""
    out: list[str] = []

    def family(
        name: str, kind: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]
    ) -> None:
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            if labels:
                text = ",".join(f'{k}="{_label_value(v)}"' for k, v in labels.items())
                out.append(f"{name}{{{text}}} {_number(value)}")
            else:
                out.append(f"{name} {_number(value)}")

    wfs = snapshot.workflows
    family(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        [({}, snapshot.started_at)],
    )
    family("monitord_workflows", "gauge", "Workflows followed.", [({}, len(wfs))])
    family(
        "monitord_workflow_lag_bytes",
        "gauge",
        "Bytes of dagman.out not processed yet.",
        [({"wf_uuid": w.wf_uuid}, w.lag_bytes) for w in wfs],
    )
    family(
        "monitord_workflow_lag_seconds",
        "gauge",
        "Age of the oldest dagman.out data not processed yet.",
        [({"wf_uuid": w.wf_uuid}, w.lag_seconds) for w in wfs],
    )
    family(
        "monitord_workflow_events_per_second",
        "gauge",
        "Stampede events produced per second (recent average).",
        [({"wf_uuid": w.wf_uuid}, w.events_per_second) for w in wfs],
    )
    family(
        "monitord_workflow_events_total",
        "counter",
        "Stampede events produced.",
        [({"wf_uuid": w.wf_uuid}, w.events_total) for w in wfs],
    )
    family(
        "monitord_workflow_jobs",
        "gauge",
        "DAG nodes per state, as pegasus-status counts them.",
        [
            ({"wf_uuid": w.wf_uuid, "state": column}, w.jobs.get(column, 0))
            for w in wfs
            for column in JOB_COLUMNS
        ],
    )
    family(
        "monitord_workflow_percent_done",
        "gauge",
        "Nodes done successfully, in percent of all nodes.",
        [({"wf_uuid": w.wf_uuid}, w.percent_done) for w in wfs],
    )
    sinks = snapshot.sinks
    family(
        "monitord_sink_queued",
        "gauge",
        "Event batches waiting for the sink.",
        [({"sink": s.name}, s.queued) for s in sinks],
    )
    family(
        "monitord_sink_spooled",
        "gauge",
        "Event batches spooled to disk for the sink.",
        [({"sink": s.name}, s.spooled) for s in sinks],
    )
    family(
        "monitord_sink_failures_total",
        "counter",
        "Failed attempts to deliver to the sink.",
        [({"sink": s.name}, s.failures) for s in sinks],
    )
    family(
        "monitord_notifications_running",
        "gauge",
        "Notification scripts running.",
        [({}, snapshot.notifications_running)],
    )
    family(
        "monitord_notifications_queued",
        "gauge",
        "Notifications waiting for a free slot.",
        [({}, snapshot.notifications_queued)],
    )
    return "\n".join(out) + "\n"
