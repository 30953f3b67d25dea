"""The DAGMan job state table: what each state does to a job instance.

Everything the state machine needs to know about a single state lives here as
data; ``monitord.core.workflow`` walks these tables.  States not listed at all
(SHADOW_EXCEPTION, JOB_SUSPENDED, ...) only get a jobstate.log line.
"""

from __future__ import annotations

# state -> brief events it emits, each (event name, status or None).
SIMPLE_EVENTS: dict[str, tuple[tuple[str, int | None], ...]] = {
    "PRE_SCRIPT_STARTED": (("job_inst.pre.start", None),),
    "PRE_SCRIPT_TERMINATED": (("job_inst.pre.term", None),),
    "SUBMIT": (("job_inst.submit.start", None), ("job_inst.submit.end", 0)),
    "GRID_SUBMIT": (("job_inst.grid.submit.start", None), ("job_inst.grid.submit.end", 0)),
    "GLOBUS_SUBMIT": (("job_inst.globus.submit.start", None), ("job_inst.globus.submit.end", 0)),
    "REMOTE_ERROR": (("job_inst.remote_error", None),),
    "IMAGE_SIZE": (("job_inst.image.info", None),),
    "JOB_TERMINATED": (("job_inst.main.term", 0),),
    "JOB_EVICTED": (("job_inst.main.term", -1),),
    "JOB_RELEASED": (("job_inst.held.end", 0),),
    "POST_SCRIPT_STARTED": (("job_inst.post.start", None),),
    "POST_SCRIPT_TERMINATED": (("job_inst.post.term", None),),
}

# Submit failures: (start event, end event); end carries status -1, then main.end(-1).
SUBMIT_FAILURES: dict[str, tuple[str, str]] = {
    "SUBMIT_FAILED": ("job_inst.submit.start", "job_inst.submit.end"),
    "GRID_SUBMIT_FAILED": ("job_inst.grid.submit.start", "job_inst.grid.submit.end"),
    "GLOBUS_SUBMIT_FAILED": ("job_inst.globus.submit.start", "job_inst.globus.submit.end"),
}

# state -> JobInstance time attribute set to the line's timestamp.
TIME_EFFECTS: dict[str, str] = {
    "PRE_SCRIPT_STARTED": "pre_start",
    "PRE_SCRIPT_SUCCESS": "pre_end",
    "PRE_SCRIPT_FAILURE": "pre_end",
    "EXECUTE": "main_start",
    "JOB_TERMINATED": "main_end",
    "JOB_ABORTED": "main_end",
    "SUBMIT_FAILED": "main_end",
    "GLOBUS_SUBMIT_FAILED": "main_end",
    "GRID_SUBMIT_FAILED": "main_end",
    "POST_SCRIPT_STARTED": "post_start",
    "POST_SCRIPT_TERMINATED": "post_end",
    "POST_SCRIPT_SUCCESS": "main_end_if_unset",
    "POST_SCRIPT_FAILURE": "main_end_if_unset",
}

# States whose jobstate.log column 4 is the dagman.out status instead of the sched id.
STATUS_STATES = frozenset(
    {
        "JOB_SUCCESS",
        "JOB_FAILURE",
        "PRE_SCRIPT_SUCCESS",
        "PRE_SCRIPT_FAILURE",
        "POST_SCRIPT_SUCCESS",
        "POST_SCRIPT_FAILURE",
    }
)

# An instance in one of these states is reused by the next submit of its node.
REUSABLE_STATES = frozenset({"PRE_SCRIPT_SUCCESS", "DAGMAN_SUBMIT"})

# pegasus_job_class code -> composite ``jobtype``.
JOB_CLASSES = {
    0: "unassigned",
    1: "compute",
    2: "stage-in-tx",
    3: "stage-out-tx",
    4: "registration",
    5: "inter-site-tx",
    6: "create-dir",
    7: "stage_worker_tx",
    8: "cleanup",
    9: "chmod",
    10: "dax",
    11: "dag",
}
