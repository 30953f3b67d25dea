"""The events a workflow starts with, before any dagman.out line: its plan, its static.bp
(jobs, tasks, edges, files, meta), and, for a sub-workflow, the parent's link to it."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TextIO

from monitord.core.events import make_event
from monitord.core.readers.staticbp import StaticBPError, parse_static_bp
from monitord.core.workflow import SubworkflowRequest, Workflow
from monitord.daemon.errors import MonitordError

# dagman.out read size, and the largest event batch handed to a sink (the Monitor's): big
# enough for executemany to pay off, small enough that the few batches queued per sink keep
# memory flat however long the workflow is.
BATCH = 5000


def emit_plan(wf: Workflow, bd: Any, wf_ts: int) -> None:
    """The workflow's ``wf.plan`` event, from its braindump."""
    attrs: dict[str, Any] = {"xwf.id": wf.uuid}
    for key, value in (
        ("dax.label", bd.dax_label),
        ("dax.version", bd.dax_version),
        ("dax.index", bd.dax_index),
        ("dax.file", bd.dax),
        ("dag.file.name", bd.dag),
        ("ts", wf_ts),
        ("submit.hostname", bd.submit_hostname),
        ("submit.dir", bd.submit_dir),
    ):
        if value is not None:
            attrs[key] = value
    if bd.planner_arguments is not None:
        attrs["argv"] = str(bd.planner_arguments).strip('" \t\r\n')
    if bd.user is not None:
        attrs["user"] = bd.user
    if bd.grid_dn is not None and bd.grid_dn != "null":
        attrs["grid_dn"] = bd.grid_dn
    if bd.planner_version is not None:
        attrs["planner.version"] = bd.planner_version
    if wf.parent_uuid is not None:
        attrs["parent.xwf.id"] = wf.parent_uuid
    attrs["root.xwf.id"] = wf.root_uuid
    wf.emit("wf.plan", attrs)


def open_static(run_dir: str, bd: Any) -> TextIO:
    """The workflow's static.bp, opened before any event of the workflow is sent."""
    dag = bd.dag
    base = dag[: dag.rindex(".")] if "." in dag else dag
    path = os.path.join(run_dir, base + ".static.bp")
    try:
        return open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MonitordError(f"cannot read {path}: {exc.strerror}") from None


def emit_static(wf: Workflow, fh: TextIO, publish: Callable[[], None]) -> None:
    """``static.start``, the static.bp events, ``static.end`` (``publish`` every BATCH events)."""
    path = fh.name
    wf.emit("static.start", {"xwf.id": wf.uuid})
    with fh:
        try:
            for name, attrs in parse_static_bp(fh, path=path):
                attrs.update(wf.fixed)
                wf.emit_event(make_event(name, attrs))
                if len(wf.events) >= BATCH:
                    publish()
        except StaticBPError as exc:
            raise MonitordError(str(exc)) from None
    wf.emit("static.end", {"xwf.id": wf.uuid})


def emit_subwf_map(req: SubworkflowRequest, sub_uuid: str, sub_ts: int) -> None:
    """The parent's ``xwf.map.subwf_job`` linking a sub-workflow to the job that ran it."""
    req.parent.emit(
        "xwf.map.subwf_job",
        {
            "xwf.id": req.parent.uuid,
            "ts": sub_ts,
            "subwf.id": sub_uuid,
            "job.id": req.job_name,
            "job_inst.id": req.job_seq,
        },
        fixed=False,
    )
