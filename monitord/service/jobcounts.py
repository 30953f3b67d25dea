"""Job counts per state as pegasus-status shows them: UNREADY READY PRE QUEUED POST SUCCESS FAILURE.

Two sources, best first:

1. **DAGMan's own table.**  At the end of every cycle in which something changed, DAGMan writes
   to dagman.out::

       Of 5 nodes total:
        Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile
         ===     ===      ===     ===     ===        ===      ===      ===
           1       0        0       1       0          3        0        0

   These are DAGMan's node counters, which is what pegasus-status reports, so
   :class:`DagmanProgress` keeps the latest table and :func:`job_counts` returns it.  It stays
   right through what the state machine cannot see: nodes pre-completed by a rescue DAG, lines
   skipped in DAGMan's recovery mode, finished jobs dropped at a DAGMan restart.  Columns are
   found by name (older DAGMan has no ``Futile``).  ``Futile`` nodes (an ancestor failed, so they
   will never run) are counted as UNREADY: they never became ready, and the row then still adds
   up to the DAG's node count.
2. **The state machine**, only while no table has been seen (old or truncated logs): each node
   of the ``.dag`` is placed by the state of its latest job instance (:func:`counts_from_states`);
   a node not started yet is READY when all its parents (PARENT/CHILD lines of the ``.dag``)
   succeeded, else UNREADY; a failed node DAGMan announced a retry for is READY.  What it cannot
   know: nodes a rescue DAG marks DONE, and finished jobs the state machine forgets when DAGMan
   restarts.

The service feeds every dagman.out line to the workflow's tracker as well as to the
:class:`~monitord.core.workflow.Workflow` (``progress_for(wf).feed(line)``); lines a resumed daemon
skips must be fed too, so that the table is known at once.
"""

from __future__ import annotations

import os
import re
import weakref
from typing import TYPE_CHECKING

from monitord.core.jobinstance import state_of
from monitord.service.status import JOB_COLUMNS

if TYPE_CHECKING:
    from monitord.core.workflow import Workflow

# DAGMan's column header -> pegasus-status column.
_DAGMAN_COLUMNS = {
    "Done": "SUCCESS",
    "Pre": "PRE",
    "Queued": "QUEUED",
    "Post": "POST",
    "Ready": "READY",
    "Un-Ready": "UNREADY",
    "Failed": "FAILURE",
    "Futile": "UNREADY",
}
_TOTAL = re.compile(r"\bOf (\d+) nodes total:\s*$")
_RETRYING = re.compile(r"\bRetrying node (\S+) \(retry #")
_RESTARTED = re.compile(
    r"\b(?:Submitting (?:HTCondor|Condor) Node|Running PRE script of Node) (\S+?)(?: job\(s\))?\.\.\."
)

# Tracker steps: waiting for "Of N nodes total:", then header, separator, counts.
_IDLE, _HEADER, _SEPARATOR, _COUNTS = range(4)


class DagmanProgress:
    """The latest ``Of N nodes total:`` table of one dagman.out (sans I/O: fed lines)."""

    __slots__ = (
        "counts",
        "nodes_total",
        "tables_seen",
        "retrying",
        "parents",
        "_step",
        "_header",
        "_total",
    )

    def __init__(self) -> None:
        self.counts: dict[str, int] | None = None  # JOB_COLUMNS -> count, None before a table
        self.nodes_total: int | None = None
        self.tables_seen = 0
        # Nodes between a failed attempt and their retry (for counts_from_states).
        self.retrying: set[str] = set()
        # node -> parents, read from the .dag when counts_from_states first needs them.
        self.parents: dict[str, set[str]] | None = None
        self._step = _IDLE
        self._header: list[str] = []
        self._total = 0

    def feed(self, line: str) -> None:
        """One dagman.out line (with or without its newline)."""
        step = self._step
        if step == _IDLE:
            # Fast path: the lines that matter here all hold "node" (the rare restarts of
            # retried nodes say "Node", and are only looked for while a retry is pending).
            if "node" not in line and not self.retrying:
                return
            if "Retrying node " in line:
                m = _RETRYING.search(line)
                if m is not None:
                    self.retrying.add(m.group(1))
            elif self.retrying and ("Submitting " in line or "Running PRE " in line):
                m = _RESTARTED.search(line)
                if m is not None:
                    self.retrying.discard(m.group(1))
            elif "nodes total:" in line:
                m = _TOTAL.search(line.rstrip())
                if m is not None:
                    self._total = int(m.group(1))
                    self._step = _HEADER
            return
        words = line.split()
        if step == _HEADER:
            if "Done" in words:
                header = words[words.index("Done") :]
                if all(name in _DAGMAN_COLUMNS for name in header):
                    self._header = header
                    self._step = _SEPARATOR
                    return
        elif step == _SEPARATOR:
            width = len(self._header)
            if len(words) >= width and all(w == "===" for w in words[-width:]):
                self._step = _COUNTS
                return
        elif step == _COUNTS:
            width = len(self._header)
            values = words[-width:]
            if len(words) >= width and all(v.isdigit() for v in values):
                counts = dict.fromkeys(JOB_COLUMNS, 0)
                for name, value in zip(self._header, values, strict=True):
                    counts[_DAGMAN_COLUMNS[name]] += int(value)
                self.counts = counts
                self.nodes_total = self._total
                self.tables_seen += 1
                self._step = _IDLE
                return
        # Anything unexpected starts over; the line may open a new table.
        self._step = _IDLE
        self.feed(line)


_trackers: weakref.WeakKeyDictionary[Workflow, DagmanProgress] = weakref.WeakKeyDictionary()


def progress_for(wf: Workflow) -> DagmanProgress:
    """The table tracker of ``wf`` (created on first use, dropped with the workflow)."""
    tracker = _trackers.get(wf)
    if tracker is None:
        tracker = _trackers[wf] = DagmanProgress()
    return tracker


def job_counts(wf: Workflow, progress: DagmanProgress | None = None) -> dict[str, int]:
    """pegasus-status's columns for ``wf``: DAGMan's latest table, else from the job states."""
    tracker = progress if progress is not None else _trackers.get(wf)
    if tracker is not None and tracker.counts is not None:
        return dict(tracker.counts)
    return counts_from_states(wf)


def percent_done(counts: dict[str, int]) -> float:
    """pegasus-status's %DONE: finished successfully / all nodes, in percent."""
    total = sum(counts.get(c, 0) for c in JOB_COLUMNS)
    return 100.0 * counts.get("SUCCESS", 0) / total if total else 0.0


# Latest instance state -> column; states not listed (SUBMIT, EXECUTE, JOB_HELD, IMAGE_SIZE,
# JOB_TERMINATED, ... any HTCondor event of a job in the queue) are QUEUED.
_STATE_COLUMN = {
    "PRE_SCRIPT_STARTED": "PRE",
    "PRE_SCRIPT_TERMINATED": "PRE",
    "PRE_SCRIPT_SUCCESS": "READY",  # waiting to be submitted
    "PRE_SCRIPT_FAILURE": "FAILURE",
    "SUBMIT_FAILED": "READY",  # DAGMan tries the submission again
    "GRID_SUBMIT_FAILED": "READY",
    "GLOBUS_SUBMIT_FAILED": "READY",
    "POST_SCRIPT_STARTED": "POST",
    "POST_SCRIPT_TERMINATED": "POST",
    "POST_SCRIPT_SUCCESS": "SUCCESS",
    "POST_SCRIPT_FAILURE": "FAILURE",
}
# Job outcomes: the node is done, unless its POST script is still to run.
_JOB_DONE = {"JOB_SUCCESS": "SUCCESS", "JOB_FAILURE": "FAILURE", "JOB_ABORTED": "FAILURE"}


def counts_from_states(wf: Workflow, progress: DagmanProgress | None = None) -> dict[str, int]:
    """Counts from the state machine's job instances, placed as DAGMan places its nodes."""
    tracker = progress if progress is not None else progress_for(wf)
    if tracker.parents is None:
        tracker.parents = _read_parents(wf)
    parents = tracker.parents
    counts = dict.fromkeys(JOB_COLUMNS, 0)
    dag = wf.dag
    pmc = bool(dag is not None and dag.is_pmc)
    # A copy first (the workflow may be fed in a worker thread while a snapshot is taken):
    # each node's latest with its .dag entry, read off the one table (core/nodetable.py)
    # without a look-up by name.
    with_nodes = list(wf.latest.with_nodes())
    latest = {name: inst for name, _, inst in with_nodes}
    nodes = {name: node for name, node, _ in with_nodes}
    names = set(dag.nodes) if dag is not None else set()
    names.update(latest)
    column_of: dict[str, str] = {}
    waiting: list[str] = []
    for name in names:
        inst = latest.get(name)
        state = None if inst is None else state_of(inst)
        if state is None:
            waiting.append(name)
            continue
        column = _STATE_COLUMN.get(state)
        if column is None:
            done = _JOB_DONE.get(state)
            if done is None:
                column = "QUEUED"
            else:
                node = nodes.get(name)
                has_post = node is not None and node.post_script is not None and not pmc
                column = "POST" if has_post else done
        if column == "FAILURE" and name in tracker.retrying:
            column = "READY"
        column_of[name] = column
        counts[column] += 1
    for name in waiting:
        ready = all(column_of.get(p) == "SUCCESS" for p in parents.get(name, ()))
        counts["READY" if ready else "UNREADY"] += 1
    return counts


def dag_parents(text: str) -> dict[str, set[str]]:
    """node -> its parents, from the ``PARENT p1 p2 CHILD c1 c2`` lines of a ``.dag``."""
    parents: dict[str, set[str]] = {}
    for raw in text.splitlines():
        words = raw.split()
        if len(words) < 4 or words[0].upper() != "PARENT":
            continue
        upper = [w.upper() for w in words]
        if "CHILD" not in upper:
            continue
        cut = upper.index("CHILD")
        for child in words[cut + 1 :]:
            parents.setdefault(child, set()).update(words[1:cut])
    return parents


def _read_parents(wf: Workflow) -> dict[str, set[str]]:
    dag_name = getattr(wf.bd, "dag", None)
    if not dag_name:
        return {}
    text = wf.ctx.read_text(os.path.join(wf.run_dir, dag_name))
    return dag_parents(text) if text else {}
