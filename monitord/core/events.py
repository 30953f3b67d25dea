"""Typed Stampede events: one small class per event kind of the Stampede schema.

An event is its kind (the class, whose ``name`` is the event name without the
``stampede.`` prefix) plus an insertion-ordered mapping of wire attributes
(dotted keys such as ``xwf.id``, ``job_inst.id``).  Order matters: the BP and
JSON encodings print attributes in the order they were set, exactly as the
reference does, so the state machine builds ``attrs`` in reference order.

``ts`` and ``level`` live inside ``attrs`` like any other attribute; the
encoders know where each one goes on the wire.  Construction checks that the
mandatory attributes of the kind are present (a missing one is a bug in the
producer, so it raises), nothing more: the hot path builds millions of these.
"""

from __future__ import annotations

from typing import Any, ClassVar

PREFIX = "stampede."

JOB_KEYS = ("xwf.id", "job.id", "job_inst.id")
BRIEF = (*JOB_KEYS, "ts", "js.id")


class MissingAttribute(ValueError):
    """A producer built an event without one of its mandatory attributes."""


class StampedeEvent:
    """Base class; subclasses only declare ``name`` and ``required``."""

    __slots__ = ("attrs",)
    name: ClassVar[str] = ""
    required: ClassVar[tuple[str, ...]] = ()

    def __init__(self, attrs: dict[str, Any]) -> None:
        for key in self.required:
            if key not in attrs:
                raise MissingAttribute(f"{self.name}: missing mandatory attribute {key!r}")
        self.attrs = attrs

    @property
    def wire_name(self) -> str:
        return PREFIX + self.name

    @property
    def ts(self) -> Any:
        return self.attrs.get("ts")

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.attrs!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StampedeEvent)
            and other.name == self.name
            and other.attrs == self.attrs
        )

    __hash__ = None  # type: ignore[assignment]


class GenericEvent(StampedeEvent):
    """An event kind this table does not know (relayed verbatim from static.bp)."""

    __slots__ = ("_name",)

    def __init__(self, name: str, attrs: dict[str, Any]) -> None:
        self._name = name
        self.attrs = attrs

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        return self._name


# --- workflow-level -------------------------------------------------------
class WfPlan(StampedeEvent):
    name = "wf.plan"
    required = ("xwf.id",)


class StaticStart(StampedeEvent):
    name = "static.start"
    required = ("xwf.id",)


class StaticEnd(StampedeEvent):
    name = "static.end"
    required = ("xwf.id",)


class XwfStart(StampedeEvent):
    name = "xwf.start"
    required = ("xwf.id", "ts", "restart_count")


class XwfEnd(StampedeEvent):
    name = "xwf.end"
    required = ("xwf.id", "ts", "restart_count", "status")


class XwfMapSubwfJob(StampedeEvent):
    name = "xwf.map.subwf_job"
    required = ("xwf.id", "subwf.id", "job.id", "job_inst.id")


# --- static.bp relays (planner output) -------------------------------------
class TaskInfo(StampedeEvent):
    name = "task.info"
    required = ("xwf.id", "task.id")


class TaskEdge(StampedeEvent):
    name = "task.edge"
    required = ("xwf.id", "parent.task.id", "child.task.id")


class JobInfo(StampedeEvent):
    name = "job.info"
    required = ("xwf.id", "job.id")


class JobEdge(StampedeEvent):
    name = "job.edge"
    required = ("xwf.id", "parent.job.id", "child.job.id")


class WfMapTaskJob(StampedeEvent):
    name = "wf.map.task_job"
    required = ("xwf.id", "job.id", "task.id")


class StaticMetaStart(StampedeEvent):
    name = "static.meta.start"
    required = ("xwf.id",)


class StaticMetaEnd(StampedeEvent):
    name = "static.meta.end"
    required = ("xwf.id",)


class XwfMeta(StampedeEvent):
    name = "xwf.meta"
    required = ("xwf.id", "key", "value")


class TaskMeta(StampedeEvent):
    name = "task.meta"
    required = ("xwf.id", "task.id", "key", "value")


class RcMeta(StampedeEvent):
    name = "rc.meta"
    required = ("xwf.id", "lfn.id", "key", "value")


class WfMapFile(StampedeEvent):
    name = "wf.map.file"
    required = ("xwf.id", "task.id", "lfn.id")


class RcPfn(StampedeEvent):
    name = "rc.pfn"
    required = ("xwf.id", "lfn.id", "pfn")


# --- job instance life cycle ----------------------------------------------
class PreStart(StampedeEvent):
    name = "job_inst.pre.start"
    required = BRIEF


class PreTerm(StampedeEvent):
    name = "job_inst.pre.term"
    required = BRIEF


class PreEnd(StampedeEvent):
    name = "job_inst.pre.end"
    required = (*BRIEF, "status")


class SubmitStart(StampedeEvent):
    name = "job_inst.submit.start"
    required = BRIEF


class SubmitEnd(StampedeEvent):
    name = "job_inst.submit.end"
    required = (*BRIEF, "status")


class GridSubmitStart(StampedeEvent):
    name = "job_inst.grid.submit.start"
    required = BRIEF


class GridSubmitEnd(StampedeEvent):
    name = "job_inst.grid.submit.end"
    required = (*BRIEF, "status")


class GlobusSubmitStart(StampedeEvent):
    name = "job_inst.globus.submit.start"
    required = BRIEF


class GlobusSubmitEnd(StampedeEvent):
    name = "job_inst.globus.submit.end"
    required = (*BRIEF, "status")


class MainStart(StampedeEvent):
    name = "job_inst.main.start"
    required = BRIEF


class MainTerm(StampedeEvent):
    name = "job_inst.main.term"
    required = (*BRIEF, "status")


class MainEnd(StampedeEvent):
    name = "job_inst.main.end"
    required = (*BRIEF, "status")


class Composite(StampedeEvent):
    name = "job_inst.composite"
    required = (*BRIEF, "status")


class ImageInfo(StampedeEvent):
    name = "job_inst.image.info"
    required = BRIEF


class HeldStart(StampedeEvent):
    name = "job_inst.held.start"
    required = BRIEF


class HeldEnd(StampedeEvent):
    name = "job_inst.held.end"
    required = (*BRIEF, "status")


class AbortInfo(StampedeEvent):
    name = "job_inst.abort.info"
    required = BRIEF


class RemoteError(StampedeEvent):
    name = "job_inst.remote_error"
    required = BRIEF


class PostStart(StampedeEvent):
    name = "job_inst.post.start"
    required = BRIEF


class PostTerm(StampedeEvent):
    name = "job_inst.post.term"
    required = BRIEF


class PostEnd(StampedeEvent):
    name = "job_inst.post.end"
    required = (*BRIEF, "status")


class HostInfo(StampedeEvent):
    name = "job_inst.host.info"
    required = (*JOB_KEYS, "hostname", "ip", "site")


class Tag(StampedeEvent):
    name = "job_inst.tag"
    required = (*JOB_KEYS, "name", "count")


# --- invocations and metrics ----------------------------------------------
class InvStart(StampedeEvent):
    name = "inv.start"
    required = (*JOB_KEYS, "inv.id")


class InvEnd(StampedeEvent):
    name = "inv.end"
    required = (*JOB_KEYS, "inv.id", "exitcode")


class IntMetric(StampedeEvent):
    name = "int.metric"
    required = (*JOB_KEYS, "type", "file_type", "count", "duration")


class TaskMonitoring(StampedeEvent):
    name = "task.monitoring"
    required = (*JOB_KEYS, "monitoring_event")


EVENT_CLASSES: dict[str, type[StampedeEvent]] = {
    cls.name: cls for cls in StampedeEvent.__subclasses__() if cls is not GenericEvent and cls.name
}


def make_event(name: str, attrs: dict[str, Any]) -> StampedeEvent:
    """Build the typed event for ``name`` (without prefix); unknown kinds stay generic."""
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        return GenericEvent(name, attrs)
    return cls(attrs)
