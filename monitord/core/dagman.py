"""dagman.out line classification (behaviour doc §2.1-2.2), sans I/O.

``classify(line)`` turns one dagman.out line into a :class:`DagmanLine`, or
None for the great majority of lines that carry nothing for monitord.  Rules
are tried in the reference's order and the first match wins.  Cheap substring
tests decide which rule can apply; a compiled regex then extracts the fields
of that one rule only, and the timestamp is computed only for lines that
matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from monitord.core.timeparse import dagman_timestamp

# Kinds of recognised lines.
ULOG = "ulog"
DAGMAN_SUBMIT = "dagman_submit"
SUBMIT_FAILED = "submit_failed"
SCRIPT_STARTED = "script_started"
SCRIPT_RESULT = "script_result"
JOB_RESULT = "job_result"
DAGMAN_EXIT = "dagman_exit"
DAGMAN_START = "dagman_start"
PID = "pid"
PARSING = "parsing"
CONDOR_VERSION = "condor_version"
CONDOR_LOG = "condor_log"
LOG_LIST = "log_list"
RECOVERY_START = "recovery_start"
RECOVERY_END = "recovery_end"
SIGUSR1 = "sigusr1"
HOLD_REASON = "hold_reason"


@dataclass(slots=True)
class DagmanLine:
    kind: str
    ts: float
    job: str | None = None
    # ULOG name, or PRE/POST for scripts, or SUCCESS/FAILURE for job results.
    state: str | None = None
    sched_id: str | None = None
    # Plain status from dagman.out (int), or None when the line has none.
    status: int | None = None
    text: str | None = None


# Leading "MM/DD[/YY] HH:MM:SS " and an optional "(D_XXX) " debug token.
_LEAD = re.compile(r"^\s*\d{1,2}/\d{1,2}(?:/\d{1,2})?\s+\d{1,2}:\d{2}:\d{2}\s+(?:\(D_\w+\)\s+)?")
#: the rule of asterisks that opens DAGMan's start banner (above "STARTING UP"), with any lead
BANNER_RULE = re.compile(_LEAD.pattern + r"\*{20,}\s*$")
_ULOG = re.compile(r"Event: ULOG_(\S+) for (?:HTCondor|Condor) (?:Node|Job) (\S+) \((\d+)\.(\d+)")
_SUBMITTING = re.compile(r"Submitting (?:HTCondor|Condor) Node (\S+) job")
_SCRIPT_RUN = re.compile(r"^Running (PRE|POST) script of (?:Node|Job|node|job) (.+)\.\.\.$")
_SCRIPT_END = re.compile(r"^(PRE|POST) Script of (?:Node|Job|node|job) (\S+) (.*)$")
_FAILED_STATUS = re.compile(r"^failed with status (-?\d+)\.?$")
_JOB_FAIL = re.compile(
    r"^Node (\S+) job proc \(([\d.]+)\) failed with (?:status|signal) (-?\d+)\.$"
)
_JOB_OK = re.compile(r"^Node (\S+) job proc \(([\d.]+)\) completed successfully\.$")
_EXIT = re.compile(r"EXITING WITH STATUS (\S+)$")
_STARTING = re.compile(r"\*\* condor_scheduniv_exec\.(\S+) \(CONDOR_DAGMAN\) STARTING UP")
_PID = re.compile(r"\*\* PID = (\S+)$")
_PARSING = re.compile(r"Parsing (.+) ...$")
_VERSION = re.compile(r"\$CondorVersion: (\d+)\.(\d+)\.(\d+)")
_CONDOR_LOG = re.compile(r"Condor log will be written to ([^,]+)")
_LOG_LIST_ENTRY = re.compile(r"\d{2}\s{3,}(\S.*)$")


def message_of(line: str) -> str:
    m = _LEAD.match(line)
    return line[m.end() :] if m else line


def classify(
    line: str, *, adjust: float = 0.0, expect_log_entry: bool = False
) -> DagmanLine | None:
    """Classify one (right-stripped) dagman.out line."""
    kind: str
    fields: dict[str, object]
    if "Event: ULOG_" in line:
        m = _ULOG.search(line)
        if not m:
            return None
        kind = ULOG
        fields = {"state": m.group(1), "job": m.group(2), "sched_id": f"{m.group(3)}.{m.group(4)}"}
    elif "Submitting " in line and " Node " in line:
        m = _SUBMITTING.search(line)
        if not m:
            return None
        kind, fields = DAGMAN_SUBMIT, {"job": m.group(1)}
    elif "ERROR: submit attempt failed" in line:
        kind, fields = SUBMIT_FAILED, {}
    elif "script of " in line and "Running " in line:
        m = _SCRIPT_RUN.match(message_of(line))
        if not m:
            return None
        kind, fields = SCRIPT_STARTED, {"state": m.group(1), "job": m.group(2)}
    elif " Script of " in line:
        m = _SCRIPT_END.match(message_of(line))
        if not m:
            return None
        tail = m.group(3)
        status: int | None
        if tail.endswith("completed successfully."):
            status = 0
        else:
            fm = _FAILED_STATUS.match(tail)
            status = int(fm.group(1)) if fm else None
        kind = SCRIPT_RESULT
        fields = {"state": m.group(1), "job": m.group(2), "status": status, "text": tail}
    elif " job proc (" in line:
        msg = message_of(line)
        m = _JOB_FAIL.match(msg)
        if m:
            kind = JOB_RESULT
            fields = {
                "state": "FAILURE",
                "job": m.group(1),
                "sched_id": m.group(2),
                "status": int(m.group(3)),
            }
        else:
            m = _JOB_OK.match(msg)
            if not m:
                return None
            kind = JOB_RESULT
            fields = {"state": "SUCCESS", "job": m.group(1), "sched_id": m.group(2), "status": 0}
    elif "EXITING WITH STATUS" in line:
        m = _EXIT.search(line)
        if not m:
            return None
        kind, fields = DAGMAN_EXIT, {"text": m.group(1)}
    elif "STARTING UP" in line:
        m = _STARTING.search(line)
        if not m:
            return None
        kind, fields = DAGMAN_START, {"sched_id": m.group(1)}
    elif "** PID = " in line:
        m = _PID.search(line)
        if not m:
            return None
        kind, fields = PID, {"text": m.group(1)}
    elif "Parsing " in line:
        m = _PARSING.search(line)
        if not m:
            return None
        kind, fields = PARSING, {"text": m.group(1)}
    elif "$CondorVersion: " in line:
        m = _VERSION.search(line)
        if not m:
            return None
        version = int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3))
        kind, fields = CONDOR_VERSION, {"status": version}
    elif "Condor log will be written to " in line:
        m = _CONDOR_LOG.search(line)
        if not m:
            return None
        kind, fields = CONDOR_LOG, {"text": m.group(1).strip()}
    elif "All DAG node user log files:" in line:
        kind, fields = LOG_LIST, {}
    elif expect_log_entry and _LOG_LIST_ENTRY.search(line):
        m = _LOG_LIST_ENTRY.search(line)
        assert m is not None
        kind, fields = CONDOR_LOG, {"text": m.group(1).strip()}
    elif "Running in RECOVERY mode..." in line:
        kind, fields = RECOVERY_START, {}
    elif "...done with RECOVERY mode" in line:
        kind, fields = RECOVERY_END, {}
    elif "Received SIGUSR1" in line:
        kind, fields = SIGUSR1, {}
    elif "Hold reason:" in line:
        kind, fields = HOLD_REASON, {"text": line.split("Hold reason:", 1)[1]}
    else:
        return None
    ts = dagman_timestamp(line, adjust)
    if ts is None:
        return None
    return DagmanLine(kind, ts, **fields)  # type: ignore[arg-type]
