"""A pegasus-status-like summary of one workflow, read from its Stampede database.

Each job of the workflow is placed by the last state of its latest instance:
UNREADY (no instance yet), PRE, QUEUED, POST, SUCCESS or FAILURE.  A
``JOB_SUCCESS``/``JOB_FAILURE`` whose instance has no exit code yet is waiting
for its POST script (the loader writes the exit code with ``main.end``, which
waits for the POST script).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from monitord.core.jobinstance import plain_exitcode

CATEGORIES = ("UNREADY", "READY", "PRE", "QUEUED", "POST", "SUCCESS", "FAILURE")
_PRE = frozenset({"PRE_SCRIPT_STARTED", "PRE_SCRIPT_TERMINATED"})
_POST = frozenset({"JOB_TERMINATED", "POST_SCRIPT_STARTED", "POST_SCRIPT_TERMINATED"})
_SUCCESS = frozenset({"POST_SCRIPT_SUCCESS"})
_FAILURE = frozenset(
    {
        # The database spells script failures *_FAILED; jobstate.log spells them *_FAILURE.
        "POST_SCRIPT_FAILED",
        "POST_SCRIPT_FAILURE",
        "PRE_SCRIPT_FAILED",
        "PRE_SCRIPT_FAILURE",
        "SUBMIT_FAILED",
        "GRID_SUBMIT_FAILED",
        "GLOBUS_SUBMIT_FAILED",
        "JOB_ABORTED",
    }
)


@dataclass
class FailedJob:
    job: str
    exitcode: int | None  # plain exit code (the database holds the raw wait status)
    attempts: int
    stderr_file: str | None


@dataclass
class Summary:
    wf_uuid: str
    label: str | None
    submit_dir: str | None
    state: str  # Running, Success or Failure
    status: int | None  # DAGMan's exit code once the workflow ended
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[FailedJob] = field(default_factory=list)
    subworkflows: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["total"] = self.total
        return out

    def text(self) -> str:
        """A short block in the spirit of ``pegasus-status -l``."""
        head = " ".join(f"{name:>8}" for name in CATEGORIES) + f" {'TOTAL':>8}"
        row = " ".join(f"{self.counts.get(n, 0):>8}" for n in CATEGORIES) + f" {self.total:>8}"
        done = self.counts.get("SUCCESS", 0)
        percent = 100.0 * done / self.total if self.total else 0.0
        lines = [
            f"Workflow  : {self.label or '-'} ({self.wf_uuid})",
            f"Submit dir: {self.submit_dir or '-'}",
            f"State     : {self.state}"
            + ("" if self.status is None else f" (DAGMan exit code {self.status})"),
            "",
            head,
            row,
            f"{percent:.1f}% done",
        ]
        if self.subworkflows:
            lines.append(f"Sub-workflows: {self.subworkflows}")
        if self.failed:
            lines += ["", "Failed jobs:"]
            for job in self.failed:
                lines.append(
                    f"  {job.job}  exit code {job.exitcode}  attempts {job.attempts}"
                    + (f"  stderr {job.stderr_file}" if job.stderr_file else "")
                )
        return "\n".join(lines) + "\n"


def _classify(state: str | None, exitcode: int | None) -> str:
    if state is None:
        return "UNREADY"
    if state in _PRE:
        return "PRE"
    if state in _POST:
        return "POST"
    if state in _SUCCESS:
        return "SUCCESS"
    if state in _FAILURE:
        return "FAILURE"
    if state in ("JOB_SUCCESS", "JOB_FAILURE"):
        if exitcode is None:
            return "POST"
        return "SUCCESS" if exitcode == 0 else "FAILURE"
    return "QUEUED"


def read_summary(
    db_url: str, *, wf_uuid: str | None = None, submit_dir: str | None = None
) -> Summary:
    """The summary of the workflow with ``wf_uuid`` (or, failing that, ``submit_dir``).

    Raises LookupError when the database has no such workflow, and SQLAlchemy's errors
    when it cannot be read.
    """
    from sqlalchemy import create_engine

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            wf_id, uuid, label, sdir = _find_workflow(conn, wf_uuid, submit_dir)
            last, jobs, states, subs = _read_workflow(conn, wf_id)
    finally:
        engine.dispose()
    counts, failed = _tally(jobs, states)
    if last is None or last[0] == "WORKFLOW_STARTED":
        state, status = "Running", None
    else:
        status = last[1]
        state = "Success" if status == 0 else "Failure"
    return Summary(uuid, label, sdir, state, status, counts, failed, int(subs or 0))


def _find_workflow(conn: Any, wf_uuid: str | None, submit_dir: str | None) -> Any:
    """The workflow's row (wf_id, wf_uuid, dax_label, submit_dir): by uuid, else the latest
    of the submit directory; LookupError when there is none."""
    from sqlalchemy import text

    row = None
    if wf_uuid:
        row = conn.execute(
            text("SELECT wf_id, wf_uuid, dax_label, submit_dir FROM workflow WHERE wf_uuid = :u"),
            {"u": wf_uuid},
        ).first()
    if row is None and submit_dir:
        row = conn.execute(
            text(
                "SELECT wf_id, wf_uuid, dax_label, submit_dir FROM workflow "
                "WHERE submit_dir = :d ORDER BY wf_id DESC"
            ),
            {"d": os.path.normpath(submit_dir)},
        ).first()
    if row is None:
        raise LookupError(f"no workflow {wf_uuid or ''} {submit_dir or ''} in the database".strip())
    return row


def _read_workflow(conn: Any, wf_id: Any) -> tuple[Any, list[Any], dict[Any, str], Any]:
    """The workflow's last state, its jobs with their instances, each instance's last state,
    and how many sub-workflows it has."""
    from sqlalchemy import text

    last = conn.execute(
        text(
            "SELECT state, status FROM workflowstate WHERE wf_id = :w "
            "ORDER BY timestamp DESC, restart_count DESC, state DESC LIMIT 1"
        ),
        {"w": wf_id},
    ).first()
    jobs = conn.execute(
        text(
            "SELECT j.job_id, j.exec_job_id, ji.job_instance_id, ji.exitcode, "
            "ji.stderr_file, ji.job_submit_seq "
            "FROM job j LEFT JOIN job_instance ji ON ji.job_id = j.job_id "
            "WHERE j.wf_id = :w ORDER BY j.job_id, ji.job_submit_seq"
        ),
        {"w": wf_id},
    ).all()
    states: dict[Any, str] = dict(
        conn.execute(
            text(
                "SELECT js.job_instance_id, js.state FROM jobstate js "
                "JOIN job_instance ji ON ji.job_instance_id = js.job_instance_id "
                "JOIN job j ON j.job_id = ji.job_id WHERE j.wf_id = :w "
                "ORDER BY js.job_instance_id, js.jobstate_submit_seq"
            ),
            {"w": wf_id},
        ).all()
    )  # later rows win: the last state of each instance
    subs = conn.execute(
        text("SELECT COUNT(*) FROM workflow WHERE parent_wf_id = :w"), {"w": wf_id}
    ).scalar_one()
    return last, jobs, states, subs


def _tally(jobs: list[Any], states: dict[Any, str]) -> tuple[dict[str, int], list[FailedJob]]:
    """Jobs per category (by their latest instance), and the failed ones."""
    latest: dict[int, tuple[str, Any, Any, Any, int]] = {}
    attempts: dict[int, int] = {}
    for job_id, name, inst_id, exitcode, stderr_file, _seq in jobs:
        if inst_id is not None:
            attempts[job_id] = attempts.get(job_id, 0) + 1
        latest[job_id] = (name, inst_id, exitcode, stderr_file, attempts.get(job_id, 0))
    counts = dict.fromkeys(CATEGORIES, 0)
    failed = []
    for name, inst_id, exitcode, stderr_file, tries in latest.values():
        category = _classify(states.get(inst_id) if inst_id is not None else None, exitcode)
        counts[category] += 1
        if category == "FAILURE":
            plain = None if exitcode is None else plain_exitcode(int(exitcode))
            failed.append(FailedJob(name, plain, tries, stderr_file))
    return counts, failed
