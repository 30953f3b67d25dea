"""The DAGMan job state machine, as a table: what each job state does to a job instance.

Rules (everything that decides what a job state does lives in :data:`JOB_STATES`):

- A row per DAGMan job state (doc §3, §5.4). It says which instance the state
  applies to (``instance``), the states it normally follows (``follows``), the
  instance time it stamps (``stamps``), column 4 of its jobstate.log line
  (``col4``), the brief events it emits in order (``events``), the per-state
  code that runs after them (``action``, a function of this module, above the
  table), the row it becomes in the database's ``jobstate`` table (``db``), and
  whether it ends the instance (``ends``).
- Every state but DAGMAN_SUBMIT writes one jobstate.log line. A state with no
  row (SHADOW_EXCEPTION, JOB_SUSPENDED, FILE_TRANSFER, ...) writes only that line
  and is transparent: the next state follows the last state with a row.
- ``follows`` is the order DAGMan writes (:meth:`JobState.allows`). The reference enforces
  order in one place only, and so does the machine: a state that needs the node's
  latest instance (``instance="latest"``) when the node has none is ignored, with a
  warning (doc §4.1). Any other state out of order (lines lost or repeated) is handled
  like any other, as the reference does, and logged as a warning and counted
  (``Workflow.out_of_order``). ``tests/test_jobmachine.py`` checks every transition
  of the corpus against it.
- Sans I/O. :meth:`monitord.core.workflow.Workflow.update_job_state` finds the
  instance, then applies the row (:class:`JobState` ``stamp``, its ``events`` through the
  builders :func:`monitord.core.jobactions.brief_builders` makes once per row, ``action``,
  ``ends_now``); the actions use the verbs of :mod:`monitord.core.jobactions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from monitord.core.jobinstance import JobInstance, raw_exitcode
from monitord.core.quoting import url_quote

if TYPE_CHECKING:
    from monitord.core.jobactions import JobActions

# Which instance a state applies to:
#   "latest"     the node's latest instance (the state is ignored without one);
#   "pre"        a new one unless the latest is reusable; its submit file is (re)read;
#   "submit"     a new one unless the latest is reusable or has the line's sched id;
#   "dagman"     as "pre" (the DAGMan submit line, handled by the workflow machine).
Instance = Literal["latest", "pre", "submit", "dagman"]
# Whether the state ends the instance (its bulky parts are dropped):
#   "unless-deferred"  yes, unless main.end waits for the POST script.
Ends = Literal["no", "yes", "unless-deferred"]
# Which side of its database row a state is: the event with status 0/none, or with a failure.
Side = Literal["ok", "failed", "any"]

# ---------------------------------------------------------------------- the states' code
# What a state does beyond its brief events (the ``action`` column): each function is
# called with the workflow machine, the instance, the line's time, its status and (for
# JOB_HELD_REASON) the hold reason, after the row's ``events`` are sent.
Reason = str | None
Action = Callable[["JobActions", JobInstance, float, int | None, Reason], None]


def _pre_success(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.pre_exitcode = raw_exitcode(status or 0)
    wf.script_invocation(inst, "pre")
    wf._brief(inst, "job_inst.pre.end", ts, 0, exitcode=str(inst.pre_exitcode))


def _pre_failure(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.pre_exitcode = raw_exitcode(status or 0)
    inst.main_exitcode = inst.pre_exitcode
    wf._bump_out_counter(inst)
    wf.script_invocation(inst, "pre")
    wf._brief(inst, "job_inst.pre.end", ts, -1, exitcode=str(inst.pre_exitcode))
    wf.read_pre_script_log(inst)
    attrs = wf.build_main_end(inst, ts, -1)
    wf.send_main_end(inst, attrs)


def _submit_failure(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.main_exitcode = 1
    inst.stderr_text = url_quote(f"Job submission failed because of HTCondor event {inst.state}")
    wf.send_main_end(inst, wf.build_main_end(inst, ts, -1))


def _execute(wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason) -> None:
    wf._main_start(inst, ts)
    wf.on_job_start(inst, ts)


def _job_result(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.main_exitcode = raw_exitcode(status or 0)
    ok = 0 if inst.state == "JOB_SUCCESS" else -1
    node = wf.latest.node(inst.name)
    has_post = node is not None and node.has_post_script and not wf.dag.is_pmc
    if has_post:
        inst.deferred_main_end = wf.build_main_end(inst, ts, ok)
        return
    wf.read_job_output(inst, ts)
    if not wf.opts.events_enabled:
        return
    wf.on_job_end(inst, ts, status)
    wf.send_main_end(inst, wf.build_main_end(inst, ts, ok))


def _job_aborted(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.main_exitcode = 1
    wf._brief(inst, "job_inst.abort.info", ts, None)
    node = wf.latest.node(inst.name)
    has_post = node is not None and node.has_post_script
    attrs = wf.build_main_end(inst, ts, -1)
    if has_post and inst.prev_state in ("JOB_HELD", "JOB_HELD_REASON"):
        inst.deferred_main_end = attrs
        return
    wf.send_main_end(inst, attrs)


def _held(wf: JobActions, inst: JobInstance, ts: float, status: int | None, reason: Reason) -> None:
    new_dagman = wf.dagman_version >= 80303
    if (inst.state == "JOB_HELD_REASON") == new_dagman:
        wf._brief(inst, "job_inst.held.start", ts, None, reason=reason)


def _post_result(
    wf: JobActions, inst: JobInstance, ts: float, status: int | None, _r: Reason
) -> None:
    inst.post_exitcode = raw_exitcode(status or 0)
    if inst.main_exitcode is None:
        inst.main_exitcode = inst.post_exitcode
    wf.read_job_output(inst, ts)
    if not wf.opts.events_enabled:
        return
    if inst.deferred_main_end is not None:
        attrs, inst.deferred_main_end = inst.deferred_main_end, None
        wf.send_main_end(inst, attrs)
    wf.script_invocation(inst, "post")
    wf.on_job_end(inst, ts, status)
    ok = 0 if inst.state == "POST_SCRIPT_SUCCESS" else -1
    wf._brief(inst, "job_inst.post.end", ts, ok, exitcode=str(inst.post_exitcode))


@dataclass(frozen=True, slots=True)
class JobState:
    follows: frozenset[str]
    instance: Instance = "latest"
    stamps: str | None = None  # JobInstance time attribute set to the line's time
    col4: Literal["sched", "status"] = "sched"  # jobstate.log column 4
    events: tuple[tuple[str, int | None], ...] = ()  # (event, status), sent in order
    action: Action | None = None  # per-state code run after ``events`` (above)
    db: tuple[str, Side] | None = None  # (event, side) that stores this state in the DB
    db_name: str | None = None  # the DB's name of the state, where it differs
    reusable: bool = False  # the next submit of the node reuses an instance in this state
    opens_attempt: bool = False  # takes the sched id, the next output counter, sub-workflows
    ends: Ends = "no"
    # Whether the state may begin an instance (:meth:`allows` with no earlier state).
    begins: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "begins", self.instance in ("pre", "dagman"))

    def allows(self, prev: str | None) -> bool:
        """DAGMan's order rule, in one place: whether this state may come after ``prev``,
        the instance's last state with a row (None: a new instance, which only a PRE
        script's start or DAGMan's submit begins)."""
        return prev in self.follows if prev is not None else self.begins

    # What the workflow machine does with a row, in this order (Workflow.update_job_state,
    # after it has found the instance and set the sched id and output counter).
    def stamp(self, inst: JobInstance, ts: float) -> None:
        """Set the instance time this state stamps (``main_end_if_unset``: PM-1016)."""
        if self.stamps == "main_end_if_unset":
            if inst.main_end is None:
                inst.main_end = ts
        elif self.stamps is not None:
            setattr(inst, self.stamps, ts)

    def col4_of(self, inst: JobInstance, status: int | None) -> str:
        """Column 4 of the state's jobstate.log line."""
        return str(status) if self.col4 == "status" else (inst.sched_id or "-")

    def ends_now(self, inst: JobInstance) -> bool:
        """Whether the instance is over once the state is handled."""
        return self.ends == "yes" or (
            self.ends == "unless-deferred" and inst.deferred_main_end is None
        )


def _after(*states: str) -> frozenset[str]:
    return frozenset(states)


_SUBMITTED = ("SUBMIT", "GRID_SUBMIT", "GLOBUS_SUBMIT")
_RUNNING = ("EXECUTE", "IMAGE_SIZE", "JOB_RELEASED", "REMOTE_ERROR")
_HELD = ("JOB_HELD", "JOB_HELD_REASON")
_RESULT = ("JOB_SUCCESS", "JOB_FAILURE", "JOB_ABORTED", "SUBMIT_FAILED")

JOB_STATES: dict[str, JobState] = {
    # --- PRE script -----------------------------------------------------------------------
    "PRE_SCRIPT_STARTED": JobState(
        follows=_after(),
        instance="pre",
        stamps="pre_start",
        events=(("job_inst.pre.start", None),),
        db=("job_inst.pre.start", "any"),
    ),
    "PRE_SCRIPT_TERMINATED": JobState(
        follows=_after("PRE_SCRIPT_STARTED"),
        events=(("job_inst.pre.term", None),),
        db=("job_inst.pre.term", "any"),
    ),
    "PRE_SCRIPT_SUCCESS": JobState(
        follows=_after("PRE_SCRIPT_TERMINATED"),
        stamps="pre_end",
        col4="status",
        action=_pre_success,  # inv.start/inv.end of the script, pre.end
        db=("job_inst.pre.end", "ok"),
        reusable=True,
    ),
    "PRE_SCRIPT_FAILURE": JobState(
        follows=_after("PRE_SCRIPT_TERMINATED"),
        stamps="pre_end",
        col4="status",
        action=_pre_failure,  # inv.*, pre.end(-1), the PRE log as stdout, main.end(-1)
        db=("job_inst.pre.end", "failed"),
        db_name="PRE_SCRIPT_FAILED",
    ),
    # --- submission -----------------------------------------------------------------------
    "DAGMAN_SUBMIT": JobState(
        follows=_after("PRE_SCRIPT_SUCCESS"),
        instance="dagman",
        reusable=True,
    ),
    "SUBMIT": JobState(
        follows=_after("DAGMAN_SUBMIT"),
        instance="submit",
        events=(("job_inst.submit.start", None), ("job_inst.submit.end", 0)),
        db=("job_inst.submit.end", "ok"),
        opens_attempt=True,
    ),
    "GRID_SUBMIT": JobState(
        follows=_after("SUBMIT"),
        events=(("job_inst.grid.submit.start", None), ("job_inst.grid.submit.end", 0)),
        db=("job_inst.grid.submit.end", "ok"),
    ),
    "GLOBUS_SUBMIT": JobState(
        follows=_after("SUBMIT"),
        events=(("job_inst.globus.submit.start", None), ("job_inst.globus.submit.end", 0)),
        db=("job_inst.globus.submit.end", "ok"),
    ),
    "SUBMIT_FAILED": JobState(
        follows=_after("DAGMAN_SUBMIT"),
        instance="submit",
        stamps="main_end",
        events=(("job_inst.submit.start", None), ("job_inst.submit.end", -1)),
        action=_submit_failure,  # main.end(-1) with the failure as stderr
        db=("job_inst.submit.end", "failed"),
    ),
    "GRID_SUBMIT_FAILED": JobState(
        follows=_after("SUBMIT"),
        stamps="main_end",
        events=(("job_inst.grid.submit.start", None), ("job_inst.grid.submit.end", -1)),
        action=_submit_failure,
        db=("job_inst.grid.submit.end", "failed"),
    ),
    "GLOBUS_SUBMIT_FAILED": JobState(
        follows=_after("SUBMIT"),
        stamps="main_end",
        events=(("job_inst.globus.submit.start", None), ("job_inst.globus.submit.end", -1)),
        action=_submit_failure,
        db=("job_inst.globus.submit.end", "failed"),
    ),
    # --- the main job ---------------------------------------------------------------------
    "EXECUTE": JobState(
        follows=_after(*_SUBMITTED, "EXECUTE", "JOB_EVICTED", "JOB_RELEASED", *_HELD),
        stamps="main_start",
        action=_execute,  # main.start with the job's stdio files
        db=("job_inst.main.start", "any"),
    ),
    "IMAGE_SIZE": JobState(
        follows=_after(*_RUNNING),
        events=(("job_inst.image.info", None),),
        db=("job_inst.image.info", "any"),
    ),
    "REMOTE_ERROR": JobState(
        follows=_after(*_RUNNING),
        events=(("job_inst.remote_error", None),),
    ),
    "JOB_HELD": JobState(
        follows=_after(*_SUBMITTED, *_RUNNING),
        action=_held,  # held.start here before HTCondor 8.3.3, else at the reason
        db=("job_inst.held.start", "any"),
    ),
    "JOB_HELD_REASON": JobState(
        follows=_after("JOB_HELD"),
        action=_held,
    ),
    "JOB_RELEASED": JobState(
        follows=_after(*_HELD),
        events=(("job_inst.held.end", 0),),
        db=("job_inst.held.end", "any"),
    ),
    "JOB_EVICTED": JobState(
        follows=_after(*_RUNNING),
        events=(("job_inst.main.term", -1),),
        db=("job_inst.main.term", "failed"),
    ),
    "JOB_TERMINATED": JobState(
        follows=_after(*_SUBMITTED, *_RUNNING),
        stamps="main_end",
        events=(("job_inst.main.term", 0),),
        db=("job_inst.main.term", "ok"),
    ),
    "JOB_ABORTED": JobState(
        follows=_after(*_SUBMITTED, *_RUNNING, *_HELD),
        stamps="main_end",
        action=_job_aborted,  # abort.info, main.end(-1) (deferred to POST after a hold)
        db=("job_inst.abort.info", "any"),
    ),
    "JOB_SUCCESS": JobState(
        follows=_after("JOB_TERMINATED"),
        col4="status",
        action=_job_result,  # output parse, main.end + composite (or deferred to POST)
        db=("job_inst.main.end", "ok"),
        ends="unless-deferred",
    ),
    "JOB_FAILURE": JobState(
        follows=_after("JOB_TERMINATED", "JOB_ABORTED", "SUBMIT_FAILED", *_SUBMITTED),
        col4="status",
        action=_job_result,
        db=("job_inst.main.end", "failed"),
        ends="unless-deferred",
    ),
    # --- POST script ----------------------------------------------------------------------
    "POST_SCRIPT_STARTED": JobState(
        follows=_after(*_RESULT, "PRE_SCRIPT_FAILURE"),
        stamps="post_start",
        events=(("job_inst.post.start", None),),
        db=("job_inst.post.start", "any"),
    ),
    "POST_SCRIPT_TERMINATED": JobState(
        follows=_after("POST_SCRIPT_STARTED"),
        stamps="post_end",
        events=(("job_inst.post.term", None),),
        db=("job_inst.post.term", "any"),
    ),
    "POST_SCRIPT_SUCCESS": JobState(
        follows=_after("POST_SCRIPT_TERMINATED"),
        stamps="main_end_if_unset",
        col4="status",
        action=_post_result,  # output parse, deferred main.end, inv.*, post.end
        db=("job_inst.post.end", "ok"),
        ends="yes",
    ),
    "POST_SCRIPT_FAILURE": JobState(
        follows=_after("POST_SCRIPT_TERMINATED"),
        stamps="main_end_if_unset",
        col4="status",
        action=_post_result,
        db=("job_inst.post.end", "failed"),
        db_name="POST_SCRIPT_FAILED",
        ends="yes",
    ),
}


def in_order(state: str, prev: str | None) -> bool:
    """Whether DAGMan writes ``state`` after ``prev`` (:meth:`JobState.allows` of its row)."""
    return JOB_STATES[state].allows(prev)


# A state without a row: it writes its jobstate.log line and does nothing else.
TRANSPARENT = JobState(follows=frozenset())

# An instance in one of these states is reused by the next submit of its node.
REUSABLE_STATES = frozenset(name for name, row in JOB_STATES.items() if row.reusable)


def db_state_names() -> dict[str, tuple[str, str]]:
    """Event name -> (DB state for status 0 or none, DB state for a failure status).

    The inverse of the table's ``db`` column, for the SQL loader.
    """
    names: dict[str, list[str]] = {}
    for state, row in JOB_STATES.items():
        if row.db is None:
            continue
        event, side = row.db
        pair = names.setdefault(event, ["", ""])
        name = row.db_name or state
        if side in ("ok", "any"):
            pair[0] = name
        if side in ("failed", "any"):
            pair[1] = name
    return {event: (ok, failed) for event, (ok, failed) in names.items()}
