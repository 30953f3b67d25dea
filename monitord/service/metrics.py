"""The service's /metrics: prometheus-client metric families built from one status snapshot.

A custom collector (no global gauges to keep in step): every scrape takes one
:class:`~monitord.service.status.ServiceSnapshot` and turns it into metric families, and
prometheus-client writes the exposition format (escaping, +Inf/NaN, counters' ``_total``).
To expose more (e.g. per-sink health), add a family in :meth:`SnapshotCollector.families`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from monitord.service.status import JOB_COLUMNS, OUTCOMES, ServiceSnapshot

PROMETHEUS_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # what generate_latest writes


def _gauge(
    name: str, help_text: str, labels: tuple[str, ...], samples: Iterable[tuple[tuple, float]]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, help_text, labels=list(labels))
    for values, value in samples:
        family.add_metric(list(values), value)
    return family


def _counter(
    name: str, help_text: str, labels: tuple[str, ...], samples: Iterable[tuple[tuple, float]]
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, help_text, labels=list(labels))
    for values, value in samples:
        family.add_metric(list(values), value)
    return family


class SnapshotCollector:
    """A prometheus-client collector reading a fresh snapshot on every scrape."""

    def __init__(self, snapshot: Callable[[], ServiceSnapshot]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        yield from self.families(self._snapshot())

    @staticmethod
    def families(snap: ServiceSnapshot) -> Iterator[Metric]:
        wfs = snap.workflows
        wf = ("wf_uuid",)
        yield _gauge(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            (),
            [((), snap.started_at)],
        )
        yield _gauge("monitord_workflows", "Workflows followed.", (), [((), len(wfs))])
        yield _gauge(
            "monitord_watch_root_exists",
            "1 when a [[watch]] root could be listed at its last scan, 0 when it is missing.",
            ("root",),
            [((r.root,), 1.0 if r.exists else 0.0) for r in snap.roots],
        )
        yield _gauge(
            "monitord_watch_root_workflows",
            "Root workflows followed below a [[watch]] root.",
            ("root",),
            [((r.root,), r.workflows) for r in snap.roots],
        )
        outcomes = Counter(f.outcome for f in snap.finished)
        yield _gauge(
            "monitord_workflows_finished",
            "Root workflows that ended lately (kept for [service] keep_finished_seconds), "
            "per outcome: success, failure, incomplete, interrupted, error.",
            ("outcome",),
            [((o,), outcomes.get(o, 0)) for o in sorted(set(OUTCOMES) | set(outcomes))],
        )
        yield _gauge(
            "monitord_workflow_lag_bytes",
            "Bytes of dagman.out not processed yet.",
            wf,
            [((w.wf_uuid,), w.lag_bytes) for w in wfs],
        )
        yield _gauge(
            "monitord_workflow_lag_seconds",
            "Age of the oldest dagman.out data not processed yet.",
            wf,
            [((w.wf_uuid,), w.lag_seconds) for w in wfs],
        )
        yield _gauge(
            "monitord_workflow_events_per_second",
            "Stampede events produced per second (recent average).",
            wf,
            [((w.wf_uuid,), w.events_per_second) for w in wfs],
        )
        yield _counter(
            "monitord_workflow_events_total",
            "Stampede events produced.",
            wf,
            [((w.wf_uuid,), w.events_total) for w in wfs],
        )
        yield _counter(
            "monitord_workflow_job_states_out_of_order",
            "Job states seen out of DAGMan's order (handled anyway; logged as a warning).",
            wf,
            [((w.wf_uuid,), w.out_of_order) for w in wfs],
        )
        yield _gauge(
            "monitord_workflow_jobs",
            "DAG nodes per state, as pegasus-status counts them.",
            ("wf_uuid", "state"),
            [((w.wf_uuid, c), w.jobs.get(c, 0)) for w in wfs for c in JOB_COLUMNS],
        )
        yield _gauge(
            "monitord_workflow_percent_done",
            "Nodes done successfully, in percent of all nodes.",
            wf,
            [((w.wf_uuid,), w.percent_done) for w in wfs],
        )
        sink = ("sink",)
        sinks = snap.sinks
        yield _gauge(
            "monitord_sink_up",
            "1 while every workflow's delivery to the sink works (up or draining a backlog), "
            "0 while any is down (retrying) or disabled.",
            sink,
            [((s.name,), 1.0 if s.healthy else 0.0) for s in sinks],
        )
        yield _gauge(
            "monitord_sink_disabled",
            "Workflows whose delivery to the sink was given up (permanent error).",
            sink,
            [((s.name,), 1.0 if s.state == "disabled" else 0.0) for s in sinks],
        )
        yield _gauge(
            "monitord_sink_queued",
            "Event batches waiting in memory for the sink.",
            sink,
            [((s.name,), s.queued) for s in sinks],
        )
        yield _gauge(
            "monitord_sink_spooled_events",
            "Events spooled on disk, not yet delivered to the sink.",
            sink,
            [((s.name,), s.spooled) for s in sinks],
        )
        yield _gauge(
            "monitord_sink_spooled_bytes",
            "Bytes of the spooled events not yet delivered to the sink.",
            sink,
            [((s.name,), s.spooled_bytes) for s in sinks],
        )
        yield _gauge(
            "monitord_sink_oldest_undelivered_seconds",
            "Age of the oldest event spooled for the sink and not delivered yet (0 when none).",
            sink,
            [((s.name,), s.oldest) for s in sinks],
        )
        yield _counter(
            "monitord_sink_retries_total",
            "Failed attempts to deliver to the sink that will be retried (retryable errors).",
            sink,
            [((s.name,), s.retries) for s in sinks],
        )
        yield _counter(
            "monitord_sink_events_written_total",
            "Events the sink took (written, published, exported), over every workflow.",
            sink,
            [((s.name,), s.events_written) for s in sinks],
        )
        yield _counter(
            "monitord_sink_permanent_failures_total",
            "Permanent errors that disabled a workflow's delivery to the sink.",
            sink,
            [((s.name,), s.permanent_failures) for s in sinks],
        )
        yield _counter(
            "monitord_sink_failures_total",
            "Failed attempts to deliver to the sink (retryable and permanent).",
            sink,
            [((s.name,), s.failures) for s in sinks],
        )
        yield _counter(
            "monitord_sink_row_by_row_batches_total",
            "Batches the sink's database rejected as a whole (an unexpected row) and that were "
            "written again row by row; the log has one line for each.",
            sink,
            [((s.name,), s.row_by_row_batches) for s in sinks],
        )
        yield _counter(
            "monitord_sink_rows_rejected_total",
            "Rows the sink's database refused in batches written row by row (skipped).",
            sink,
            [((s.name,), s.rows_rejected) for s in sinks],
        )
        plugin = ("plugin", "workflow")
        plugins = snap.plugins
        yield _gauge(
            "monitord_plugin_up",
            "1 while the plugin runs, is fed (delivery up or draining) and has raised no error; "
            "0 when skipped, stuck, not fed (down, disabled) or after an error.",
            plugin,
            [((p.name, p.workflow), 1.0 if p.healthy else 0.0) for p in plugins],
        )
        yield _counter(
            "monitord_plugin_delivered_total",
            "Events handed to the plugin's handle_event (those it raised on included).",
            plugin,
            [((p.name, p.workflow), p.delivered) for p in plugins],
        )
        yield _counter(
            "monitord_plugin_dropped_total",
            "Events not given to the plugin (its buffer full under the drop policies).",
            plugin,
            [((p.name, p.workflow), p.dropped) for p in plugins],
        )
        yield _counter(
            "monitord_plugin_errors_total",
            "Hook calls that raised (the event is not retried) and, with isolation = process, "
            "deaths of its process.",
            plugin,
            [((p.name, p.workflow), p.errors) for p in plugins],
        )
        yield _counter(
            "monitord_plugin_restarts_total",
            "Restarts of the plugin's process after it died (isolation = process only).",
            plugin,
            [((p.name, p.workflow), p.restarts) for p in plugins],
        )
        yield _gauge(
            "monitord_plugin_spooled_events",
            "Events spooled on disk for the plugin, not yet handed to it (spool policy).",
            plugin,
            [((p.name, p.workflow), p.spooled) for p in plugins],
        )
        yield _gauge(
            "monitord_notifications_running",
            "Notification scripts running.",
            (),
            [((), snap.notifications_running)],
        )
        yield _gauge(
            "monitord_notifications_queued",
            "Notifications waiting for a free slot.",
            (),
            [((), snap.notifications_queued)],
        )


def metrics_registry(snapshot: Callable[[], ServiceSnapshot]) -> CollectorRegistry:
    """A registry of its own (not prometheus-client's global one) holding the snapshot collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(snapshot))
    return registry


def render_metrics(snapshot: ServiceSnapshot) -> str:
    """The snapshot in the Prometheus text exposition format 0.0.4."""
    return generate_latest(metrics_registry(lambda: snapshot)).decode()
