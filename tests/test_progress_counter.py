"""The command line's progress counter: jobs done, and what it keeps per job (issue 30)."""

from __future__ import annotations

import gc
import tracemalloc

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
