"""The command line's progress counter: jobs done, and what it keeps per job (issue 30)."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from monitord.cli.progress import ProgressCounter
from monitord.core.events import JobInstMainEnd, JobInstMainStart


def _end(wf: str, job: str, inst: int) -> JobInstMainEnd:
    return JobInstMainEnd(xwf_id=wf, job_id=job, job_inst_id=inst, ts=1, js_id=1, status=0)


def test_jobs_done_counts_each_workflows_jobs_once() -> None:
    counter = ProgressCounter()
    counter.published([_end("wf-a", "j1", 1), _end("wf-a", "j1", 2), _end("wf-a", "j2", 3)])
    counter.published(
        [
            _end("wf-b", "j1", 1),
            JobInstMainStart(xwf_id="wf-b", job_id="j3", job_inst_id=2, ts=1, js_id=1),
        ]
    )
    assert counter.instances_ended == 4
    assert counter.jobs_done() == 3  # wf-a: j1 (retried), j2; wf-b: j1


def test_what_the_counter_keeps_per_job_is_small() -> None:
    """A replay keeps the counter to its end: per job one dict key, its (shared) name,
    not a (workflow, job) tuple in a set (~160 B a job before, issue 30)."""
    n = 20000
    names = [f"preprocess_ID{i:07d}" for i in range(n)]
    events = [_end("wf-a", name, i) for i, name in enumerate(names)]
    counter = ProgressCounter()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, n, 5000):
            counter.published(events[start : start + 5000])
        per_job = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    assert counter.jobs_done() == n
    assert per_job < 60, per_job


def test_a_workflow_restored_unfinished_is_one_this_run_follows() -> None:
    """A restart resumes its workflows from a snapshot (``opened=False``): those still running
    are followed by this run and counted in its summary; those that had ended are not."""
    counter = ProgressCounter()
    running, ended, found = object(), object(), object()
    counter.added(running, opened=False, ended=False)  # type: ignore[arg-type]
    counter.added(ended, opened=False, ended=True)  # type: ignore[arg-type]
    counter.added(found, opened=True, ended=False)  # type: ignore[arg-type]
    assert counter.opened == [running, found]


@pytest.mark.parametrize("quiet", [True, False])
def test_a_quiet_replay_keeps_no_job_names_for_a_count_nobody_reads(
    quiet: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``replay -q`` off a terminal shows neither a bar nor a summary: its counter keeps no
    name per ended job (3.8 MB at 100,000 jobs, kept to the end); without ``-q`` the summary
    counts every job, as before (issue 30)."""
    from monitord import cli
    from monitord.cli import progress
    from monitord.tools.synthetic import generate

    made = generate(tmp_path / "wf", 12, seed=2, name="count")
    counters: list[ProgressCounter] = []

    class Kept(ProgressCounter):
        def __init__(self, **kwargs: bool) -> None:
            super().__init__(**kwargs)
            counters.append(self)

    monkeypatch.setattr(progress, "ProgressCounter", Kept)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.chdir(made.dagman_out.parent)
    argv = ["replay", *(["-q"] if quiet else []), "--no-dashboard", made.dagman_out.name]
    assert cli.main(argv) == 0
    (counter,) = counters
    assert counter.instances_ended >= 12
    if quiet:
        assert counter.jobs_ended is None and capsys.readouterr().err == ""
    else:
        assert counter.jobs_done() == 12 and "12 jobs done" in capsys.readouterr().err
