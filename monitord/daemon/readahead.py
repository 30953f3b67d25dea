"""``--read-ahead``: a replay's job files read and parsed by a worker process, ahead of the parser.

Every job file a replay reads is on disk before it starts, and reading and parsing them is
about a third of its CPU.  A worker (a child process, ``sinks/runtime/child.py``: a fresh
interpreter, no fork of the threaded daemon, titled ``monitord read-ahead <dagman.out>``)
scans the root workflow's dagman.out for the lines that make the machine read a job's files
(a submission: its ``.sub``; a job's or its POST script's end: its ``.out``/``.err`` and
PegasusLite error file), reads and parses them in that order on the second core, and sends
the results in batches; at most :data:`WINDOW` messages are in flight (each ``next`` the
parser sends is one more), so memory does not grow with the job count.  It cuts dagman.out
as the parser does (``monitord/daemon/chunks.py``) and classifies every line, so ahead of a
chunk's job files it sends the chunk's records (``monitord/core/linerecords.py``): the parser
runs the machine on them instead of classifying the chunk's lines itself
(:meth:`ReadAhead.records`, ``Workflow.feed_lines``).

The parser's side, :class:`ReadAhead`, is the machine's :class:`~monitord.core.jobreader.JobReader`:
it answers a question with the worker's result for that file when there is one and the file
was complete before the replay began (last changed :data:`SETTLED_NS` before it, or before
the worker began if that was earlier: a prestarted one) or is still
as the worker read it (size, mtime, inode); otherwise (not predicted, out of order, not
readable, changed, the worker gone) it asks :class:`~monitord.core.jobreader.ParsingReader`,
which reads the file itself: the same answer as without the option, always; so for a
chunk's records: none where the worker's chunk is not the parser's, or the worker is gone or
late, and the parser classifies the lines itself.  The worker ends when its pipe closes: the
replay's end, an interrupt, or the daemon's death (SIGKILL).
"""

from __future__ import annotations

import os
import resource
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import structlog

from monitord.core import dagman as D
from monitord.core.jobpaths import join as _join
from monitord.core.jobreader import (
    ErrFile,
    OutFile,
    ParsingReader,
    parse_err,
    parse_out_records,
    with_texts,
)
from monitord.core.linerecords import Record, records_of
from monitord.core.readers import errfile
from monitord.core.readers.subfile import SubmitInfo, parse_submit_file
from monitord.daemon.chunks import whole_lines
from monitord.daemon.jobfiles import read_text_stat
from monitord.daemon.outbox import WINDOW, Outbox

if TYPE_CHECKING:
    from sinks.runtime.child import Child

log = structlog.get_logger(__name__)

SERVE = "monitord.daemon.readahead:serve_read_ahead"
BATCH = 64  # files per message: one pickle's overhead shared
BLOCKS = 8  # chunks' records the parser holds at most (pulled while it looked for a file)
LAG = 0.25  # seconds the parser waits for a chunk's records before it classifies them itself
KEEP = 1024  # results the parser holds at most (pulled ahead of a question not predicted)
SLACK = 512  # a result this many behind the one asked for was not asked for: dropped
#: A job file last changed this long before the replay began is complete: its lines in
#: dagman.out come after it was written, and nothing writes it again (a retry's files are
#: rotated, ``.out.000``); the parser takes the worker's result for it without a stat.
SETTLED_NS = 60 * 10**9

Key = tuple[Any, ...]
Stat = tuple[int, int, int]  # size, mtime_ns, inode
Result = tuple[Key, "Stat | None", Any]  # stat None: the worker could not read it
#: A chunk of dagman.out: its file's inode, its first line's number, its line count, its size.
Place = tuple[int, int, int, int]
#: The kinds of line that can make the machine read a job's files (:meth:`_Predicted.asked`).
ASKING = frozenset((D.DAGMAN_SUBMIT, D.ULOG, D.SCRIPT_STARTED, D.JOB_RESULT, D.SCRIPT_RESULT))


def zone() -> tuple[Any, ...]:
    """The process's time zone as dagman.out's times are read in it (``TZ`` and what
    ``time`` made of it)."""
    return os.environ.get("TZ"), time.tzname, time.timezone, time.altzone, time.daylight


def _same_zone(wanted: tuple[Any, ...] | None) -> bool:
    """Take the daemon's ``TZ`` (a worker started before a test changed it); whether the zone
    is then the daemon's.  None: no records wanted."""
    if wanted is None:
        return False
    if os.environ.get("TZ") != wanted[0]:
        if wanted[0] is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = wanted[0]
        time.tzset()
    return zone() == tuple(wanted)


@dataclass(frozen=True, slots=True)
class Plan:
    """What the worker needs: the root dagman.out (absolute, as the Monitor has it); for the
    records of its lines, the daemon's ``adjust`` and time zone (:func:`zone`; None: none)."""

    dagman_out: str
    store_stdout: bool
    adjust: float = 0.0
    zone: tuple[Any, ...] | None = None


# ---------------------------------------------------------------- the worker


def _asking_records(dagman_out: str) -> Iterator[Record]:
    """The records of the dagman.out lines that can make the machine read a job's files
    (those :meth:`_Predicted.asked` acts on), classified as the worker does (:func:`_chunks`)."""
    for _, records in _chunks(Plan(dagman_out, store_stdout=True)):
        for rec in records:
            if rec[1] in ASKING:
                yield rec


class _Predicted:
    """Which job files the machine reads for a dagman.out record, as the machine names them
    (its output counters, each job's ``.sub`` error file until its end).

    What it keeps does not grow with the job count: the .dag's nodes by the hash of their
    names (:class:`~monitord.core.readers.dagfile.NodesByHash`), and a job's counter only
    until its success (the machine keeps its own to the end; a job run again after it, as in
    a recovery, is then predicted wrong, and read by the daemon)."""

    def __init__(self, dagman_out: str) -> None:
        from monitord.core.readers.braindump import read_braindump
        from monitord.core.readers.dagfile import NodesByHash, read_dag_by_hash

        self.run_dir = run_dir = os.path.dirname(dagman_out)
        bd = read_braindump(run_dir)
        self.orig = bd.submit_dir or run_dir
        self.nodes, self.is_pmc = read_dag_by_hash(os.path.join(run_dir, bd.dag)) or (
            NodesByHash(),
            False,
        )
        self.counters: dict[str, int] = {}
        self.stderr_of: dict[str, str | None] = {}  # a job's .sub error file, until its end

    def asked(self, rec: Record) -> Iterator[tuple[Key, str, Any]]:
        """``(key, path, parse)`` of each file the machine reads for ``rec``, in its order."""
        _, kind, _, job, state, _, status, text = rec
        job = job or ""
        if kind == D.DAGMAN_SUBMIT:
            yield from self.submit(job)
        elif kind == D.ULOG and state == "SUBMIT":
            self.bump(job)
        elif kind == D.SCRIPT_STARTED and state == "PRE":
            yield from self.submit(job)
        elif kind == D.JOB_RESULT:
            node = self.nodes.get(job)
            if node is not None and not (node.has_post_script and not self.is_pmc):
                yield from self.outputs(job)
                if status == 0 and not node.has_post_script:
                    self.counters.pop(job, None)  # its last output counter was used
        elif kind == D.SCRIPT_RESULT and status is not None:
            if state == "POST":
                yield from self.outputs(job)
                if status == 0:
                    self.counters.pop(job, None)
            elif not (text or "").endswith("completed successfully."):
                self.bump(job)  # PRE_SCRIPT_FAILURE takes the next output counter

    def submit(self, name: str) -> Iterator[tuple[Key, str, Any]]:
        node = self.nodes.get(name)
        if node is None or not node.submit_file:
            return
        path = os.path.join(self.run_dir, node.submit_file)
        orig, stderr_of = self.orig, self.stderr_of

        def parse(text: str, name: str = node.name) -> SubmitInfo:
            sub = parse_submit_file(text, job_name=name, orig_submit_dir=orig)
            stderr_of[name] = sub.stderr
            return sub

        yield ("sub", path, node.name, orig), path, parse

    def outputs(self, name: str) -> Iterator[tuple[Key, str, Any]]:
        run_dir = self.run_dir
        node = self.nodes.get(name)
        if node is None:
            return
        submit_dir = run_dir
        if not self.is_pmc and node.submit_file:
            submit_dir = os.path.dirname(os.path.join(run_dir, node.submit_file))
        rotated = node.has_post_script or self.is_pmc
        suffix = f".{self.counters.get(node.name) or 0:03d}" if rotated else ""
        base = _join(submit_dir, node.name)
        if not node.is_subdag:
            out = base + ".out" + suffix  # its records' texts are made by the parser
            yield ("out", out), out, parse_out_records
        yield ("err", base + ".err" + suffix), base + ".err" + suffix, parse_err
        stderr = self.stderr_of.pop(node.name, None)
        if stderr:
            path = _join(run_dir, stderr)
            if path != base + ".err":
                yield ("exit", path + suffix), path + suffix, errfile.pegasus_lite_exitcode

    def bump(self, name: str) -> None:
        counters = self.counters
        counters[name] = counters[name] + 1 if name in counters else 0


def _chunks(plan: Plan) -> Iterator[tuple[Place, list[Record]]]:
    """dagman.out cut as the parser cuts it (``monitord/daemon/chunks.py``): each chunk's
    place (the file's inode, its first line's number, its line count and size) and its
    lines' records."""
    first = 0
    with open(plan.dagman_out, "rb") as fh:
        inode = os.fstat(fh.fileno()).st_ino
        for piece in whole_lines(fh):
            lines = piece.decode("utf-8", errors="replace").split("\n")
            yield (inode, first, len(lines), len(piece)), records_of(lines, plan.adjust)
            first += len(lines)


def _requests(plan: Plan) -> Iterator[tuple[Key, str, Any]]:
    """``(key, path, parse)`` of each job file, in the order the machine asks for them."""
    predicted = _Predicted(plan.dagman_out)
    for rec in _asking_records(plan.dagman_out):
        yield from predicted.asked(rec)


def _result(plan: Plan, key: Key, path: str, parse: Any) -> Result:
    found = read_text_stat(path)  # the stat before the read: a later change shows
    if found is None:
        return key, None, None
    st, text = found
    value = parse(text)
    if not plan.store_stdout:  # the texts the daemon keeps only with stdout: not sent
        if key[0] == "err":
            value.stderr_text = ""
        elif key[0] == "out":
            value.stdout_text = ""
    return key, (st.st_size, st.st_mtime_ns, st.st_ino), value


def _messages(plan: Plan) -> Iterator[Any]:
    """The worker's stream, in dagman.out's order: each chunk's ``("lines", place, records)``
    (unless its time zone is not the daemon's: its times would differ; then ``("lines-off",)``
    first), then the job files its lines ask for, in batches of BATCH results."""
    predicted = _Predicted(plan.dagman_out)
    send_lines = _same_zone(plan.zone)
    batch: list[Result] = []
    if not send_lines:
        yield ("lines-off",)  # the parser stops waiting for records at once
    asked, bump, ulog = predicted.asked, predicted.bump, D.ULOG
    for place, records in _chunks(plan):
        if send_lines:
            yield ("lines", place, records)
        for rec in records:
            kind = rec[1]
            if kind == ulog:  # as asked() does, without a generator: 3 in 8 asking records
                if rec[4] == "SUBMIT":
                    bump(rec[3] or "")
            elif kind in ASKING:
                for key, path, parse in asked(rec):
                    batch.append(_result(plan, key, path, parse))
                    if len(batch) >= BATCH:
                        yield batch
                        batch = []
    if batch:
        yield batch


def serve_read_ahead(conn: Connection, plan: Plan) -> None:
    """The worker: WINDOW messages in flight, one more per ``next``, and up to the outbox's
    BANK bytes made ahead (``monitord/daemon/outbox.py``); at the end ``("end", its CPU
    seconds, its peak RSS)``; then wait for the pipe to close."""
    conn.send(("ok", time.time_ns()))  # before any file is read: what "settled" is measured from
    box = Outbox(conn)  # ahead by up to its BANK while the parser opens the workflow
    try:
        for batch in _messages(plan):
            box.put(batch)
    except (EOFError, OSError):
        raise
    except Exception as exc:  # a bug or an unreadable dagman.out: the parser reads itself
        log.error("read-ahead stopped", error=repr(exc))
    box.flush()
    used = resource.getrusage(resource.RUSAGE_SELF)
    box.put(("end", round(used.ru_utime + used.ru_stime, 3), used.ru_maxrss))
    box.flush()
    while True:
        conn.recv()


# ---------------------------------------------------------------- the parser's side


def worker(plan: Plan, level: int) -> Child:
    """The worker for ``plan``, not started (a child :func:`~sinks.runtime.child.prestart`
    was told the same ``first`` message is the one it takes)."""
    from sinks.runtime.child import Child

    title = f"monitord read-ahead {plan.dagman_out}"
    return Child(SERVE, plan, title=title, level=level, teardown=False)


def _stat(path: str) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class ReadAhead:
    """The replay's :class:`~monitord.core.jobreader.JobReader`: the worker's results, or the
    files read here (:class:`ParsingReader`) whenever one is missing or stale."""

    def __init__(self, plan: Plan, fallback: ParsingReader) -> None:
        self.plan = plan
        self.fallback = fallback
        self._child: Any = None
        self._ready: dict[Key, list[tuple[int, Stat | None, Any]]] = {}
        self._blocks: deque[tuple[Place, list[Record]]] = deque()  # chunks' records, in order
        self._lines = plan.zone is not None  # False: every chunk classified here
        self._seq = 0
        self.counts = {"used": 0, "read_here": 0, "changed": 0, "unused": 0, "worker_lost": 0}
        self.chunks = {"classified": 0, "here": 0, "dropped": 0}  # chunks' records
        self.worker_cpu: float | None = None
        self.worker_rss: int | None = None
        self._settled_before = time.time_ns() - SETTLED_NS

    def start(self, level: int = 20) -> None:
        """Start the worker (its interpreter's start-up: ~0.1 s); without one, read here."""
        from sinks.runtime.child import ChildGone

        child = worker(self.plan, level)
        began = time.monotonic()
        try:
            answer = child.start()
        except ChildGone as exc:
            log.error("read-ahead worker did not start; the parser reads", error=str(exc))
            self.counts["worker_lost"] += 1
            return
        self._child = child
        if len(answer) > 1:  # a prestarted worker read files before this replay's clock began
            self._settled_before = min(self._settled_before, answer[1] - SETTLED_NS)
        log.info(
            "read-ahead worker started", pid=child.pid, seconds=round(time.monotonic() - began, 3)
        )

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def close(self, *, finished: bool = True) -> None:
        """Close the pipe (the worker ends); say what it gave.  A replay ``finished`` asked
        for every result: what is left in the pipe is its end, with the worker's figures."""
        if finished:
            for _ in range(WINDOW + 1):  # a misprediction's batches at most, then the end
                if not self._pull(timeout=5.0):
                    break
        child, self._child = self._child, None
        if child is not None:
            child.close()
        self.counts["unused"] += sum(len(v) for v in self._ready.values())
        self._ready.clear()
        self._blocks.clear()
        log.info(
            "read-ahead",
            **self.counts,
            **{f"chunks_{k}": v for k, v in self.chunks.items()},
            worker_cpu=self.worker_cpu,
            worker_rss=self.worker_rss,
        )

    def _pull(self, timeout: float | None = None) -> bool:
        """One more batch into ``_ready``; False when there is none (the end, or no worker)."""
        from sinks.runtime.child import ChildGone

        child = self._child
        if child is None:
            return False
        try:
            batch = child.call(("next",), timeout)
        except ChildGone as exc:
            log.error("read-ahead worker gone; the parser reads the job files", error=str(exc))
            self.counts["worker_lost"] += 1
            self._child = None
            return False
        if type(batch) is tuple:
            if batch[0] == "lines":
                self._keep_block(batch[1], batch[2])
                return True
            if batch[0] == "lines-off":
                self._lines = False
                return True
            # the end: its CPU seconds and peak RSS (KiB), for the log
            self.worker_cpu, self.worker_rss = batch[1], batch[2]
            child.close()
            self._child = None
            return False
        ready = self._ready
        for key, st, value in batch:
            self._seq += 1
            entry = (self._seq, st, value)
            found = ready.get(key)
            if found is None:
                ready[key] = [entry]
            else:
                found.append(entry)  # a file asked for again (a retried job's .sub)
        return True

    def _keep_block(self, place: Place, records: list[Record]) -> None:
        blocks = self._blocks
        if not self._lines:
            self.chunks["dropped"] += 1
            return
        blocks.append((place, records))
        if len(blocks) > BLOCKS:  # the parser is behind them (waiting on a job file), or on
            # another file: the oldest go, the parser classifies those itself
            blocks.popleft()
            self.chunks["dropped"] += 1

    def records(self, path: str, place: Place) -> list[Record] | None:
        """The worker's records of the chunk of dagman.out at ``place`` (inode, first line,
        line count, size); None: the parser classifies its lines itself (another file, the
        worker gone or LAG late, KEEP results held, a chunk the worker cut otherwise: then
        every later one)."""
        if path != self.plan.dagman_out:
            return None
        if not self._lines:
            self.chunks["here"] += 1
            return None
        blocks, first = self._blocks, place[1]
        while not blocks or blocks[0][0][1] < first:
            if blocks:
                blocks.popleft()  # a chunk the parser classified itself
                self.chunks["dropped"] += 1
            elif (
                self._child is None
                or len(self._ready) >= KEEP  # results not asked for: pulled no further
                or not self._child.ready(LAG)
                or not self._pull()
                or not self._lines  # the worker sends none (another time zone)
            ):
                self.chunks["here"] += 1
                return None
        found, records = blocks[0]
        if found[1] > first and found[0] == place[0]:
            # The worker's next chunks came while the parser waited on a job file and the
            # oldest were dropped (BLOCKS): this chunk is classified here, the later ones kept.
            self.chunks["here"] += 1
            return None
        if found != place:
            log.warning("read-ahead chunks differ; the parser classifies", ours=place, its=found)
            self._lines = False
            self.chunks["here"] += 1
            self.chunks["dropped"] += len(blocks)
            blocks.clear()
            return None
        blocks.popleft()
        self.chunks["classified"] += 1
        return records

    def _take(self, key: Key, path: str) -> tuple[bool, Any]:
        """``(True, result)`` from the worker, or ``(False, None)``: read it here."""
        ready = self._ready
        while key not in ready and len(ready) < KEEP and self._pull():
            pass
        entries = ready.get(key)
        if entries is None:
            self.counts["read_here"] += 1
            return False, None
        seq, st, value = entries.pop(0)
        if not entries:
            del ready[key]
        self._drop_before(seq - SLACK)
        # A file settled before the replay is taken as read; one changed since (being
        # written when the replay began, or after) again only if it is as the worker read it:
        # a stat per file, a system call that gives up the GIL, cost the parser thread ~5 %.
        if st is None or (st[1] >= self._settled_before and st != _stat(path)):
            self.counts["changed" if st is not None else "read_here"] += 1
            return False, None
        self.counts["used"] += 1
        return True, value

    def _drop_before(self, seq: int) -> None:
        """Results far behind the one asked for: predicted, never asked (dropped)."""
        ready = self._ready
        while ready:
            key = next(iter(ready))
            entries = ready[key]
            if entries[0][0] >= seq:
                return
            entries.pop(0)
            self.counts["unused"] += 1
            del ready[key]
            if entries:
                ready[key] = entries  # to the end: its next one is later

    # --- JobReader ---------------------------------------------------------
    def submit_file(
        self, path: str, job_name: str, orig_submit_dir: str | None
    ) -> SubmitInfo | None:
        ok, value = self._take(("sub", path, job_name, orig_submit_dir), path)
        return value if ok else self.fallback.submit_file(path, job_name, orig_submit_dir)

    def out_file(self, path: str) -> OutFile | None:
        ok, value = self._take(("out", path), path)
        return with_texts(value) if ok else self.fallback.out_file(path)

    def err_file(self, path: str) -> ErrFile | None:
        ok, value = self._take(("err", path), path)
        return value if ok else self.fallback.err_file(path)

    def exitcode(self, path: str) -> tuple[bool, str | None]:
        ok, value = self._take(("exit", path), path)
        return (True, value) if ok else self.fallback.exitcode(path)
