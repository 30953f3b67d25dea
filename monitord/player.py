"""Workflow player: writes a finished submit directory into a fresh one as DAGMan would.

Live following can only be tested against a workflow that is still being written.  The
player takes a *finished* submit directory and re-enacts it: everything HTCondor and the
planner wrote before DAGMan started is copied first; then every ``dagman.out`` is appended
line by line at a chosen speed, and each job's ``.out[.NNN]``/``.err[.NNN]`` appears just
before the line saying that the job ended (as HTCondor transfers outputs before it logs
the termination).  A sub-workflow's ``dagman.out`` starts when its parent logs the submit
of the sub-workflow job and is played concurrently with the parent; the parent's
termination line for that job waits until the sub-workflow has been played through.  A
dagman.out holding several DAGMan runs (rescue DAGs) is played through, optionally with a
pause between the runs.

Layers: :func:`scan` reads the source directory into a :class:`Source`; :func:`plan` (no
I/O) turns it into the ordered list of write actions; :class:`Player` performs them at the
requested rate (``run`` blocks; ``start`` runs it in a thread; :func:`play_async` from a
coroutine).  ``monitord play SRC DEST`` is the command-line front end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from monitord import dagman as D
from monitord.readers.braindump import BraindumpError, read_braindump
from monitord.readers.dagfile import parse_dag
from monitord.readers.subfile import parse_submit_file

# --------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Copy:
    """A file, directory or symlink that exists before DAGMan starts (copied up front)."""

    path: str


@dataclass(frozen=True, slots=True)
class Append:
    """One dagman.out line (with its newline) appended to ``path``."""

    path: str
    line: str


@dataclass(frozen=True, slots=True)
class WriteFile:
    """A file written whole at this point: a job output, or a dagman.out nobody starts."""

    path: str


@dataclass(frozen=True, slots=True)
class Pause:
    """A gap between two DAGMan runs of one dagman.out (rescue DAG resubmission)."""

    seconds: float
    path: str


Action = Copy | Append | WriteFile | Pause


# --------------------------------------------------------------------------- source model


@dataclass
class SourceWorkflow:
    """One workflow of the source tree; paths are relative to the played root."""

    dagman_out: str
    lines: list[str]
    # node -> [(retry number or None for an unsuffixed file, path)]
    outputs: dict[str, list[tuple[int | None, str]]] = field(default_factory=dict)
    # (sub-workflow job, retry number) -> the sub-workflow played when that attempt starts
    subworkflows: dict[tuple[str, int], SourceWorkflow] = field(default_factory=dict)


@dataclass
class Source:
    root: SourceWorkflow
    static: list[str]  # copied up front, parents before children


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


# --------------------------------------------------------------------------- scanning the source

_OUTPUT = re.compile(r"^(?P<stem>.+)\.(?:out|err)(?:\.(?P<num>\d+))?$")
# What monitord itself writes never belongs to a re-enacted DAGMan run.
_MONITORD_FILE = re.compile(r"^(?:monitord[.-].*|jobstate\.log.*|.*\.stampede\.db.*)$")


class PlayerError(Exception):
    """The source directory cannot be played (one line for the command line)."""


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _dagman_out_of(directory: str, names: Sequence[str]) -> str | None:
    outs = sorted(n for n in names if n.endswith(".dag.dagman.out"))
    if not outs:
        return None
    try:
        dag = read_braindump(directory).dag
    except BraindumpError:
        dag = None
    if dag and f"{dag}.dagman.out" in outs:
        return f"{dag}.dagman.out"
    return outs[0]


def scan(src: str) -> Source:
    """Read a finished submit directory into the model :func:`plan` works on."""
    src = os.path.abspath(src)
    listing: dict[str, list[str]] = {}  # relative dir -> file names
    static_dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        rel = "" if rel == "." else rel
        dirnames.sort()
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                filenames.append(d)  # a symlinked directory is copied as a link
                dirnames.remove(d)
        if rel:
            static_dirs.append(rel)
        listing[rel] = sorted(filenames)
    root_out = _dagman_out_of(src, listing.get("", []))
    if root_out is None:
        raise PlayerError(f"{src}: no *.dag.dagman.out here")
    workflows: dict[str, SourceWorkflow] = {}  # relative dir -> workflow
    for rel, names in listing.items():
        name = _dagman_out_of(os.path.join(src, rel), names)
        if name is not None:
            path = os.path.join(rel, name)
            lines = _read(os.path.join(src, path)).splitlines(keepends=True)
            workflows[rel] = SourceWorkflow(path, lines)
    deferred: set[str] = set()
    linked: set[str] = {""}
    for rel, wf in workflows.items():
        _scan_workflow(src, rel, wf, listing, workflows, linked)
    for rel in list(workflows):
        if rel not in linked:
            del workflows[rel]  # no parent starts it: its files are plain static files
    for wf in workflows.values():
        deferred.add(wf.dagman_out)
        for paths in wf.outputs.values():
            deferred.update(path for _, path in paths)
    static = list(static_dirs)
    for rel, names in listing.items():
        for name in names:
            path = os.path.join(rel, name)
            if path not in deferred and not _MONITORD_FILE.match(name):
                static.append(path)
    return Source(workflows[""], static)


def _scan_workflow(
    src: str,
    rel: str,
    wf: SourceWorkflow,
    listing: dict[str, list[str]],
    workflows: dict[str, SourceWorkflow],
    linked: set[str],
) -> None:
    directory = os.path.join(src, rel)
    try:
        bd = read_braindump(directory)
    except BraindumpError:
        return
    if not bd.dag:
        return
    try:
        dag = parse_dag(_read(os.path.join(directory, bd.dag)))
    except OSError:
        return
    by_dir: dict[str, set[str]] = {}
    for node in dag.nodes.values():
        if node.submit_file:
            job_dir = os.path.normpath(os.path.join(rel, os.path.dirname(node.submit_file)))
            by_dir.setdefault("" if job_dir == "." else job_dir, set()).add(node.name)
    for job_dir, nodes in by_dir.items():
        for name in listing.get(job_dir, ()):
            m = _OUTPUT.match(name)
            if m and m.group("stem") in nodes:
                num = int(m.group("num")) if m.group("num") is not None else None
                wf.outputs.setdefault(m.group("stem"), []).append(
                    (num, os.path.join(job_dir, name))
                )
    orig = (bd.submit_dir or directory).rstrip("/") + "/"
    for node in dag.nodes.values():
        if not node.submit_file or not node.name.startswith(("pegasus-plan", "subdax_")):
            continue
        try:
            text = _read(os.path.join(directory, node.submit_file))
        except OSError:
            continue
        sub = parse_submit_file(text, job_name=node.name, orig_submit_dir=bd.submit_dir)
        if not sub.dagman_log:
            continue
        log_path = os.path.normpath(sub.dagman_log)
        if orig in log_path:
            log_path = os.path.join(rel, log_path.replace(orig, "", 1))
        base_dir, fname = os.path.split(os.path.normpath(log_path))
        for sub_rel, sub_wf in workflows.items():
            head, dot, suffix = sub_rel.rpartition(".")
            if dot and head == base_dir and suffix.isdigit() and sub_wf.dagman_out.endswith(fname):
                wf.subworkflows[(node.name, int(suffix))] = sub_wf
                linked.add(sub_rel)


# --------------------------------------------------------------------------- performing the plan

# Writes due within this many seconds are made at once (one flush), later ones are slept for.
TICK = 0.002


@dataclass
class PlayStats:
    lines: int = 0
    files: int = 0
    seconds: float = 0.0


class Player:
    """Performs a plan into ``dest`` at ``lines_per_second`` (dagman.out lines, all files).

    ``seed`` makes the spacing random (exponential gaps around the mean rate, reproducible);
    without it lines are evenly spaced.  ``on_pause`` is called at each pause between two
    DAGMan runs (before sleeping); ``on_flush`` gets the ``(path, line)`` pairs that just
    reached the disk and the time they did.  ``stop`` (a threading.Event) ends the play early.
    """

    def __init__(
        self,
        src: str,
        dest: str,
        *,
        lines_per_second: float = 200.0,
        pause: float = 0.0,
        seed: int | None = None,
        on_pause: Callable[[Pause], None] | None = None,
        on_flush: Callable[[list[tuple[str, str]], float], None] | None = None,
        actions: list[Action] | None = None,
    ) -> None:
        if lines_per_second <= 0:
            raise PlayerError("lines per second must be positive")
        self.src = os.path.abspath(src)
        self.dest = os.path.abspath(dest)
        self.rate = float(lines_per_second)
        self.actions = actions if actions is not None else plan(scan(self.src), pause=pause)
        self.rng = random.Random(seed) if seed is not None else None
        self.on_pause = on_pause
        self.on_flush = on_flush
        self.stop = threading.Event()
        self.stats = PlayStats()
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._next = 0  # actions[:_next] are done

    # -- blocking
    def prepare(self) -> None:
        """What exists before DAGMan starts: the leading copies (``run`` does it if needed)."""
        os.makedirs(self.dest, exist_ok=True)
        while self._next < len(self.actions) and isinstance(self.actions[self._next], Copy):
            self._copy(self.actions[self._next].path)
            self._next += 1

    def run(self) -> PlayStats:
        began = time.monotonic()
        self.prepare()
        handles: dict[str, IO[str]] = {}
        unflushed: list[tuple[str, str]] = []

        def flush() -> None:
            for fh in handles.values():
                fh.flush()
            if unflushed and self.on_flush is not None:
                self.on_flush(list(unflushed), time.time())
            unflushed.clear()

        t0 = time.monotonic()
        due = 0.0
        flushed = t0
        try:
            for action in self.actions[self._next :]:
                if self.stop.is_set():
                    break
                if isinstance(action, Append):
                    now = time.monotonic()
                    wait = t0 + due - now
                    if wait > TICK:
                        flush()
                        flushed = now
                        if self.stop.wait(wait):
                            break
                    elif now - flushed > TICK:  # behind schedule: still hand lines over
                        flush()
                        flushed = now
                    fh = handles.get(action.path)
                    if fh is None:
                        target = os.path.join(self.dest, action.path)
                        # Big buffer: lines reach the file at our flushes only (on_flush's
                        # times are exact), never half-way through a line.
                        fh = handles[action.path] = open(
                            target, "a", encoding="utf-8", buffering=1 << 20
                        )
                    fh.write(action.line)
                    unflushed.append((action.path, action.line))
                    self.stats.lines += 1
                    due += self.rng.expovariate(self.rate) if self.rng else 1.0 / self.rate
                elif isinstance(action, WriteFile):
                    self._copy(action.path)
                    self.stats.files += 1
                elif isinstance(action, Copy):
                    self._copy(action.path)
                elif isinstance(action, Pause):
                    flush()
                    if self.on_pause is not None:
                        self.on_pause(action)
                    if self.stop.wait(action.seconds):
                        break
                    t0, due = time.monotonic(), 0.0
            flush()
        finally:
            for fh in handles.values():
                fh.close()
            self.stats.seconds = time.monotonic() - began
        return self.stats

    def _copy(self, rel: str) -> None:
        source = os.path.join(self.src, rel)
        target = os.path.join(self.dest, rel)
        if os.path.islink(source):
            if not os.path.lexists(target):
                os.symlink(os.readlink(source), target)
        elif os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)

    # -- in a thread
    def start(self) -> Player:
        def target() -> None:
            try:
                self.run()
            except BaseException as exc:  # re-raised by join()
                self.error = exc

        self._thread = threading.Thread(target=target, name="player", daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> PlayStats:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError("the player is still playing")
        if self.error is not None:
            raise self.error
        return self.stats

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


async def play_async(src: str, dest: str, **options: object) -> PlayStats:
    """Play from a coroutine: the blocking writer runs in a worker thread."""
    player = Player(src, dest, **options)  # type: ignore[arg-type]
    return await asyncio.to_thread(player.run)


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str]) -> int:
    """``monitord play SRC DEST``: re-enact a finished submit directory for a live daemon."""
    p = argparse.ArgumentParser(
        prog="monitord play",
        description="Write a finished Pegasus submit directory into DEST as DAGMan would, "
        "line by line, so that a live pegasus-monitord can follow it.",
    )
    p.add_argument("src", help="a finished submit directory (with <wf>.dag.dagman.out)")
    p.add_argument("dest", help="a new (or empty) directory to write into")
    p.add_argument(
        "--lines-per-second",
        type=float,
        default=200.0,
        metavar="N",
        help="pace of dagman.out (default %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=None, help="random (reproducible) gaps instead of even ones"
    )
    p.add_argument(
        "--pause", type=float, default=0.0, help="seconds between two DAGMan runs (rescue DAGs)"
    )
    args = p.parse_args(list(argv))
    if args.lines_per_second <= 0:
        p.error("--lines-per-second must be positive")
    if os.path.isdir(args.dest) and os.listdir(args.dest):
        print(f"monitord play: error: {args.dest} is not empty", file=sys.stderr)
        return 1
    try:
        player = Player(
            args.src,
            args.dest,
            lines_per_second=args.lines_per_second,
            pause=args.pause,
            seed=args.seed,
        )
        stats = player.run()
    except (PlayerError, OSError) as exc:
        print(f"monitord play: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 1
    print(f"played {stats.lines} lines and {stats.files} job files in {stats.seconds:.1f} s")
    return 0
