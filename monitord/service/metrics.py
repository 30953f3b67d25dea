"""The service's /metrics: prometheus-client metric families built from one status snapshot.

A custom collector (no global gauges to keep in step): every scrape takes one
:class:`~monitord.service.status.ServiceSnapshot` and turns it into metric families, and
prometheus-client writes the exposition format (escaping, +Inf/NaN, counters' ``_total``).
The families are a table (:data:`SECTIONS`): to expose more, add a :class:`Family` to the
section whose rows it reads, or a :class:`Section` for new rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from monitord.service.status import (
    JOB_COLUMNS,
    OUTCOMES,
    PluginStatus,
    ServiceSnapshot,
    WatchedRootStatus,
    WorkflowStatus,
)
from sinks.runtime.health import SinkHealth

PROMETHEUS_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # what generate_latest writes


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Family(Generic[R]):
    """One metric family: a gauge (or a counter) whose value for a row is ``value(row)``."""

    name: str
    help: str
    value: Callable[[R], float]
    counter: bool = False


@dataclass(frozen=True, slots=True)
class Section(Generic[R]):
    """Families that share their rows (``rows`` of the snapshot) and their labels (``key``)."""

    rows: Callable[[ServiceSnapshot], Iterable[R]]
    labels: tuple[str, ...]
    key: Callable[[R], tuple[str, ...]]
    families: tuple[Family[R], ...]

    def collect(self, snap: ServiceSnapshot) -> Iterator[Metric]:
        rows = list(self.rows(snap))
        for f in self.families:
            kind = CounterMetricFamily if f.counter else GaugeMetricFamily
            family = kind(f.name, f.help, labels=list(self.labels))
            for row in rows:
                family.add_metric(list(self.key(row)), f.value(row))
            yield family


def _whole(snap: ServiceSnapshot) -> tuple[str, ...]:
    return ()


def _outcomes(snap: ServiceSnapshot) -> list[tuple[str, int]]:
    """(outcome, root workflows that ended so lately), every outcome listed, in name order."""
    outcomes = Counter(f.outcome for f in snap.finished)
    return [(o, outcomes.get(o, 0)) for o in sorted(set(OUTCOMES) | set(outcomes))]


def _jobs(snap: ServiceSnapshot) -> list[tuple[WorkflowStatus, str]]:
    return [(w, c) for w in snap.workflows for c in JOB_COLUMNS]


def _wf(w: WorkflowStatus) -> tuple[str, ...]:
    return (w.wf_uuid,)


def _sink(s: SinkHealth) -> tuple[str, ...]:
    return (s.name,)


_PROCESS: Section[ServiceSnapshot] = Section(
    lambda snap: [snap],
    (),
    _whole,
    (
        Family(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            lambda snap: snap.started_at,
        ),
        Family("monitord_workflows", "Workflows followed.", lambda snap: len(snap.workflows)),
    ),
)
_ROOTS: Section[WatchedRootStatus] = Section(
    lambda snap: snap.roots,
    ("root",),
    lambda r: (r.root,),
    (
        Family(
            "monitord_watch_root_exists",
            "1 when a [[watch]] root could be listed at its last scan, 0 when it is missing.",
            lambda r: 1.0 if r.exists else 0.0,
        ),
        Family(
            "monitord_watch_root_workflows",
            "Root workflows followed below a [[watch]] root.",
            lambda r: r.workflows,
        ),
    ),
)
_FINISHED: Section[tuple[str, int]] = Section(
    _outcomes,
    ("outcome",),
    lambda o: (o[0],),
    (
        Family(
            "monitord_workflows_finished",
            "Root workflows that ended lately (kept for [service] keep_finished_seconds), "
            "per outcome: success, failure, incomplete, interrupted, error.",
            lambda o: o[1],
        ),
    ),
)
_WORKFLOWS: Section[WorkflowStatus] = Section(
    lambda snap: snap.workflows,
    ("wf_uuid",),
    _wf,
    (
        Family(
            "monitord_workflow_lag_bytes",
            "Bytes of dagman.out not processed yet.",
            lambda w: w.lag_bytes,
        ),
        Family(
            "monitord_workflow_lag_seconds",
            "Age of the oldest dagman.out data not processed yet.",
            lambda w: w.lag_seconds,
        ),
        Family(
            "monitord_workflow_events_per_second",
            "Stampede events produced per second (recent average).",
            lambda w: w.events_per_second,
        ),
        Family(
            "monitord_workflow_events_total",
            "Stampede events produced.",
            lambda w: w.events_total,
            counter=True,
        ),
        Family(
            "monitord_workflow_job_states_out_of_order",
            "Job states seen out of DAGMan's order (handled anyway; logged as a warning).",
            lambda w: w.out_of_order,
            counter=True,
        ),
        Family(
            "monitord_workflow_time_zone_warnings",
            "Start-ups that warned the local time zone differs from the planner's (every "
            "dagman.out time stored shifted; the warning line names the TZ to use).",
            lambda w: w.zone_warnings,
            counter=True,
        ),
    ),
)
_JOBS: Section[tuple[WorkflowStatus, str]] = Section(
    _jobs,
    ("wf_uuid", "state"),
    lambda j: (j[0].wf_uuid, j[1]),
    (
        Family(
            "monitord_workflow_jobs",
            "DAG nodes per state, as pegasus-status counts them.",
            lambda j: j[0].jobs.get(j[1], 0),
        ),
    ),
)
_PROGRESS: Section[WorkflowStatus] = Section(
    lambda snap: snap.workflows,
    ("wf_uuid",),
    _wf,
    (
        Family(
            "monitord_workflow_percent_done",
            "Nodes done successfully, in percent of all nodes.",
            lambda w: w.percent_done,
        ),
    ),
)
_SINKS: Section[SinkHealth] = Section(
    lambda snap: snap.sinks,
    ("sink",),
    _sink,
    (
        Family(
            "monitord_sink_up",
            "1 while every workflow's delivery to the sink works (up or draining a backlog), "
            "0 while any is down (retrying) or disabled.",
            lambda s: 1.0 if s.healthy else 0.0,
        ),
        Family(
            "monitord_sink_disabled",
            "Workflows whose delivery to the sink was given up (permanent error).",
            lambda s: 1.0 if s.state == "disabled" else 0.0,
        ),
        Family(
            "monitord_sink_queued",
            "Event batches waiting in memory for the sink.",
            lambda s: s.queued,
        ),
        Family(
            "monitord_sink_spooled_events",
            "Events spooled on disk, not yet delivered to the sink.",
            lambda s: s.spooled,
        ),
        Family(
            "monitord_sink_spooled_bytes",
            "Bytes of the spooled events not yet delivered to the sink.",
            lambda s: s.spooled_bytes,
        ),
        Family(
            "monitord_sink_oldest_undelivered_seconds",
            "Age of the oldest event spooled for the sink and not delivered yet (0 when none).",
            lambda s: s.oldest,
        ),
        Family(
            "monitord_sink_retries_total",
            "Failed attempts to deliver to the sink that will be retried (retryable errors).",
            lambda s: s.retries,
            counter=True,
        ),
        Family(
            "monitord_sink_events_written_total",
            "Events the sink took (written, published, exported), over every workflow.",
            lambda s: s.events_written,
            counter=True,
        ),
        Family(
            "monitord_sink_permanent_failures_total",
            "Permanent errors that disabled a workflow's delivery to the sink.",
            lambda s: s.permanent_failures,
            counter=True,
        ),
        Family(
            "monitord_sink_failures_total",
            "Failed attempts to deliver to the sink (retryable and permanent).",
            lambda s: s.failures,
            counter=True,
        ),
        Family(
            "monitord_sink_row_by_row_batches_total",
            "Batches the sink's database rejected as a whole (an unexpected row) and that were "
            "written again row by row; the log has one line for each.",
            lambda s: s.row_by_row_batches,
            counter=True,
        ),
        Family(
            "monitord_sink_rows_rejected_total",
            "Rows the sink's database refused in batches written row by row (skipped).",
            lambda s: s.rows_rejected,
            counter=True,
        ),
    ),
)
_PLUGINS: Section[PluginStatus] = Section(
    lambda snap: snap.plugins,
    ("plugin", "workflow"),
    lambda p: (p.name, p.workflow),
    (
        Family(
            "monitord_plugin_up",
            "1 while the plugin runs, is fed (delivery up or draining) and has raised no error; "
            "0 when skipped, stuck, not fed (down, disabled) or after an error.",
            lambda p: 1.0 if p.healthy else 0.0,
        ),
        Family(
            "monitord_plugin_delivered_total",
            "Events handed to the plugin's handle_event (those it raised on included).",
            lambda p: p.delivered,
            counter=True,
        ),
        Family(
            "monitord_plugin_dropped_total",
            "Events not given to the plugin (its buffer full under the drop policies).",
            lambda p: p.dropped,
            counter=True,
        ),
        Family(
            "monitord_plugin_errors_total",
            "Hook calls that raised (the event is not retried) and, with isolation = process, "
            "deaths of its process.",
            lambda p: p.errors,
            counter=True,
        ),
        Family(
            "monitord_plugin_restarts_total",
            "Restarts of the plugin's process after it died (isolation = process only).",
            lambda p: p.restarts,
            counter=True,
        ),
        Family(
            "monitord_plugin_spooled_events",
            "Events spooled on disk for the plugin, not yet handed to it (spool policy).",
            lambda p: p.spooled,
        ),
    ),
)
_NOTIFICATIONS: Section[ServiceSnapshot] = Section(
    lambda snap: [snap],
    (),
    _whole,
    (
        Family(
            "monitord_notifications_running",
            "Notification scripts running.",
            lambda snap: snap.notifications_running,
        ),
        Family(
            "monitord_notifications_queued",
            "Notifications waiting for a free slot.",
            lambda snap: snap.notifications_queued,
        ),
    ),
)

# Every family /metrics shows, in the order it shows them.
SECTIONS: tuple[Section[Any], ...] = (
    _PROCESS,
    _ROOTS,
    _FINISHED,
    _WORKFLOWS,
    _JOBS,
    _PROGRESS,
    _SINKS,
    _PLUGINS,
    _NOTIFICATIONS,
)


class SnapshotCollector:
    """A prometheus-client collector reading a fresh snapshot on every scrape."""

    def __init__(self, snapshot: Callable[[], ServiceSnapshot]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        yield from self.families(self._snapshot())

    @staticmethod
    def families(snap: ServiceSnapshot) -> Iterator[Metric]:
        for section in SECTIONS:
            yield from section.collect(snap)


def metrics_registry(snapshot: Callable[[], ServiceSnapshot]) -> CollectorRegistry:
    """A registry of its own (not prometheus-client's global one) holding the snapshot collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(snapshot))
    return registry


def render_metrics(snapshot: ServiceSnapshot) -> str:
    """The snapshot in the Prometheus text exposition format 0.0.4."""
    return generate_latest(metrics_registry(lambda: snapshot)).decode()
