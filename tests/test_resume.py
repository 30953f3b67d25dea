"""Crash resume, piece by piece: delivery marks, the marked spool format, a delivery that skips
what its sink holds, SQL marks in the batch's transaction, and a machine restored from a
snapshot that goes on exactly as if it had never stopped.  The whole (kill -9 of the service,
restart) is in tests/test_service_restart.py and tests/test_service_outage.py."""

from __future__ import annotations

import pickle
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from monitord.core.events import StampedeEvent, make_event
from monitord.core.workflow import WorkflowContext, WorkflowOptions
from monitord.daemon.jobfiles import read_text
from monitord.daemon.resume import VERSION, ResumePoint, ResumeStore, Snapshot, TrackedPoint, dumps
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities
from sinks.runtime.codec import decode_batch, decode_marked, encode_batch
from sinks.runtime.delivery import Delivery
from sinks.runtime.items import EXIT, Batch, Wait
from sinks.runtime.marks import MarkedBatch, Marks, advance, count_batch, unseen
from sinks.sql.sink import SQLSink
from tests.conftest import CORPUS, require_corpus
from tests.event_check import wire
from tests.status_fixtures import open_workflow


def _ev(wf: str, n: int) -> StampedeEvent:
    return make_event("xwf.meta", {"xwf.id": wf, "ts": n, "key": "k", "value": str(n)})


def _numbered(events: Sequence[StampedeEvent]) -> list[tuple[str, int]]:
    return [(e.xwf_id, wire(e)["ts"]) for e in events]


# --- marks ------------------------------------------------------------------------------


def test_batches_are_numbered_per_workflow_and_held_events_are_skipped() -> None:
    totals: dict[str, int] = {}
    first = [_ev("a", 1), _ev("b", 1), _ev("a", 2)]
    second = [_ev("b", 2), _ev("a", 3), _ev("b", 3), _ev("a", 4)]
    assert count_batch(first, totals) == {"a": 2, "b": 1}
    marks = Marks("s", count_batch(second, totals))
    assert marks.counts == {"a": 4, "b": 3} and totals == {"a": 4, "b": 3}
    # the sink holds a's first 3 events and b's first 1: a3 is skipped, b2 b3 a4 are not
    assert _numbered(unseen(second, marks, {"a": 3, "b": 1})) == [("b", 2), ("b", 3), ("a", 4)]
    assert unseen(second, marks, {"a": 4, "b": 3}) == []
    assert unseen(second, marks, {}) == second
    held = {"a": 3}
    advance(held, marks)
    assert held == {"a": 4, "b": 3}


def test_marks_travel_with_the_batch_bytes() -> None:
    events = [_ev("a", 1), _ev("a", 2)]
    marks = Marks("stream-1", {"a": 2})
    got, got_marks = decode_marked(encode_batch(events, marks))
    assert got == events and got_marks == marks
    assert decode_batch(encode_batch(events, marks)) == events
    plain, none = decode_marked(encode_batch(events))
    assert plain == events and none is None
    batch = Batch(2, data=encode_batch(events, marks))
    assert batch.decoded() == events and batch.marks == marks


# --- a delivery skips what its sink holds --------------------------------------------


class _MarkingSink:
    name = "marking"
    capabilities = Capabilities(keeps_marks=True, resumes=True)

    def __init__(self, held: dict[str, int]) -> None:
        self.held = held
        self.written: list[tuple[str, int]] = []
        self.marks: list[Marks] = []

    def open(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        raise AssertionError("a marking sink gets marked batches through write_marked")

    def read_marks(self, stream: str) -> dict[str, int]:
        return dict(self.held) if stream == "s" else {}

    def write_marked(self, events: Sequence[StampedeEvent], marks: Marks) -> None:
        self.written += _numbered(events)
        self.marks.append(marks)


def _deliver(sink: object, batches: list[MarkedBatch]) -> None:
    delivery = Delivery(sink)  # type: ignore[arg-type]
    for batch in batches:
        delivery.put(batch)
    delivery.request_stop()
    while not delivery.finished.is_set():
        with delivery._cond:
            step = delivery.decide()
        if isinstance(step, Wait):
            continue
        if step is EXIT:
            delivery.finish()
        else:
            delivery.run(step)  # type: ignore[arg-type]


def test_a_resumed_stream_writes_only_what_the_sink_does_not_hold() -> None:
    totals: dict[str, int] = {}
    evs = [_ev("a", n) for n in range(1, 6)] + [_ev("b", 1)]
    batches = [
        MarkedBatch(evs[:3], Marks("s", count_batch(evs[:3], totals))),
        MarkedBatch(evs[3:], Marks("s", count_batch(evs[3:], totals))),
    ]
    sink = _MarkingSink({"a": 4})  # the crashed daemon had delivered a1..a4
    _deliver(sink, batches)
    assert sink.written == [("a", 5), ("b", 1)]
    assert sink.marks[-1].counts == {"a": 5, "b": 1}
    fresh = _MarkingSink({})  # another stream: nothing held
    _deliver(fresh, [MarkedBatch(evs, Marks("other", {"a": 5, "b": 1}))])
    assert len(fresh.written) == 6


class _AnswerLostSink(_MarkingSink):
    """Commits a batch (marks included), then reports the connection lost once: the server
    went away before the commit's answer came back."""

    def __init__(self) -> None:
        super().__init__({})
        self.lost_once = True

    def write_marked(self, events: Sequence[StampedeEvent], marks: Marks) -> None:
        super().write_marked(events, marks)
        advance(self.held, marks)
        if self.lost_once:
            self.lost_once = False
            raise SinkError("server closed the connection unexpectedly", retryable=True)


def test_a_batch_committed_before_its_error_is_not_written_again() -> None:
    """The retry asks the sink what it holds again (its marks are in the same transaction as
    the rows), instead of redoing every row and having the database reject them (issue 23)."""
    totals: dict[str, int] = {}
    evs = [_ev("a", n) for n in range(1, 5)]
    batches = [
        MarkedBatch(evs[:2], Marks("s", count_batch(evs[:2], totals))),
        MarkedBatch(evs[2:], Marks("s", count_batch(evs[2:], totals))),
    ]
    sink = _AnswerLostSink()
    _deliver(sink, batches)
    assert sink.written == [("a", 1), ("a", 2), ("a", 3), ("a", 4)]


# --- SQL: marks in the batch's transaction ---------------------------------------------


def test_sql_marks_are_written_with_the_rows_and_dropped_at_the_end(tmp_path: Path) -> None:
    db = tmp_path / "wf.db"
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    plan = make_event(
        "wf.plan",
        {"xwf.id": "u1", "root.xwf.id": "u1", "ts": 1, "dax.label": "x", "submit.dir": "/s"},
    )
    meta = make_event("xwf.meta", {"xwf.id": "u1", "ts": 1, "key": "k", "value": "v"})
    assert sink.read_marks("s1") == {}
    sink.write_marked([plan, meta], Marks("s1", {"u1": 2}))
    assert sink.read_marks("s1") == {"u1": 2} and sink.read_marks("s2") == {}
    sink.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from workflow_meta").fetchone() == (1,)
    sink.forget_marks("u1")
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
    assert "monitord_delivery_marks" not in tables and "workflow" in tables


def test_a_plain_batch_creates_no_marks_table(tmp_path: Path) -> None:
    db = tmp_path / "wf.db"
    sink = SQLSink(f"sqlite:///{db}")
    sink.open()
    sink.write_batch([make_event("xwf.meta", {"xwf.id": "u", "ts": 1, "key": "k", "value": "v"})])
    sink.close()
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("select name from sqlite_master")}
    assert "monitord_delivery_marks" not in tables


# --- the machine, restored from a snapshot ---------------------------------------------


@pytest.mark.parametrize("sample", ["process_wf_success", "hierarchical_wf_failure"])
def test_a_restored_machine_goes_on_as_if_never_stopped(sample: str) -> None:
    require_corpus()
    dagman_out = next((CORPUS / sample / "input").glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(errors="replace").splitlines()
    whole = open_workflow(dagman_out)
    for line in lines:
        whole.feed(line)
    for cut in (len(lines) // 3, len(lines) // 2, 2 * len(lines) // 3):
        first = open_workflow(dagman_out)
        for line in lines[:cut]:
            first.feed(line)
        head = list(first.jobstate_lines)
        first.jobstate_lines.clear()  # the daemon writes them to jobstate.log after each chunk
        restored = pickle.loads(pickle.dumps(first))
        assert "ctx" not in restored.__dict__  # the daemon's context is not in a snapshot
        ctx = WorkflowContext(read_text=read_text, events=[], options=WorkflowOptions())
        restored.attach(ctx)
        for line in lines[cut:]:
            restored.feed(line)
        assert first.events + restored.events == whole.events, f"cut at line {cut}"
        assert head + restored.jobstate_lines == whole.jobstate_lines


def test_snapshots_are_checked_before_use(tmp_path: Path) -> None:
    require_corpus()
    src = CORPUS / "process_wf_success" / "input"
    dagman_out = next(src.glob("*.dag.dagman.out"))
    wf = open_workflow(dagman_out)
    store = ResumeStore(str(tmp_path / "resume"))
    js = tmp_path / "jobstate.log"
    js.write_text("x" * 10)
    point = ResumePoint(
        wf.uuid, str(dagman_out), "s", {wf.uuid: 3},
        [TrackedPoint(wf, str(src), str(dagman_out), {}, 0.0, 0, 100, str(js), 10, False)],
        set(), {},
    )  # fmt: skip
    store.write(Snapshot(str(dagman_out), dumps(point)))
    loaded = store.load(str(dagman_out), wf.uuid)
    assert loaded is not None and loaded.counts == {wf.uuid: 3} and loaded.problem() is None
    assert store.load(str(dagman_out), "another-uuid") is None
    assert store.load(str(tmp_path / "elsewhere.dag.dagman.out"), wf.uuid) is None
    loaded.version = 5  # an older layout of the records (core/jobinstance.py _encode)
    assert loaded.problem() == f"snapshot version 5, not {VERSION}"
    loaded.version = 6  # the tagged layout, which a record of 7 still reads: accepted
    assert loaded.problem() is None
    loaded.version = VERSION
    js.write_text("x" * 5)  # the jobstate.log lost lines the snapshot counts on
    assert "shorter" in (loaded.problem() or "")
    Path(store.path(str(dagman_out))).write_bytes(b"not a pickle")
    assert store.load(str(dagman_out), wf.uuid) is None  # damaged: recovery, no traceback
    store.remove(str(dagman_out))
    assert not Path(store.path(str(dagman_out))).exists()


def test_snapshot_write_is_atomic(tmp_path: Path) -> None:
    store = ResumeStore(str(tmp_path / "r"))
    store.write(Snapshot("/x/a.dag.dagman.out", b"one"))
    errors = []

    def writer(n: int) -> None:
        try:
            for _ in range(50):
                store.write(Snapshot("/x/a.dag.dagman.out", bytes([n]) * 1000))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = Path(store.path("/x/a.dag.dagman.out")).read_bytes()
    assert not errors and len(data) == 1000 and len(set(data)) == 1
    assert len(list((tmp_path / "r").iterdir())) == 1  # no temporary file left


# --- which start resumes --------------------------------------------------------------


def _crashed_copy(tmp: Path) -> tuple[Path, ResumeStore]:
    """A copy of a corpus submit dir a crashed service left: monitord.recover and a snapshot."""
    from tests.conftest import copy_submit_dir

    dagman_out = copy_submit_dir(CORPUS / "process_wf_success" / "input", tmp / "run")
    run = dagman_out.parent
    (run / "monitord.recover").write_text("line_processed 10\n")
    (run / "jobstate.log").write_text("")
    wf = open_workflow(dagman_out)
    store = ResumeStore(str(tmp / "state" / "resume"))
    point = ResumePoint(
        wf.uuid, str(dagman_out), "s", {},
        [TrackedPoint(wf, str(run), str(dagman_out), {"recover": str(run / "monitord.recover")},
                      0.0, 0, 0, str(run / "jobstate.log"), 0, False)],
        {str(dagman_out)}, {},
    )  # fmt: skip
    store.write(Snapshot(str(dagman_out), dumps(point)))
    return dagman_out, store


@pytest.mark.parametrize(
    ("dest", "resumes"),
    [(None, True), ("file://{run}/events.bp", False)],
    ids=["database", "events-file"],
)
def test_a_crash_resumes_only_when_every_output_can(
    tmp_path: Path, dest: str | None, resumes: bool
) -> None:
    require_corpus()
    from monitord.daemon.monitor import Monitor, MonitorConfig
    from monitord.daemon.outputs import LocalOutputs
    from monitord.daemon.resuming import CrashResume

    dagman_out, store = _crashed_copy(tmp_path)
    url = dest.format(run=dagman_out.parent) if dest else None
    cfg = MonitorConfig(
        str(dagman_out), replay=False, dests=[url], dashboard=False, notifications=False
    )
    monitor = Monitor(cfg, LocalOutputs(), resume=CrashResume(store))
    try:
        monitor.start()
        assert (monitor.resumed is not None) is resumes
        assert monitor.restart is not resumes  # else: recovery from line 1, outputs start over
        assert monitor.resume.stream is not None
        assert (monitor.resume.stream == "s") is resumes  # the snapshot's stream, or a new one
    finally:
        monitor.sinks.close()
        if monitor.pid_path:
            Path(monitor.pid_path).unlink(missing_ok=True)
