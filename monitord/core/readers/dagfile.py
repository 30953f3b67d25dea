"""The workflow's ``.dag`` file (spec 1.3): submit files, PRE/POST scripts, SUBDAGs.

Only what the daemon needs per node is collected; RETRY, PARENT/CHILD, VARS,
PRIORITY, CATEGORY and MAXJOBS come from static.bp or do not matter.  Keywords
are matched case-insensitively on the first word of each line.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger(__name__)

# SCRIPT PRE|POST <node> <executable><one whitespace><arguments>, matched on the line
# with its line break (as the reference does): arguments keep any further leading and
# trailing whitespace, and a script without arguments matches (with empty arguments)
# unless it is the file's last line and has no line break.
_SCRIPT = re.compile(r"SCRIPT\s+(PRE|POST)\s+(\S+)\s+(\S+)\s(.*)", re.IGNORECASE)
_PRE_LOG = re.compile(r"-Dpegasus\.log\.\*=(\S+)\s")


@dataclass(frozen=True, slots=True)
class DagScript:
    executable: str
    arguments: str


@dataclass(slots=True)
class DagNode:
    name: str
    submit_file: str | None = None
    pre_script: DagScript | None = None
    post_script: DagScript | None = None
    pre_script_log: str | None = None
    subdag_file: str | None = None
    subdag_dir: str | None = None
    is_task: bool = False

    @property
    def is_subdag(self) -> bool:
        return self.subdag_file is not None

    @property
    def has_post_script(self) -> bool:
        return self.post_script is not None


@dataclass(slots=True)
class DagInfo:
    nodes: dict[str, DagNode] = field(default_factory=dict)
    is_pmc: bool = False

    def node(self, name: str) -> DagNode:
        found = self.nodes.get(name)
        if found is None:
            found = self.nodes[name] = DagNode(name)
        return found

    def submit_path(self, name: str, run_dir: str) -> str | None:
        """The node's submit file joined with the run dir (None: SUBDAG, TASK or unknown)."""
        node = self.nodes.get(name)
        if node is None or node.submit_file is None:
            return None
        return os.path.join(run_dir, node.submit_file)


def parse_dag(text: str) -> DagInfo:
    """Collect per-node information from the text of a ``.dag`` file."""
    info = DagInfo()
    parts = text.split("\n")
    for i, part in enumerate(parts):
        raw = part + "\n" if i < len(parts) - 1 else part  # lines as a text file yields them
        line = raw.strip()
        if not line or line[0] == "#":
            continue
        words = line.split()
        keyword = words[0].upper()
        if keyword == "JOB":
            if len(words) < 3:
                log.warning("dag JOB line without submit file", line=line)
                continue
            if words[-1].upper() == "DONE":
                continue
            info.node(words[1]).submit_file = words[2]
        elif keyword == "TASK":
            if len(words) < 2:
                log.warning("dag TASK line without name", line=line)
                continue
            info.node(words[1]).is_task = True
            info.is_pmc = True
        elif keyword == "SCRIPT":
            m = _SCRIPT.match(raw.lstrip())
            if m is None:
                log.debug("dag SCRIPT line not understood", line=line)
                continue
            kind, name, executable, arguments = m.groups()
            node = info.node(name)
            # One copy of the script's path (every node of a Pegasus DAG runs the same
            # pegasus-exitcode): the parsed .dag is kept to the workflow's end.
            script = DagScript(sys.intern(executable), arguments)
            if kind.upper() == "PRE":
                node.pre_script = script
                log_match = _PRE_LOG.search(arguments)
                if log_match is not None:
                    node.pre_script_log = log_match.group(1)
            else:
                node.post_script = script
        elif keyword == "SUBDAG":
            if len(words) < 4 or words[1].upper() != "EXTERNAL":
                log.warning("dag SUBDAG line not understood", line=line)
                continue
            if words[-1].upper() == "DONE":
                continue
            node = info.node(words[2])
            node.subdag_file = words[3]
            node.subdag_dir = os.path.dirname(words[3])
            for i in range(4, len(words) - 1):
                if words[i].upper() == "DIR":
                    node.subdag_dir = words[i + 1]
                    break
    return info


def read_dag(path: str) -> DagInfo | None:
    """Parse the ``.dag`` at ``path``; None (with a warning) when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        log.warning("cannot read dag file", path=path, error=str(exc))
        return None
    return parse_dag(text)
