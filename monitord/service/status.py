"""What the service reports about itself: one snapshot feeds /metrics, /status(.json) and the CLI.

The service (``monitord serve``) implements :class:`StatusSource`; the HTTP endpoint and
``monitord status`` only read snapshots, so they never touch workflow state directly and a
snapshot can travel as JSON between processes.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import orjson

from sinks.runtime.health import SinkHealth

# The job count columns of pegasus-status, in its order (%DONE is derived, see jobcounts).
JOB_COLUMNS: tuple[str, ...] = ("UNREADY", "READY", "PRE", "QUEUED", "POST", "SUCCESS", "FAILURE")


@dataclass(slots=True)
class WorkflowStatus:
    """One followed workflow, as of the snapshot."""

    wf_uuid: str
    dagman_out: str
    run_dir: str
    state: str  # e.g. "running", "success", "failure" (the service decides the words)
    jobs: dict[str, int]  # JOB_COLUMNS -> count
    percent_done: float
    lag_bytes: int  # dagman.out bytes not yet processed
    lag_seconds: float  # age of the oldest unprocessed dagman.out data (0 when caught up)
    events_per_second: float
    events_total: int
    undelivered: int = 0  # events handed to the sinks, not in them yet (spooled or queued)
    out_of_order: int = 0  # job states seen out of DAGMan's order (Workflow.out_of_order)
    zone_warnings: int = 0  # root workflow: its start warned of the local time zone


@dataclass(slots=True)
class PluginStatus:
    """One event plugin of one followed workflow (``sinks.plugins.host.plugin_snapshot``).

    ``state``: the plugin's (new, running, stopped, stuck, skipped); ``delivery``: the
    runtime's view of feeding it (up, draining, down, disabled; None when it never ran).
    """

    name: str
    workflow: str
    state: str
    delivery: str | None = None
    delivered: int = 0
    dropped: int = 0
    spooled: int = 0
    errors: int = 0
    restarts: int = 0
    last_error: str | None = None

    @property
    def healthy(self) -> bool:
        """Running, fed, and no error so far."""
        return (
            self.state in ("new", "running", "stopping", "stopped")
            and self.delivery in (None, "up", "draining")
            and not self.errors
        )


def plugin_status(workflow: str, plugin: SinkHealth) -> PluginStatus:
    """One entry of ``plugin_snapshot`` (a plugin's health, its hooks' in ``plugin``) as a
    :class:`PluginStatus`."""
    hooks = plugin.plugin
    assert hooks is not None  # (plugin_snapshot: a plugin's health carries its hooks)
    return PluginStatus(
        name=plugin.name,
        workflow=workflow,
        state=hooks.state,
        delivery=plugin.delivery_state,
        delivered=hooks.delivered,
        dropped=plugin.dropped,
        spooled=plugin.spooled,
        errors=hooks.errors,
        restarts=hooks.restarts or 0,
        last_error=hooks.last_error,
    )


# How a followed root workflow ended (FinishedStatus.outcome, the service's "workflow ended" log
# line): its DAGMan's exit status (the xwf.end status) said success or failure; "incomplete":
# following ended without DAGMan's exit line (DAGMan gone, file truncated, idle too long);
# "interrupted": an attach client asked for the end (like SIGINT to the daemon); "error": the
# workflow could not be followed.  A workflow the service only stopped is not finished.
OUTCOMES: tuple[str, ...] = ("success", "failure", "incomplete", "interrupted", "error")


@dataclass(slots=True)
class FinishedStatus:
    """A root workflow that ended lately (kept for ``[service] keep_finished_seconds``)."""

    wf_uuid: str
    dagman_out: str
    run_dir: str
    outcome: str  # one of OUTCOMES
    ended_at: float  # epoch seconds
    events_total: int = 0
    exit_code: int = 0  # the per-workflow daemon's exit status (0 even for a failed workflow)
    dagman_exit: int | None = None  # DAGMan's exit status, when it wrote one


@dataclass(slots=True)
class WatchedRootStatus:
    """A ``[[watch]] root``: can it be listed (as of the last scan), and the root workflows
    followed below it (however they came: watched, attached, resumed)."""

    root: str
    exists: bool
    workflows: int = 0
    problem: str | None = None  # e.g. "does not exist" (None when it exists and can be listed)


@dataclass(slots=True)
class ServiceSnapshot:
    started_at: float  # epoch seconds of the service process start
    workflows: list[WorkflowStatus] = field(default_factory=list)
    sinks: list[SinkHealth] = field(default_factory=list)  # one per destination, merged
    notifications_running: int = 0
    notifications_queued: int = 0
    plugins: list[PluginStatus] = field(default_factory=list)
    finished: list[FinishedStatus] = field(default_factory=list)  # most recent first
    roots: list[WatchedRootStatus] = field(default_factory=list)  # the [[watch]] roots


# What /status.json shows of a destination's SinkHealth, in this order; ``oldest`` is called
# ``oldest_age`` there, ``failures`` is ``retries`` + ``permanent_failures``.
SINK_FIELDS: tuple[str, ...] = (
    "name",
    "queued",
    "spooled",
    "failures",
    "state",
    "since",
    "spooled_bytes",
    "oldest",
    "retries",
    "permanent_failures",
    "workflows",
    "workflows_not_up",
    "last_error",
    "row_by_row_batches",
    "rows_rejected",
)
_SINK_KEYS = {"oldest": "oldest_age"}


def sink_json(health: SinkHealth) -> dict[str, Any]:
    """A destination's merged delivery health (``SinkPool.health``) as /status.json shows it."""
    return {_SINK_KEYS.get(name, name): getattr(health, name) for name in SINK_FIELDS}


class StatusSource(Protocol):
    """Anything that can describe the service now; called on the event loop, so it must be quick."""

    def snapshot(self) -> ServiceSnapshot: ...


class StatusFormatError(ValueError):
    """A status document that is not what :func:`to_json` writes."""


def to_json(snapshot: ServiceSnapshot) -> bytes:
    """The snapshot as JSON (the body of /status.json)."""
    doc = {f.name: getattr(snapshot, f.name) for f in fields(snapshot)}
    doc["sinks"] = [sink_json(h) for h in snapshot.sinks]
    return orjson.dumps(doc)


def from_json(data: bytes | str) -> ServiceSnapshot:
    """Parse what :func:`to_json` wrote; :class:`StatusFormatError` names what is wrong."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StatusFormatError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise StatusFormatError("not a JSON object")
    try:
        return ServiceSnapshot(
            started_at=float(doc["started_at"]),
            workflows=[_workflow(w) for w in _list(doc, "workflows")],
            sinks=[_sink(s) for s in _list(doc, "sinks")],
            notifications_running=int(doc.get("notifications_running", 0)),
            notifications_queued=int(doc.get("notifications_queued", 0)),
            plugins=[_plugin(p) for p in _list(doc, "plugins")],
            finished=[_finished(f) for f in _list(doc, "finished")],
            roots=[_root(r) for r in _list(doc, "roots")],
        )
    except KeyError as exc:
        raise StatusFormatError(f"missing key {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise StatusFormatError(f"bad value: {exc}") from None


def _list(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise StatusFormatError(f"{key!r} is not a list of objects")
    return value


def _sink(s: dict[str, Any]) -> SinkHealth:
    since = s.get("since")
    error = s.get("last_error")
    permanent = int(s.get("permanent_failures", 0))
    return SinkHealth(
        name=str(s["name"]),
        queued=int(s["queued"]),
        spooled=int(s["spooled"]),
        state=str(s.get("state", "up")),
        since=float(since) if since is not None else None,
        spooled_bytes=int(s.get("spooled_bytes", 0)),
        oldest=float(s.get("oldest_age", 0.0)),
        # failures = retries + permanent_failures: all retryable when a document lacks them
        retries=int(s.get("retries", int(s["failures"]) - permanent)),
        permanent_failures=permanent,
        workflows=int(s.get("workflows", 0)),
        workflows_not_up=tuple(str(w) for w in s.get("workflows_not_up", [])),
        last_error=str(error) if error is not None else None,
        row_by_row_batches=int(s.get("row_by_row_batches", 0)),
        rows_rejected=int(s.get("rows_rejected", 0)),
    )


def _plugin(p: dict[str, Any]) -> PluginStatus:
    error = p.get("last_error")
    return PluginStatus(
        name=str(p["name"]),
        workflow=str(p["workflow"]),
        state=str(p.get("state", "new")),
        delivery=p.get("delivery"),
        delivered=int(p.get("delivered", 0)),
        dropped=int(p.get("dropped", 0)),
        spooled=int(p.get("spooled", 0)),
        errors=int(p.get("errors", 0)),
        restarts=int(p.get("restarts", 0)),
        last_error=str(error) if error is not None else None,
    )


def _root(r: dict[str, Any]) -> WatchedRootStatus:
    problem = r.get("problem")
    return WatchedRootStatus(
        root=str(r["root"]),
        exists=bool(r["exists"]),
        workflows=int(r.get("workflows", 0)),
        problem=str(problem) if problem is not None else None,
    )


def _finished(f: dict[str, Any]) -> FinishedStatus:
    dagman_exit = f.get("dagman_exit")
    return FinishedStatus(
        wf_uuid=str(f["wf_uuid"]),
        dagman_out=str(f["dagman_out"]),
        run_dir=str(f["run_dir"]),
        outcome=str(f["outcome"]),
        ended_at=float(f["ended_at"]),
        events_total=int(f.get("events_total", 0)),
        exit_code=int(f.get("exit_code", 0)),
        dagman_exit=int(dagman_exit) if dagman_exit is not None else None,
    )


def _workflow(w: dict[str, Any]) -> WorkflowStatus:
    jobs = w["jobs"]
    if not isinstance(jobs, dict):
        raise StatusFormatError("'jobs' is not an object")
    return WorkflowStatus(
        wf_uuid=str(w["wf_uuid"]),
        dagman_out=str(w["dagman_out"]),
        run_dir=str(w["run_dir"]),
        state=str(w["state"]),
        jobs={str(k): int(v) for k, v in jobs.items()},
        percent_done=float(w["percent_done"]),
        lag_bytes=int(w["lag_bytes"]),
        lag_seconds=float(w["lag_seconds"]),
        events_per_second=float(w["events_per_second"]),
        events_total=int(w["events_total"]),
        undelivered=int(w.get("undelivered", 0)),
        out_of_order=int(w.get("out_of_order", 0)),
        zone_warnings=int(w.get("zone_warnings", 0)),
    )


class EventRate:
    """Events per second over a sliding window, for :attr:`WorkflowStatus.events_per_second`.

    ``add(n)`` when events are produced; ``rate()`` when a snapshot is taken.  Keeps one
    bucket per second, so memory stays at ``window`` entries whatever the event rate.
    """

    __slots__ = ("window", "_buckets", "_clock")

    def __init__(self, window: float = 60.0, clock: Any = time.monotonic) -> None:
        self.window = window
        self._clock = clock
        self._buckets: deque[list[float]] = deque()  # [second, count]

    def add(self, count: int = 1) -> None:
        now = int(self._clock())
        if self._buckets and self._buckets[-1][0] == now:
            self._buckets[-1][1] += count
        else:
            self._buckets.append([now, count])
            self._expire(now)

    def rate(self) -> float:
        now = self._clock()
        self._expire(now)
        total = sum(c for _, c in self._buckets)
        return total / self.window

    def _expire(self, now: float) -> None:
        buckets = self._buckets
        while buckets and buckets[0][0] <= now - self.window:
            buckets.popleft()
