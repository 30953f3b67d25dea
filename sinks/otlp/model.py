"""Stampede events -> finished spans: the trace model of docs/traces.md, pure and stateful.

A sink sees batches, but a job instance's span needs its first and last event, which may
fall in different batches: :class:`TraceModel` keeps the open job instances and workflow runs
between :meth:`TraceModel.feed` calls and returns each span once it is complete -- a job
instance when it ends (``post.end``, or ``main.end`` when no POST script started), an
invocation at its ``inv.end``, a workflow run at ``xwf.end``.  Ids are hashes of Stampede's
own keys (:mod:`sinks.otlp.spans`), times the events' own ``ts``: feeding the same events
again, in a fresh model, gives the very same spans.

Semantic conventions: OpenTelemetry semconv 1.34.0 (``SCHEMA_URL``): the CI/CD pipeline run
span (kind SERVER, ``cicd.pipeline.*``, ``error.type``) and its task runs
(``cicd.pipeline.task.*``); Pegasus' own values are ``pegasus.*`` attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from monitord.core.events import (
    UNSET as ABSENT,
)
from monitord.core.events import (
    InvEnd,
    InvStart,
    JobInfo,
    JobInstAbortInfo,
    JobInstGlobusSubmitEnd,
    JobInstGlobusSubmitStart,
    JobInstGridSubmitEnd,
    JobInstGridSubmitStart,
    JobInstHeldEnd,
    JobInstHeldStart,
    JobInstHostInfo,
    JobInstImageInfo,
    JobInstMainEnd,
    JobInstMainStart,
    JobInstMainTerm,
    JobInstPostEnd,
    JobInstPostStart,
    JobInstPostTerm,
    JobInstPreEnd,
    JobInstPreStart,
    JobInstPreTerm,
    JobInstRemoteError,
    JobInstSubmitEnd,
    JobInstSubmitStart,
    StampedeEvent,
    WfPlan,
    XwfEnd,
    XwfMapSubwfJob,
    XwfStart,
)
from sinks.otlp.spans import (
    ERROR,
    INTERNAL,
    SERVER,
    UNSET,
    AttrValue,
    Span,
    SpanEvent,
    SpanLink,
    invocation_span_id,
    job_span_id,
    trace_id,
    workflow_span_id,
)

SEMCONV_VERSION = "1.34.0"
STATE_VERSION = 1  # of TraceModel.to_state
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# cicd.pipeline.result / cicd.pipeline.task.run.result values
SUCCESS = "success"
FAILURE = "failure"
CANCELLATION = "cancellation"

#: a job instance's Stampede events (by class) -> the name of its span event (None: not shown)
LIFECYCLE: dict[type[StampedeEvent], str | None] = {
    JobInstPreStart: "pre_script.start",
    JobInstPreTerm: "pre_script.term",
    JobInstPreEnd: "pre_script.end",
    JobInstSubmitStart: "submit.start",
    JobInstSubmitEnd: "submit.end",
    JobInstGridSubmitStart: "grid_submit.start",
    JobInstGridSubmitEnd: "grid_submit.end",
    JobInstGlobusSubmitStart: "globus_submit.start",
    JobInstGlobusSubmitEnd: "globus_submit.end",
    JobInstMainStart: "execute",
    JobInstMainTerm: "terminated",  # status -1: evicted
    JobInstHeldStart: "held",
    JobInstHeldEnd: "released",
    JobInstAbortInfo: "aborted",
    JobInstRemoteError: "remote_error",
    JobInstImageInfo: None,  # no size in it: nothing to show
    JobInstMainEnd: "main.end",
    JobInstPostStart: "post_script.start",
    JobInstPostTerm: "post_script.term",
    JobInstPostEnd: "post_script.end",
}
_SUBMIT_ENDS = (JobInstSubmitEnd, JobInstGridSubmitEnd, JobInstGlobusSubmitEnd)

#: a workflow event's fixed attributes (fields) -> the workflow span's attributes
WORKFLOW_ATTRS = {
    "submit_dir": "pegasus.wf.submit_dir",
    "submit_hostname": "pegasus.wf.submit_hostname",
    "wf_user": "pegasus.wf.user",
    "pegasus_version": "pegasus.version",
    "dax": "pegasus.wf.dax",
    "dag": "pegasus.wf.dag",
}

#: ``inv.end`` fields -> the invocation span's attributes
INVOCATION_ATTRS = {
    "inv_id": "pegasus.inv.id",
    "task_id": "pegasus.task.id",
    "transformation": "pegasus.transformation",
    "exitcode": "pegasus.inv.exitcode",
    "executable": "pegasus.inv.executable",
    "remote_cpu_time": "pegasus.inv.remote_cpu_time",
    "maxrss": "pegasus.inv.maxrss",
}

JobKey = tuple[str, str, int]  # (workflow uuid, node name, job_submit_seq)


def _v(value: Any) -> Any:
    """A field's value, ``None`` when the event does not carry it."""
    return None if value is ABSENT else value


def _opt(event: StampedeEvent, field: str) -> Any:
    """A field only some of the job instance's kinds have (``status``, ``exitcode``)."""
    return _v(getattr(event, field, None))


def ns(ts: Any) -> int | None:
    """An event's epoch seconds (int, float or text) in nanoseconds, to the microsecond."""
    try:
        return round(float(ts) * 1_000_000) * 1000
    except (TypeError, ValueError):
        return None


def _number(value: Any) -> AttrValue | None:
    """An exit code or size as a number when it is one (YAML gives ints, the rest text)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return value
    try:
        return int(str(value))
    except ValueError:
        try:
            return float(str(value))
        except ValueError:
            return str(value)


def _put(attrs: dict[str, AttrValue], key: str, value: Any) -> None:
    """Set an attribute unless the value is null (OTLP has no null attribute)."""
    if value is None:
        return
    if isinstance(value, str | int | float | bool):
        attrs[key] = value
    else:
        attrs[key] = str(value)


@dataclass
class WorkflowRun:
    """A workflow between its ``xwf.start`` and ``xwf.end``."""

    uuid: str
    root_uuid: str
    restart: int
    trace: bytes
    start_ns: int
    attrs: dict[str, AttrValue]


@dataclass
class JobInstance:
    """A job instance whose span is not finished yet."""

    start_ns: int
    end_ns: int
    retry: int
    events: list[SpanEvent] = field(default_factory=list)
    attrs: dict[str, AttrValue] = field(default_factory=dict)
    post_started: bool = False
    main_status: int | None = None
    post_status: int | None = None
    failed_step: str | None = None  # error.type when the instance failed
    aborted: bool = False


class TraceModel:
    """The open workflow runs and job instances of every workflow a sink receives."""

    def __init__(self) -> None:
        self.runs: dict[str, WorkflowRun] = {}  # by workflow uuid: its current run
        self.root_restart: dict[str, int] = {}  # root uuid -> its current restart_count
        self.labels: dict[str, str] = {}  # workflow uuid -> dax label (wf.plan)
        self.parents: dict[str, JobKey] = {}  # sub-workflow uuid -> the job instance that ran it
        self.job_types: dict[tuple[str, str], str] = {}  # (wf, node) -> type_desc (job.info)
        self.jobs: dict[JobKey, JobInstance] = {}
        self.closed: set[JobKey] = set()  # instances whose span was emitted (late POST events)
        self.instances: dict[tuple[str, str], int] = {}  # (wf, node) -> instances seen
        self.inv_starts: dict[tuple[str, str, int, int], int] = {}

    # ------------------------------------------------------------------ entry point
    def feed(self, events: Iterable[StampedeEvent]) -> list[Span]:
        """The spans these events complete, in the order they completed."""
        out: list[Span] = []
        for event in events:
            kind = type(event)
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, event, out)
            elif kind in LIFECYCLE:
                self._lifecycle(event, out)
        return out

    # ------------------------------------------------------------------ clean stop and start
    def to_state(self) -> dict[str, Any]:
        """Everything between two batches, as JSON-able data (a clean stop keeps it)."""
        return {
            "version": STATE_VERSION,
            "runs": [
                [r.uuid, r.root_uuid, r.restart, r.trace.hex(), r.start_ns, r.attrs]
                for r in self.runs.values()
            ],
            "root_restart": self.root_restart,
            "labels": self.labels,
            "parents": [[sub, *key] for sub, key in self.parents.items()],
            "job_types": [[wf, node, t] for (wf, node), t in self.job_types.items()],
            "jobs": [[*key, _job_state(job)] for key, job in self.jobs.items()],
            "closed": [list(key) for key in self.closed],
            "instances": [[wf, node, n] for (wf, node), n in self.instances.items()],
            "inv_starts": [[*key, t] for key, t in self.inv_starts.items()],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> TraceModel:
        """The model :meth:`to_state` saved; ValueError when it is not one."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"trace state version {state.get('version')!r}")
        model = cls()
        try:
            for uuid, root, restart, trace, start, attrs in state["runs"]:
                model.runs[uuid] = WorkflowRun(
                    uuid, root, int(restart), bytes.fromhex(trace), int(start), dict(attrs)
                )
            model.root_restart = {k: int(v) for k, v in state["root_restart"].items()}
            model.labels = dict(state["labels"])
            model.parents = {sub: (wf, node, int(seq)) for sub, wf, node, seq in state["parents"]}
            model.job_types = {(wf, node): t for wf, node, t in state["job_types"]}
            for wf, node, seq, job in state["jobs"]:
                model.jobs[(wf, node, int(seq))] = _job_from_state(job)
            model.closed = {(wf, node, int(seq)) for wf, node, seq in state["closed"]}
            model.instances = {(wf, node): int(n) for wf, node, n in state["instances"]}
            model.inv_starts = {
                (wf, node, int(seq), int(inv)): int(t)
                for wf, node, seq, inv, t in state["inv_starts"]
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"damaged trace state: {exc!r}") from None
        return model

    @property
    def open_spans(self) -> int:
        """Workflow runs and job instances waiting for their end."""
        return len(self.runs) + len(self.jobs)

    # ------------------------------------------------------------------ ids
    def _trace_of(self, wf: str, root: Any) -> bytes:
        run = self.runs.get(wf)
        if run is not None:
            return run.trace
        root = _v(root) or wf
        return trace_id(root, self.root_restart.get(root, 0))

    # ------------------------------------------------------------------ workflows
    def _wf_plan(self, event: WfPlan, out: list[Span]) -> None:
        if event.dax_label:
            self.labels[event.xwf_id] = str(event.dax_label)

    def _job_info(self, event: JobInfo, out: list[Span]) -> None:
        if event.type_desc and event.job_id:
            self.job_types[(event.xwf_id, event.job_id)] = str(event.type_desc)

    def _subwf_map(self, event: XwfMapSubwfJob, out: list[Span]) -> None:
        self.parents[event.subwf_id] = (event.xwf_id, event.job_id, event.job_inst_id)

    def _xwf_start(self, event: XwfStart | XwfEnd, out: list[Span]) -> None:
        wf = event.xwf_id
        root = _v(event.root_xwf_id) or wf
        restart = int(event.restart_count)
        if wf == root:
            self.root_restart[root] = restart
        wf_attrs: dict[str, AttrValue] = {}
        for attr, name in WORKFLOW_ATTRS.items():
            _put(wf_attrs, name, _v(getattr(event, attr)))
        self.runs[wf] = WorkflowRun(
            uuid=wf,
            root_uuid=root,
            restart=restart,
            trace=trace_id(root, self.root_restart.get(root, 0)),
            start_ns=ns(event.ts) or 0,
            attrs=wf_attrs,
        )

    def _xwf_end(self, event: XwfEnd, out: list[Span]) -> None:
        wf = event.xwf_id
        end = ns(event.ts) or 0
        run = self.runs.pop(wf, None)
        if run is None:  # its start was never seen: a zero-length run at the end
            self._xwf_start(event, out)
            run = self.runs.pop(wf)
        for key in [k for k in self.jobs if k[0] == wf]:  # never ended: the run ended them
            job = self.jobs[key]
            job.aborted = True
            job.failed_step = job.failed_step or "unfinished"
            out.append(self._finish(key))
        self.closed = {k for k in self.closed if k[0] != wf}
        status = int(_v(event.status) or 0)
        label = self.labels.get(wf) or _label_from_dag(run.attrs.get("pegasus.wf.dag"), wf)
        result = SUCCESS if status == 0 else FAILURE
        span_attrs: dict[str, AttrValue] = {
            "cicd.pipeline.name": label,
            "cicd.pipeline.run.id": f"{wf}/{run.restart}",
            "cicd.pipeline.action.name": "RUN",
            "cicd.pipeline.result": result,
            "pegasus.wf.uuid": wf,
            "pegasus.wf.root_uuid": run.root_uuid,
            "pegasus.wf.restart_count": run.restart,
            "pegasus.wf.dagman_exitcode": status,
            **run.attrs,
        }
        if result != SUCCESS:
            span_attrs["error.type"] = "dagman_failure"
        links: tuple[SpanLink, ...] = ()
        if wf == run.root_uuid and run.restart > 0:  # a rescue run: linked to the one before
            links = (
                SpanLink(
                    trace_id(wf, run.restart - 1),
                    workflow_span_id(wf, run.restart - 1),
                    {"pegasus.link": "previous_run"},
                ),
            )
        parent = self.parents.get(wf)
        out.append(
            Span(
                trace_id=run.trace,
                span_id=workflow_span_id(wf, run.restart),
                parent_span_id=job_span_id(*parent) if parent else None,
                name=f"RUN {label}",
                kind=SERVER,
                start_ns=run.start_ns,
                end_ns=max(end, run.start_ns),
                status=UNSET if result == SUCCESS else ERROR,
                status_message="" if result == SUCCESS else f"DAGMan exited with {status}",
                attributes=span_attrs,
                links=links,
            )
        )

    # ------------------------------------------------------------------ job instances
    def _instance(self, event: Any) -> tuple[JobKey, JobInstance | None]:
        """The open instance of a job instance's event (every such kind has these fields)."""
        key: JobKey = (event.xwf_id, event.job_id, int(event.job_inst_id))
        job = self.jobs.get(key)
        if job is None and key not in self.closed:
            start = ns(_v(event.ts)) or 0
            node = (key[0], key[1])
            retry = self.instances.get(node, 0)
            self.instances[node] = retry + 1
            job = self.jobs[key] = JobInstance(start_ns=start, end_ns=start, retry=retry)
        return key, job

    def _lifecycle(self, event: StampedeEvent, out: list[Span]) -> None:
        key, job = self._instance(event)
        if job is None:  # a POST script's events after the instance's span went out
            return
        kind = type(event)
        when = ns(_opt(event, "ts"))
        if when is not None:
            job.start_ns = min(job.start_ns, when)
            job.end_ns = max(job.end_ns, when)
        status = _opt(event, "status")
        label = LIFECYCLE[kind]
        if label is not None:
            event_attrs: dict[str, AttrValue] = {}
            _put(event_attrs, "pegasus.status", status)
            reason = _opt(event, "reason")
            if isinstance(reason, str):
                _put(event_attrs, "pegasus.reason", reason.strip())
            _put(event_attrs, "pegasus.exitcode", _number(_opt(event, "exitcode")))
            if kind is JobInstMainTerm and status not in (None, 0):
                label = "evicted"
            job.events.append(SpanEvent(label, when or job.end_ns, event_attrs))
        _put(job.attrs, "pegasus.job.sched_id", _opt(event, "sched_id"))
        site = _opt(event, "site")
        if site:
            _put(job.attrs, "pegasus.job.site", site)
        failed = status not in (None, 0)
        if kind is JobInstPreEnd and failed:
            job.failed_step = "pre_script_failure"
        elif kind in _SUBMIT_ENDS and failed:
            job.failed_step = job.failed_step or "submit_failure"
        elif kind is JobInstAbortInfo:
            job.aborted = True
        elif kind is JobInstPostStart or kind is JobInstPostTerm:
            job.post_started = True
        elif kind is JobInstMainEnd:
            job.main_status = status
            _put(job.attrs, "pegasus.job.exitcode", _number(_opt(event, "exitcode")))
            if not job.post_started:
                out.append(self._finish(key))
        elif kind is JobInstPostEnd:
            job.post_status = status
            _put(job.attrs, "pegasus.job.post_script.exitcode", _number(_opt(event, "exitcode")))
            out.append(self._finish(key))

    def _host_info(self, event: JobInstHostInfo, out: list[Span]) -> None:
        key, job = self._instance(event)
        if job is not None:
            _put(job.attrs, "pegasus.job.host", _v(event.hostname))
            site = _v(event.site)
            if site and site != "unknown":
                job.attrs.setdefault("pegasus.job.site", site)

    def _finish(self, key: JobKey) -> Span:
        job = self.jobs.pop(key)
        self.closed.add(key)
        wf, node, seq = key
        final = job.post_status if job.post_status is not None else job.main_status
        if job.aborted:
            result = CANCELLATION
        elif final == 0 and job.failed_step is None:
            result = SUCCESS
        else:
            result = FAILURE
        attrs: dict[str, AttrValue] = {
            "cicd.pipeline.task.name": node,
            "cicd.pipeline.task.run.id": str(seq),
            "cicd.pipeline.task.run.result": result,
            "pegasus.wf.uuid": wf,
            "pegasus.job.id": node,
            "pegasus.job.submit_seq": seq,
            "pegasus.job.retry": job.retry,
            **job.attrs,
        }
        _put(attrs, "pegasus.job.type", self.job_types.get((wf, node)))
        if result != SUCCESS:
            attrs["error.type"] = job.failed_step or (
                "aborted"
                if job.aborted
                else "post_script_failure"
                if job.post_status not in (None, 0)
                else "job_failure"
            )
        parent = self.runs.get(wf)
        return Span(
            trace_id=self._trace_of(wf, parent.root_uuid if parent else None),
            span_id=job_span_id(wf, node, seq),
            parent_span_id=workflow_span_id(wf, parent.restart) if parent else None,
            name=node,
            kind=INTERNAL,
            start_ns=job.start_ns,
            end_ns=job.end_ns,
            status=UNSET if result == SUCCESS else ERROR,
            status_message="" if result == SUCCESS else str(attrs["error.type"]),
            attributes=attrs,
            events=tuple(job.events),
        )

    # ------------------------------------------------------------------ invocations
    def _inv_start(self, event: InvStart, out: list[Span]) -> None:
        when = ns(_v(event.ts))
        if when is not None:
            key = (event.xwf_id, event.job_id, int(event.job_inst_id), event.inv_id)
            self.inv_starts[key] = when

    def _inv_end(self, event: InvEnd, out: list[Span]) -> None:
        wf, node, seq, inv = event.xwf_id, event.job_id, int(event.job_inst_id), int(event.inv_id)
        started = self.inv_starts.pop((wf, node, seq, inv), None)
        end_ts = ns(_v(event.ts))
        start = ns(_v(event.start_time)) or started or end_ts or 0
        dur = ns(_v(event.dur))
        end = start + dur if dur is not None else (end_ts or start)
        span_attrs: dict[str, AttrValue] = {}
        for attr, name in INVOCATION_ATTRS.items():
            value = _v(getattr(event, attr))
            _put(span_attrs, name, _number(value) if attr in ("exitcode", "maxrss") else value)
        ok = str(_v(event.exitcode)) == "0"
        transformation = _v(event.transformation)
        job = self.jobs.get((wf, node, seq))
        if job is not None and inv > 0 and transformation:
            job.attrs.setdefault("pegasus.job.transformation", str(transformation))
            count = job.attrs.get("pegasus.job.task_count", 0)
            job.attrs["pegasus.job.task_count"] = int(count) + 1
        out.append(
            Span(
                trace_id=self._trace_of(wf, event.root_xwf_id),
                span_id=invocation_span_id(wf, node, seq, inv),
                parent_span_id=job_span_id(wf, node, seq),
                name=str(transformation or f"invocation {inv}"),
                kind=INTERNAL,
                start_ns=start,
                end_ns=max(end, start),
                status=UNSET if ok else ERROR,
                status_message="" if ok else f"exit code {_v(event.exitcode)}",
                attributes=span_attrs,
            )
        )


def _job_state(job: JobInstance) -> dict[str, Any]:
    return {
        "start_ns": job.start_ns,
        "end_ns": job.end_ns,
        "retry": job.retry,
        "events": [[e.name, e.time_ns, e.attributes] for e in job.events],
        "attrs": job.attrs,
        "post_started": job.post_started,
        "main_status": job.main_status,
        "post_status": job.post_status,
        "failed_step": job.failed_step,
        "aborted": job.aborted,
    }


def _job_from_state(data: Mapping[str, Any]) -> JobInstance:
    return JobInstance(
        start_ns=int(data["start_ns"]),
        end_ns=int(data["end_ns"]),
        retry=int(data["retry"]),
        events=[SpanEvent(name, int(t), dict(attrs)) for name, t, attrs in data["events"]],
        attrs=dict(data["attrs"]),
        post_started=bool(data["post_started"]),
        main_status=data["main_status"],
        post_status=data["post_status"],
        failed_step=data["failed_step"],
        aborted=bool(data["aborted"]),
    )


def _label_from_dag(dag: AttrValue | None, wf: str) -> str:
    """``process-0.dag`` -> ``process`` (the planner names it ``<label>-<index>.dag``)."""
    if not isinstance(dag, str) or not dag:
        return wf
    stem = dag.rsplit("/", 1)[-1].removesuffix(".dag")
    head, sep, index = stem.rpartition("-")
    return head if sep and index.isdigit() else stem


#: The kinds with a handler of their own, by class.
_HANDLERS: dict[type[StampedeEvent], Callable[[TraceModel, Any, list[Span]], None]] = {
    WfPlan: TraceModel._wf_plan,
    JobInfo: TraceModel._job_info,
    XwfMapSubwfJob: TraceModel._subwf_map,
    XwfStart: TraceModel._xwf_start,
    XwfEnd: TraceModel._xwf_end,
    JobInstHostInfo: TraceModel._host_info,
    InvStart: TraceModel._inv_start,
    InvEnd: TraceModel._inv_end,
}
