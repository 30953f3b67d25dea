"""In which order the writes happen: the plan that re-enacts a source (no I/O).

The order is the point of the player: a job's outputs must land just before the line
that ends it, a sub-workflow's dagman.out must start when its parent submits it and
end before the parent sees that job end, as on a real submit host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from monitord.core import dagman as D
from monitord.tools.player.actions import Action, Append, Copy, Pause, WriteFile
from monitord.tools.player.source import Source, SourceWorkflow

# --------------------------------------------------------------------------- planning (no I/O)

_END_ULOGS = frozenset({"JOB_TERMINATED", "JOB_ABORTED"})


def run_starts(lines: Sequence[str]) -> list[int]:
    """Index of the first line of each DAGMan run (the banner above ``STARTING UP``)."""
    starts: list[int] = []
    for i, line in enumerate(lines):
        if "STARTING UP" in line and "(CONDOR_DAGMAN)" in line:
            j = i
            while j > 0 and "******" in lines[j - 1] and (not starts or j - 1 > starts[-1]):
                j -= 1
            starts.append(j)
    return starts


@dataclass
class _Stream:
    wf: SourceWorkflow
    pauses: frozenset[int]
    pos: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    children: dict[str, _Stream] = field(default_factory=dict)  # running sub-workflow per job
    started: set[int] = field(default_factory=set)  # id() of sub-workflows already started
    in_recovery: bool = False
    paused_at: int = -1

    @property
    def finished(self) -> bool:
        return self.pos >= len(self.wf.lines)


def _job_outputs(stream: _Stream, node: str) -> list[Action]:
    """The node's outputs of the attempts so far that are not on disk yet."""
    upto = stream.counters.get(node, -1)
    actions: list[Action] = []
    for num, path in stream.wf.outputs.get(node, ()):
        if path not in stream.written and (num is None or num <= upto):
            stream.written.add(path)
            actions.append(WriteFile(path))
    return actions


def _step(stream: _Stream, out: list[Action], active: list[_Stream], pause: float) -> bool:
    """Emit the stream's next line (and what must precede or follow it); False when blocked."""
    line = stream.wf.lines[stream.pos]
    if pause > 0 and stream.pos in stream.pauses and stream.paused_at != stream.pos:
        stream.paused_at = stream.pos
        out.append(Pause(pause, stream.wf.dagman_out))
    rec = D.classify(line.rstrip())
    if rec is not None and rec.kind == D.RECOVERY_START:
        stream.in_recovery = True
    elif rec is not None and rec.kind == D.RECOVERY_END:
        stream.in_recovery = False
        rec = None
    if stream.in_recovery:
        rec = None
    node = rec.job if rec is not None else None
    ends_job = rec is not None and (
        (rec.kind == D.ULOG and rec.state in _END_ULOGS)
        or rec.kind == D.JOB_RESULT
        or (rec.kind == D.SCRIPT_RESULT and rec.state == "POST")
    )
    if ends_job and node is not None:
        child = stream.children.get(node)
        if child is not None and not child.finished:
            return False  # the sub-workflow's DAGMan has not exited yet
        out.extend(_job_outputs(stream, node))
    pre_failed = (
        rec is not None and rec.kind == D.SCRIPT_RESULT and rec.state == "PRE" and rec.status != 0
    )
    if pre_failed and node is not None:
        stream.counters[node] = stream.counters.get(node, -1) + 1
    out.append(Append(stream.wf.dagman_out, line))
    stream.pos += 1
    if rec is not None and rec.kind == D.ULOG and rec.state == "SUBMIT" and node is not None:
        n = stream.counters[node] = stream.counters.get(node, -1) + 1
        sub = stream.wf.subworkflows.get((node, n))
        if sub is None and n > 0:
            sub = stream.wf.subworkflows.get((node, 0))  # as the daemon: fall back to .000
        if sub is not None and id(sub) not in stream.started:
            stream.started.add(id(sub))
            child = _Stream(sub, frozenset(run_starts(sub.lines)[1:]))
            stream.children[node] = child
            active.append(child)
    return True


def _all(wf: SourceWorkflow) -> list[SourceWorkflow]:
    found = [wf]
    for sub in wf.subworkflows.values():
        found.extend(_all(sub))
    return found


def plan(source: Source, *, pause: float = 0.0) -> list[Action]:
    """The ordered write actions that re-enact ``source`` (no I/O).

    Streams (the root and each started sub-workflow) take turns, one line each; a stream
    waiting for a sub-workflow to finish skips its turn.  Outputs no line ever claimed, and
    sub-workflows no parent line ever started, are written at the end.
    """
    out: list[Action] = [Copy(path) for path in source.static]
    root = _Stream(source.root, frozenset(run_starts(source.root.lines)[1:]))
    active = [root]
    streams = [root]
    while active:
        progressed = False
        for stream in list(active):
            if stream.finished:
                active.remove(stream)
                continue
            before = len(active)
            if _step(stream, out, active, pause):
                progressed = True
            streams.extend(active[before:])
            if stream.finished:
                active.remove(stream)
        if not progressed and active:
            # Only possible with a malformed tree: let the first stream through.
            stream = active[0]
            stream.children.clear()
            _step(stream, out, active, pause)
    played = {id(s.wf) for s in streams}
    for stream in streams:
        for node in stream.wf.outputs:
            for _, path in stream.wf.outputs[node]:
                if path not in stream.written:
                    stream.written.add(path)
                    out.append(WriteFile(path))
    for wf in _all(source.root):
        if id(wf) not in played:
            out.append(WriteFile(wf.dagman_out))
            for paths in wf.outputs.values():
                out.extend(WriteFile(path) for _, path in paths)
    return out
