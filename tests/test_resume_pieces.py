"""Snapshots in pieces (monitord/daemon/resume.py ``SnapshotCache``): a workflow's parsed .dag
and its finished job records are pickled once and reused by later snapshots, so a snapshot's
cost follows what changed, not the job count; what is restored equals the whole pickle."""

from __future__ import annotations

import pickle
import time
from pathlib import Path
from typing import Any

import pytest

from monitord.core.workflow import Workflow, WorkflowContext, WorkflowOptions
from monitord.daemon import resume
from monitord.daemon.jobfiles import read_text
from monitord.daemon.resume import ResumePoint, SnapshotCache, TrackedPoint, dumps
from monitord.daemon.resuming import CrashResume
from tests.conftest import CORPUS, require_corpus
from tests.status_fixtures import open_workflow


def _point(wf: Workflow, dagman_out: Path) -> ResumePoint:
    return ResumePoint(
        wf.uuid, str(dagman_out), "s", {wf.uuid: 0},
        [TrackedPoint(wf, wf.run_dir, str(dagman_out), {}, 0.0, 0, 0, None, 0, False)],
        set(), {},
    )  # fmt: skip


def _state(wf: Workflow) -> dict[str, Any]:
    """A workflow's state in comparable form (the .dag's nodes compare by their repr)."""
    state = wf.__getstate__()
    state["dag"] = repr(state["dag"])
    state["latest"] = list(state["latest"].items())  # the order counts too
    return state


def _lines(sample: str) -> tuple[Path, list[str]]:
    require_corpus()
    dagman_out = next((CORPUS / sample / "input").glob("*.dag.dagman.out"))
    return dagman_out, dagman_out.read_text(errors="replace").splitlines()


@pytest.mark.parametrize("sample", ["process_wf_success", "hierarchical_wf_failure"])
def test_a_machine_restored_from_pieces_goes_on_as_if_never_stopped(
    sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One cache through the whole file (pieces of 2 records: the corpus' workflows are small),
    a snapshot at every 20th line: each restores to the state pickled whole, and the restored
    machine fed the rest produces the events and jobstate.log lines of an uninterrupted one."""
    monkeypatch.setattr(resume, "CHUNK", 2)
    dagman_out, lines = _lines(sample)
    whole = open_workflow(dagman_out)
    for line in lines:
        whole.feed(line)
    wf = open_workflow(dagman_out)
    cache = SnapshotCache()
    reused = 0
    for n, line in enumerate(lines, 1):
        wf.feed(line)
        if n % 20:
            continue
        before = dict(cache._frozen[wf.uuid].pieces) if wf.uuid in cache._frozen else {}
        data = dumps(_point(wf, dagman_out), cache)
        after = cache._frozen[wf.uuid].pieces
        reused += sum(1 for k, p in after.items() if before.get(k) is p)
        restored = pickle.loads(data).tracked[0].wf
        assert _state(restored) == _state(wf), f"at line {n}"
        ctx = WorkflowContext(read_text=read_text, events=[], options=WorkflowOptions())
        restored.attach(ctx)
        head_events, head_js = list(wf.events), list(wf.jobstate_lines)
        restored.jobstate_lines = []
        for rest in lines[n:]:
            restored.feed(rest)
        assert head_events + restored.events == whole.events, f"cut at line {n}"
        assert head_js + restored.jobstate_lines == whole.jobstate_lines
    assert reused > 0  # later snapshots did reuse pieces of earlier ones


def test_dropped_records_shift_the_pieces_and_nothing_is_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rescue DAG's restart drops finished records (``_drop_finished_jobs``): the positions
    move, and the next snapshot still restores every remaining record, in order."""
    monkeypatch.setattr(resume, "CHUNK", 2)
    dagman_out, lines = _lines("process_wf_success")
    wf = open_workflow(dagman_out)
    for line in lines:
        wf.feed(line)
    cache = SnapshotCache()
    dumps(_point(wf, dagman_out), cache)
    first = next(iter(wf.latest))
    del wf.latest[first]  # as _drop_finished_jobs does, at the front: every piece shifts
    restored = pickle.loads(dumps(_point(wf, dagman_out), cache)).tracked[0].wf
    assert first not in restored.latest
    assert _state(restored) == _state(wf)


def test_a_second_snapshot_pickles_no_finished_record_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dagman_out, lines = _lines("hierarchical_wf_success")
    monkeypatch.setattr(resume, "CHUNK", 2)
    wf = open_workflow(dagman_out)
    for line in lines:
        wf.feed(line)
    finished = sum(type(v) is bytes for v in wf.latest.values())
    assert finished >= 4
    pickled = 0  # the records pickled: in a piece pickled, or inline with the rest
    packed, reduce = resume._packed, SnapshotCache.reduce

    def records(part: Any) -> int:
        return sum(type(v) is bytes for _, v in part) if type(part) is list else 0

    def counting_pieces(obj: Any) -> bytes:
        nonlocal pickled
        pickled += records(obj)
        return packed(obj)

    def counting_inline(self: SnapshotCache, wf: Any) -> tuple[Any, ...]:
        nonlocal pickled
        reduced = reduce(self, wf)
        pickled += sum(records(part) for parts in reduced[2][2].values() for part in parts)
        return reduced

    monkeypatch.setattr(resume, "_packed", counting_pieces)
    monkeypatch.setattr(SnapshotCache, "reduce", counting_inline)
    cache = SnapshotCache()
    dumps(_point(wf, dagman_out), cache)
    assert pickled >= finished - 1  # the first snapshot pickles them (an odd one stays inline)
    pickled = 0
    dumps(_point(wf, dagman_out), cache)
    assert pickled <= 1  # the second reuses their bytes (at most the odd last one again)


def test_the_interval_follows_a_snapshots_cpu_not_its_wait(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A snapshot that waited (the GIL, a loaded machine) but used little CPU does not push the
    next one back: the interval is COST_FACTOR times its CPU, at least MIN_INTERVAL."""
    dagman_out, lines = _lines("process_wf_success")
    wf = open_workflow(dagman_out)
    for line in lines[:100]:
        wf.feed(line)

    class Registry:
        root_uuid = wf.uuid
        tracked = [type("T", (), {"wf": wf, "jobstate": None, "run_dir": wf.run_dir,
                                  "dagman_out": str(dagman_out), "files": {}, "started_at": 0.0,
                                  "exit_code": 0, "offset": 0})()]  # fmt: skip
        seen_dagman_outs: set[str] = set()
        seen_dirs: dict[str, Any] = {}

    real = resume.dumps

    def waiting(point: ResumePoint, cache: SnapshotCache | None = None) -> bytes:
        time.sleep(0.3)  # 0.3 s of wall time, no CPU: 20 x 0.3 = 6 s if wall time counted
        return real(point, cache)

    monkeypatch.setattr("monitord.daemon.resuming.dumps", waiting)
    crash = CrashResume(resume.ResumeStore(str(tmp_path)), stream="s")
    assert crash.take(Registry(), now=True) is not None  # type: ignore[arg-type]
    assert crash._clock._next - time.monotonic() <= resume.MIN_INTERVAL + 1.0


def test_snapshots_wait_for_the_daemons_own_cpu_not_only_the_wall() -> None:
    """On a loaded machine a follow is stretched (the same lines over three times the wall):
    a snapshot every MIN_INTERVAL of wall time then cost three times the CPU for the same
    work.  The next one also waits until the daemon itself used COST_FACTOR times the last
    one's CPU."""
    wall, cpu = [100.0], [10.0]
    clock = resume.SnapshotClock(clock=lambda: wall[0], cpu=lambda: cpu[0])
    assert clock.due()
    clock.taken(0.05)  # a snapshot of 50 ms: the daemon's next 1 s of CPU is snapshot-free
    wall[0] += 10 * resume.MIN_INTERVAL  # long past the wall interval ...
    cpu[0] += 0.5  # ... but the starved daemon used only 0.5 s
    assert not clock.due()
    cpu[0] += resume.COST_FACTOR * 0.05  # now it has
    assert clock.due()
    clock.taken(0.05)
    cpu[0] += 100.0  # a busy daemon: the wall interval still holds
    assert not clock.due()
    wall[0] += resume.MIN_INTERVAL
    assert clock.due()
