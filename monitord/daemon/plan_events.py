"""The events a workflow starts with, before any dagman.out line: its plan, its static.bp
(jobs, tasks, edges, files, meta), and, for a sub-workflow, the parent's link to it."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TextIO

from monitord.core.events import (
    UNSET,
    StampedeEvent,
    StaticEnd,
    StaticStart,
    WfPlan,
    XwfMapSubwfJob,
    relay_builder,
)
from monitord.core.readers.staticbp import StaticBPError, parse_static_bp
from monitord.core.workflow import SubworkflowRequest, Workflow
from monitord.daemon.errors import MonitordError

# dagman.out read size, and the largest event batch handed to a sink (the Monitor's): big
# enough for executemany to pay off, small enough that the few batches queued per sink keep
# memory flat however long the workflow is.
BATCH = 5000
# static.bp is read in chunks of this many bytes, not the text layer's 8 KiB: each read is a
# system call that lets the SQL thread take the GIL, and the parser then waits to take it
# back (a 20,000-job static.bp: 2,905 reads -> ~360; CPU no higher, 1 MiB costs more).
STATIC_CHUNK = 1 << 16


def emit_plan(wf: Workflow, bd: Any, wf_ts: int) -> None:
    """The workflow's ``wf.plan`` event, from its braindump."""

    def opt(value: Any) -> Any:
        return UNSET if value is None else value

    argv = bd.planner_arguments
    grid_dn = bd.grid_dn
    wf.emit(
        WfPlan(
            xwf_id=wf.uuid,
            dax_label=opt(bd.dax_label),
            dax_version=opt(bd.dax_version),
            dax_index=opt(bd.dax_index),
            dax_file=opt(bd.dax),
            dag_file_name=opt(bd.dag),
            ts=opt(wf_ts),
            submit_hostname=opt(bd.submit_hostname),
            submit_dir=opt(bd.submit_dir),
            argv=UNSET if argv is None else str(argv).strip('" \t\r\n'),
            user=opt(bd.user),
            grid_dn=UNSET if grid_dn is None or grid_dn == "null" else grid_dn,
            planner_version=opt(bd.planner_version),
            parent_xwf_id=opt(wf.parent_uuid),
            root_xwf_id=wf.root_uuid,
            fixed=wf.fixed,
        )
    )


def open_static(run_dir: str, bd: Any) -> TextIO:
    """The workflow's static.bp, opened before any event of the workflow is sent."""
    dag = bd.dag
    base = dag[: dag.rindex(".")] if "." in dag else dag
    path = os.path.join(run_dir, base + ".static.bp")
    try:
        fh = open(path, encoding="utf-8", errors="replace", buffering=STATIC_CHUNK)
    except OSError as exc:
        raise MonitordError(f"cannot read {path}: {exc.strerror}") from None
    fh._CHUNK_SIZE = STATIC_CHUNK  # type: ignore[attr-defined]
    return fh


def emit_static(wf: Workflow, fh: TextIO, publish: Callable[[], None]) -> None:
    """``static.start``, the static.bp events, ``static.end`` (``publish`` every BATCH events)."""
    path, fixed, emit, events = fh.name, wf.fixed, wf.emit, wf.events
    emit(StaticStart(xwf_id=wf.uuid, fixed=fixed))
    builders: dict[str, Callable[[dict[str, Any]], StampedeEvent]] = {}  # by kind
    with fh:
        try:
            for name, attrs in parse_static_bp(fh, path=path):
                build = builders.get(name)
                if build is None:
                    build = builders[name] = relay_builder(name, fixed)
                emit(build(attrs))
                if len(events) >= BATCH:
                    publish()
        except StaticBPError as exc:
            raise MonitordError(str(exc)) from None
    wf.emit(StaticEnd(xwf_id=wf.uuid, fixed=wf.fixed))


def emit_subwf_map(req: SubworkflowRequest, sub_uuid: str, sub_ts: int) -> None:
    """The parent's ``xwf.map.subwf_job`` linking a sub-workflow to the job that ran it."""
    req.parent.emit(
        XwfMapSubwfJob(
            xwf_id=req.parent.uuid,
            ts=sub_ts,
            subwf_id=sub_uuid,
            job_id=req.job_name,
            job_inst_id=req.job_seq,
        )
    )
