"""Which ``.notify`` actions fire for a workflow, job or invocation event (doc §11.2, §11.3).

Sans I/O: parsed definitions and plain facts in, :class:`Firing` objects out,
each with the exact ``PEGASUS_*`` environment of the reference, in the order
the reference sets the variables (the notifications log prints them in that
order).  Actions fire in the order the ``.notify`` file lists them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from monitord.core.jobinstance import plain_exitcode
from monitord.core.timeparse import iso_local
from notifications.grammar import Action, NotifyTable


@dataclass(frozen=True, slots=True)
class WorkflowFacts:
    """What every notification of one workflow reports about it."""

    wf_uuid: str
    wfid: str  # "<dax_label>-<dax_index>", "unknown" for a missing part
    submit_dir: str  # the braindump's (original) submit dir
    dagman_out: str  # absolute path of the dagman.out being followed


@dataclass(frozen=True, slots=True)
class JobFacts:
    name: str
    out_num: int | None  # the job's output counter (the .NNN suffix)
    stdout: str | None  # the .sub "output" file, relative to the submit dir
    stderr: str | None


@dataclass(frozen=True, slots=True)
class Firing:
    """One action to run: ``subject`` and ``event`` are what the notifications log names."""

    subject: str
    event: str
    action: str
    env: dict[str, str]


def wfid(dax_label: object, dax_index: object) -> str:
    label = "unknown" if dax_label is None else str(dax_label)
    index = "unknown" if dax_index is None else str(dax_index)
    return f"{label}-{index}"


def _time_env(event: str, ts: float) -> dict[str, str]:
    return {
        "PEGASUS_EVENT": event,
        "PEGASUS_EVENT_TIMESTAMP": str(float(ts)),
        "PEGASUS_EVENT_TIMESTAMP_ISO": iso_local(ts),
    }


# ---------------------------------------------------------------------- workflow
def workflow_firings(
    actions: list[Action], wf: WorkflowFacts, state: str, ts: float, dagman_exit: int | None
) -> list[Firing]:
    """At DAGMan's start (``state`` "start") or exit ("end"); a synthetic end never gets here."""
    out = []
    for action in actions:
        event = _workflow_event(action.condition, state, dagman_exit)
        if event is None:
            continue
        env = _time_env(event, ts)
        env["PEGASUS_SUBMIT_DIR"] = wf.submit_dir
        env["PEGASUS_STDOUT"] = wf.dagman_out
        env["PEGASUS_JOBID"] = wf.wf_uuid
        env["PEGASUS_WFID"] = wf.wfid
        if state == "end":
            env["PEGASUS_STATUS"] = str(dagman_exit)
        out.append(Firing(wf.wf_uuid, event, action.command, env))
    return out


def _workflow_event(condition: str, state: str, dagman_exit: int | None) -> str | None:
    if state == "start":
        return "start" if condition in ("start", "all") else None
    if condition in ("at_end", "all"):
        return "at_end"
    if condition == "on_error" and dagman_exit != 0:
        return condition
    if condition == "on_success" and dagman_exit == 0:
        return condition
    return None


# ---------------------------------------------------------------------- jobs
def _job_files(wf: WorkflowFacts, job: JobFacts, suffix: str) -> dict[str, str]:
    env = {}
    if job.stdout:
        env["PEGASUS_STDOUT"] = os.path.join(wf.submit_dir, job.stdout) + suffix
    if job.stderr:
        env["PEGASUS_STDERR"] = os.path.join(wf.submit_dir, job.stderr) + suffix
    return env


def _suffix(job: JobFacts) -> str:
    return f".{job.out_num or 0:03d}"


def job_start_firings(
    table: NotifyTable, wf: WorkflowFacts, job: JobFacts, ts: float
) -> list[Firing]:
    """At each EXECUTE of the node: ``start`` and ``all`` (as ``start``); files without .NNN."""
    out = []
    for action in table.jobs.get(job.name, ()):
        if action.condition not in ("start", "all"):
            continue
        env = _time_env("start", ts)
        env["PEGASUS_SUBMIT_DIR"] = wf.submit_dir
        env["PEGASUS_JOBID"] = job.name
        env["PEGASUS_WFID"] = wf.wfid
        env.update(_job_files(wf, job, ""))
        out.append(Firing(job.name, "start", action.command, env))
    return out


def job_end_status(success: bool, dagman_status: int | None, record_exitcode: int | None) -> int:
    """PEGASUS_STATUS at job end: 0 on success; else the dagman.out status, unless the output
    parse found exactly one record and it was an invocation with an exit code (PM-1176)."""
    if success:
        return 0
    if record_exitcode is not None:
        return record_exitcode
    return dagman_status if dagman_status is not None else 1


def job_end_firings(
    table: NotifyTable,
    wf: WorkflowFacts,
    job: JobFacts,
    ts: float,
    *,
    success: bool,
    status: int,
) -> list[Firing]:
    """At JOB_SUCCESS/FAILURE (no POST script) or POST_SCRIPT_SUCCESS/FAILURE.

    The reference excludes rather than selects: every condition but ``start`` and the opposite
    outcome fires, so ``never`` (and any unknown condition) fires here too.
    """
    out = []
    excluded = ("start", "on_error" if success else "on_success")
    for action in table.jobs.get(job.name, ()):
        if action.condition in excluded:
            continue
        event = "at_end" if action.condition == "all" else action.condition
        env = _time_env(event, ts)
        env["PEGASUS_SUBMIT_DIR"] = wf.submit_dir
        env["PEGASUS_JOBID"] = job.name
        env["PEGASUS_WFID"] = wf.wfid
        env.update(_job_files(wf, job, _suffix(job)))
        env["PEGASUS_STATUS"] = str(status)
        out.append(Firing(job.name, event, action.command, env))
    return out


# ---------------------------------------------------------------------- invocations
def invocation_status(raw: object) -> int | object:
    """The record's ``raw`` value (or the job's main exit code), as an int when it is one."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    try:
        return int(str(raw).strip())
    except ValueError:
        return raw


def invocation_firings(
    table: NotifyTable,
    wf: WorkflowFacts,
    job: JobFacts,
    task: int,
    ts: float,
    raw_status: object,
) -> list[Firing]:
    """For invocation (or task) record ``task`` of a finished job.

    Only ``on_error`` (status 0) or ``on_success`` (status not 0) are skipped: every other
    condition fires, ``start`` included, at invocation end.
    """
    actions = table.invocations.get((job.name, task))
    if not actions:
        return []
    status = invocation_status(raw_status)
    out = []
    for action in actions:
        if action.condition == "on_error" and status == 0:
            continue
        if action.condition == "on_success" and status != 0:
            continue
        event = "at_end" if action.condition == "all" else action.condition
        env = _time_env(event, ts)
        env["PEGASUS_SUBMIT_DIR"] = wf.submit_dir
        env["PEGASUS_JOBID"] = job.name
        env["PEGASUS_INVID"] = str(task)
        env["PEGASUS_WFID"] = wf.wfid
        env.update(_job_files(wf, job, _suffix(job)))
        if event != "start":
            env["PEGASUS_STATUS"] = str(
                plain_exitcode(status) if isinstance(status, int) else status
            )
        out.append(Firing(job.name, event, action.command, env))
    return out
