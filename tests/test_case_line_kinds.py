"""Every dagman.out line kind HTCondor 9-23 DAGMan writes and the reference reads is in a case.

The conformance cases (tests/data/cases, expected outputs made by the reference) are the only
place where such a line's handling is checked against the reference, so each kind below must
occur in at least one case's dagman.out (sub-workflows included).  The kinds follow the
behaviour notes (``../shared/docs/monitord-behaviour.md`` 2.1-2.4) and real 2022 logs
(HTCondor 9.11: ``(D_ALWAYS)`` debug tokens, condor_submit output, submit warnings with an
untimed continuation line).  Old forms no 9-23 DAGMan writes (``for Condor Job X (1.0)``,
``Submitting Condor Node``, log times without a year, ``Condor log will be written to``,
``All DAG node user log files:``) are not required here.

``LINE_KINDS`` is the list: name -> pattern on the message after the log time (and after an
optional debug token).  Kinds marked "ignored" are read by the reference without effect; they
are listed because a reimplementation could mistake them for one that has an effect.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CASES = Path(__file__).resolve().parent / "data" / "cases"
_TIME = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:\(D_[A-Z_|]+\) )?")

# ULOG events DAGMan 9-23 logs for node jobs ("Event: ULOG_<kind> for HTCondor Node ...").
ULOG_KINDS = (
    "SUBMIT",
    "EXECUTE",
    "JOB_TERMINATED",
    "POST_SCRIPT_TERMINATED",
    "IMAGE_SIZE",
    "JOB_HELD",
    "JOB_RELEASED",
    "JOB_ABORTED",
    "JOB_EVICTED",
    "SHADOW_EXCEPTION",
    "REMOTE_ERROR",
    "JOB_SUSPENDED",
    "JOB_UNSUSPENDED",
    "FILE_TRANSFER",
    "GRID_SUBMIT",
    "GRID_RESOURCE_UP",
    "GRID_RESOURCE_DOWN",
    "JOB_STATUS_UNKNOWN",
    "JOB_STATUS_KNOWN",
    "JOB_DISCONNECTED",
    "JOB_RECONNECTED",
    "JOB_RECONNECT_FAILED",
    "JOB_AD_INFORMATION",
    "GENERIC",
    "EXECUTABLE_ERROR",
)

LINE_KINDS: dict[str, str] = {
    **{
        f"event {kind}": rf"^Event: ULOG_{kind} for HTCondor Node \S+ \(\d+\.\d+\.\d+\) \{{"
        for kind in ULOG_KINDS
    },
    "submitting node": r"^Submitting HTCondor Node \S+ job\(s\)\.\.\.$",
    "submit failed": r"^ERROR: submit attempt failed",
    "PRE script started": r"^Running PRE script of Node \S+\.\.\.$",
    "POST script started": r"^Running POST script of Node \S+\.\.\.$",
    "PRE script success": r"^PRE Script of [Nn]ode \S+ completed successfully\.$",
    "PRE script failure": r"^PRE Script of (?:[Nn]ode|Job) \S+ failed with status \d+",
    "POST script success": r"^POST Script of [Nn]ode \S+ completed successfully\.$",
    "POST script failure": r"^POST Script of [Nn]ode \S+ failed with status \d+",
    "job success": r"^Node \S+ job proc \(\d+\.\d+\.\d+\) completed successfully\.$",
    "job failure (status)": r"^Node \S+ job proc \(\d+\.\d+\.\d+\) failed with status -?\d+\.$",
    "job failure (signal)": r"^Node \S+ job proc \(\d+\.\d+\.\d+\) failed with signal \d+\.$",
    "DAGMan exit": r"EXITING WITH STATUS \d+$",
    "DAGMan start": r"\(CONDOR_DAGMAN\) STARTING UP$",
    "DAGMan pid": r"^\*\* PID = \d+$",
    "parsing the dag": r"^Parsing \S+\.dag \.\.\.$",
    "HTCondor version 9": r"^\*\* \$CondorVersion: 9\.",
    "HTCondor version 10+": r"^\*\* \$CondorVersion: 1\d\.",
    "recovery start": r"^Running in RECOVERY mode\.\.\.",
    "recovery end": r"^\.\.\.done with RECOVERY mode",
    "SIGUSR1 (condor_rm)": r"^Received SIGUSR1$",
    "hold reason": r"^\s+Hold reason: ",
    "debug token (D_ALWAYS)": r"",  # checked on the raw line, see _raw_kinds
    # ignored by the reference
    "ignored: retrying node": r"^Retrying node \S+ \(retry #\d+ of \d+\)",
    "ignored: node job completed": r"^Node \S+ job completed$",
    "ignored: assigned id": r"^\tassigned HTCondor ID \(\d+\.\d+\.\d+\)$",
    "ignored: reassigning id": r"^Reassigning the id of job ",
    "ignored: direct submission": r"^Submitting node \S+ from file \S+ using direct job submission$",
    "ignored: condor_submit command": r"^submitting: /\S*condor_submit ",
    "ignored: condor_submit output": r"^From submit: \d+ job\(s\) submitted to cluster \d+\.$",
    "ignored: submit warning": r"^Submit warning: ",
    "ignored: progress table": r"^Of \d+ nodes total:$",
    "ignored: DAG status": r"^DAG status: \d+ \(DAG_STATUS_",
    "ignored: held count": r"^\d+ job proc\(s\) currently held$",
    "ignored: aborting": r"^Aborting DAG\.\.\.$",
    "ignored: rescue written": r"^Writing Rescue DAG to \S+\.\.\.$",
    "ignored: rescue found": r"^Found rescue DAG number \d+",
    "ignored: using rescue": r"^USING RESCUE DAG ",
    "ignored: condor_rm of node jobs": r"^Running: \S*condor_rm ",
    "ignored: POST returned": r"^POST for Node \S+ returned \d+$",
    "ignored: truncating node log": r"^MultiLogFiles: truncating log file ",
    "ignored: metrics written": r"^Wrote metrics file ",
    "ignored: all done": r"^All jobs Completed!$",
    "ignored: failed nodes list": r"^ERROR: the following job\(s\) failed:$",
}
# Conditions on the whole file rather than on one line.
FILE_KINDS = {
    "no progress lines (low verbosity)": lambda text: (
        "EXITING WITH STATUS" in text and "Of " not in text
    ),
    "no exit line (running or just started)": lambda text: "EXITING WITH STATUS" not in text,
    "last line cut (no line break)": lambda text: not text.endswith("\n"),
    "untimed continuation line": lambda text: re.search(r"\n\|", text) is not None,
    "two DAGMan runs (restart)": lambda text: text.count("(CONDOR_DAGMAN) STARTING UP") > 1,
}


def _dagman_outs() -> dict[str, str]:
    return {
        str(p.relative_to(CASES)): p.read_text(errors="replace")
        for p in sorted(CASES.glob("*/input/**/*.dag.dagman.out"))
    }


def _where(kind: str, texts: dict[str, str]) -> list[str]:
    if kind in FILE_KINDS:
        return [name for name, text in texts.items() if FILE_KINDS[kind](text)]
    if kind == "debug token (D_ALWAYS)":
        rx = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d \(D_ALWAYS\) ", re.MULTILINE)
        return [name for name, text in texts.items() if rx.search(text)]
    rx = re.compile(LINE_KINDS[kind])
    found = []
    for name, text in texts.items():
        for line in text.splitlines():
            m = _TIME.match(line)
            if m is not None and rx.search(line[m.end() :]):
                found.append(name)
                break
    return found


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    found = _dagman_outs()
    assert found, f"no case dagman.out under {CASES}"
    return found


@pytest.mark.parametrize("kind", [*LINE_KINDS, *FILE_KINDS])
def test_line_kind_in_a_case(kind: str, texts: dict[str, str]) -> None:
    assert _where(kind, texts), f"no case has a {kind!r} line"


def test_line_kinds_are_not_vacuous(texts: dict[str, str]) -> None:
    """A pattern that matched everything would make the list above meaningless."""
    assert not _where("SIGUSR1 (condor_rm)", {"x": "01/01/23 00:00:00 Parsing x.dag ...\n"})
    assert _where(
        "job failure (signal)",
        {"x": "01/01/23 00:00:00 (D_ALWAYS) Node a job proc (1.0.0) failed with signal 9.\n"},
    )
