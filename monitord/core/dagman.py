"""dagman.out line classification (behaviour doc §2.1-2.2), sans I/O.

``classify(line)`` turns one dagman.out line into a :class:`DagmanLine`, or
None for the great majority of lines that carry nothing for monitord.  Rules
are tried in the reference's order and the first match wins.  Cheap substring
tests decide which rule can apply; a compiled regex then extracts the fields
of that one rule only, and the timestamp is computed only for lines that
matter.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from monitord.core.generated import make_function
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


class Verdict(enum.Enum):
    """What a rule's parse returns instead of fields when its line is not its own."""

    PASS = "pass"  # not this rule's line after all: the next rules are tried


PASS = Verdict.PASS

# What a rule takes from its line: (job, state, sched_id, status, text), the DagmanLine's
# fields after kind and ts; None: the rule's line is malformed (the line is nothing);
# PASS: the next rules are tried.
Fields = tuple[str | None, str | None, str | None, int | None, str | None]
Parsed = Fields | Literal[Verdict.PASS] | None
_NOTHING: Fields = (None, None, None, None, None)


def _ulog(line: str) -> Fields | None:
    m = _ULOG.search(line)
    return None if m is None else (m[2], m[1], f"{m[3]}.{m[4]}", None, None)


def _submitting(line: str) -> Fields | None:
    m = _SUBMITTING.search(line)
    return None if m is None else (m[1], None, None, None, None)


def _script_run(line: str) -> Fields | None:
    m = _SCRIPT_RUN.match(message_of(line))
    return None if m is None else (m[2], m[1], None, None, None)


def _script_end(line: str) -> Fields | None:
    m = _SCRIPT_END.match(message_of(line))
    if m is None:
        return None
    tail = m[3]
    status: int | None
    if tail.endswith("completed successfully."):
        status = 0
    else:
        fm = _FAILED_STATUS.match(tail)
        status = int(fm[1]) if fm else None
    return (m[2], m[1], None, status, tail)


def _job_proc(line: str) -> Fields | None:
    msg = message_of(line)
    m = _JOB_FAIL.match(msg)
    if m is not None:
        return (m[1], "FAILURE", m[2], int(m[3]), None)
    m = _JOB_OK.match(msg)
    return None if m is None else (m[1], "SUCCESS", m[2], 0, None)


def _text_of(pattern: re.Pattern[str]) -> Callable[[str], Fields | None]:
    def parse(line: str) -> Fields | None:
        m = pattern.search(line)
        return None if m is None else (None, None, None, None, m[1])

    return parse


def _dagman_start(line: str) -> Fields | None:
    m = _STARTING.search(line)
    return None if m is None else (None, None, m[1], None, None)


def _version(line: str) -> Fields | None:
    m = _VERSION.search(line)
    if m is None:
        return None
    return (None, None, None, int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3]), None)


def _condor_log(line: str) -> Fields | None:
    m = _CONDOR_LOG.search(line)
    return None if m is None else (None, None, None, None, m[1].strip())


def _log_list_entry(line: str) -> Parsed:
    m = _LOG_LIST_ENTRY.search(line)
    return PASS if m is None else (None, None, None, None, m[1].strip())


def _hold_reason(line: str) -> Fields | None:
    return (None, None, None, None, line.split("Hold reason:", 1)[1])


def _nothing(line: str) -> Fields | None:
    return _NOTHING


# (substring, second substring or None, kind, parse), in the reference's order: the first
# rule whose substrings the line holds decides, its parse extracts the fields.
Rule = tuple[str, str | None, str, Callable[[str], Parsed]]
_HEAD: tuple[Rule, ...] = (
    ("Event: ULOG_", None, ULOG, _ulog),
    ("Submitting ", " Node ", DAGMAN_SUBMIT, _submitting),
    ("ERROR: submit attempt failed", None, SUBMIT_FAILED, _nothing),
    ("script of ", "Running ", SCRIPT_STARTED, _script_run),
    (" Script of ", None, SCRIPT_RESULT, _script_end),
    (" job proc (", None, JOB_RESULT, _job_proc),
    ("EXITING WITH STATUS", None, DAGMAN_EXIT, _text_of(_EXIT)),
    ("STARTING UP", None, DAGMAN_START, _dagman_start),
    ("** PID = ", None, PID, _text_of(_PID)),
    ("Parsing ", None, PARSING, _text_of(_PARSING)),
    ("$CondorVersion: ", None, CONDOR_VERSION, _version),
    ("Condor log will be written to ", None, CONDOR_LOG, _condor_log),
    ("All DAG node user log files:", None, LOG_LIST, _nothing),
)
_TAIL: tuple[Rule, ...] = (
    ("Running in RECOVERY mode...", None, RECOVERY_START, _nothing),
    ("...done with RECOVERY mode", None, RECOVERY_END, _nothing),
    ("Received SIGUSR1", None, SIGUSR1, _nothing),
    ("Hold reason:", None, HOLD_REASON, _hold_reason),
)
_RULES = _HEAD + _TAIL
# After "All DAG node user log files:": an entry of the list (any line) is a Condor log.
_RULES_IN_LOG_LIST = (*_HEAD, ("", None, CONDOR_LOG, _log_list_entry), *_TAIL)


def _compiled(
    rules: tuple[Rule, ...], name: str = "classify", params: tuple[str, ...] = (), made: str = ""
) -> Callable[..., object]:
    """The rules as one function of straight ``if needle in line`` tests, generated from the
    table: a loop over the 17 rules unpacked each rule per line, 60-70 % of the cost of the
    ~60 % of lines that match none (bench/README.md, "parse30b").  ``made``: what a matched
    line returns, of ``{kind}``, ``ts`` and ``fields`` (default a :class:`DagmanLine`);
    ``params``: what it takes beyond ``line`` and ``adjust``."""
    env: dict[str, object] = {
        "PASS": PASS,
        "DagmanLine": DagmanLine,
        "dagman_timestamp": dagman_timestamp,
    }
    made = made or "DagmanLine({kind}, ts, *fields)"
    src = []
    for i, (needle, also, kind, parse) in enumerate(rules):
        env[f"parse_{i}"], env[f"kind_{i}"] = parse, kind
        test = f"{needle!r} in line" + ("" if also is None else f" and {also!r} in line")
        src += [
            f"if {test}:",
            f"    fields = parse_{i}(line)",
            "    if fields is not PASS:",
            "        if fields is None:",
            "            return None",
            "        ts = dagman_timestamp(line, adjust)",
            f"        return None if ts is None else {made.format(kind=f'kind_{i}')}",
        ]
    src.append("return None")
    return make_function(name, ["line", "adjust", *params], src, env)


#: ``classify`` of a line outside the list of log files, and of one inside it.
classify_line: Callable[[str, float], DagmanLine | None]
classify_in_log_list: Callable[[str, float], DagmanLine | None]
classify_line = _compiled(_RULES)  # type: ignore[assignment]
classify_in_log_list = _compiled(_RULES_IN_LOG_LIST)  # type: ignore[assignment]

#: (position in its chunk, kind, ts, job, state, sched_id, status, text): a classified line
#: as the read-ahead worker sends it (``monitord/core/linerecords.py``).
LineRecord = tuple[int, str, float, str | None, str | None, str | None, int | None, str | None]
#: :data:`classify_line` made straight into a :data:`LineRecord` (no :class:`DagmanLine` to
#: copy from: 165,000 fewer objects at 20,000 jobs); ``share`` (a dict's ``setdefault``) shares
#: a job's name and a state within a chunk, so that its pickle holds each once.
Share = Callable[[str | None, str | None], str | None]
record_line: Callable[[str, float, int, Share], LineRecord | None]
record_line = _compiled(  # type: ignore[assignment]
    _RULES,
    "record_line",
    ("pos", "share"),
    "(pos, {kind}, ts, share(fields[0], fields[0]), share(fields[1], fields[1]),"
    " fields[2], fields[3], fields[4])",
)


def classify(
    line: str, *, adjust: float = 0.0, expect_log_entry: bool = False
) -> DagmanLine | None:
    """Classify one (right-stripped) dagman.out line: the first rule whose substrings the
    line holds decides (a PASS of its parse goes on to the next)."""
    return (classify_in_log_list if expect_log_entry else classify_line)(line, adjust)
