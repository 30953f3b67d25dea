"""Golden traces: each corpus sample, the project's cases with held, clustered, rescue and
nested runs, and a generated workflow with retries, replayed (TZ of the recording), turned
into spans by the trace model and compared exactly with tests/data/traces/<name>.json.

A reviewed change of the model rewrites them: ``MONITORD_WRITE_GOLDEN=1 pytest
tests/test_otlp_golden.py`` (then ``git diff tests/data/traces`` is the change, span by span).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, corpus_samples, replay_copy, require_corpus
from tests.otlp_fixtures import GOLDEN, events_of, golden, trace_of, write_golden

CASES = Path(__file__).resolve().parent / "data" / "cases"
#: the cases whose traces show what the corpus does not: held/evicted/aborted jobs, submit and
#: PRE failures, clustered tasks, a rescue-DAG restart (a second trace, linked), sub-workflows
TRACE_CASES = [
    "held_released_aborted",
    "submit_failures",
    "rescue_dag_restart",
    "clustered_jobs",
    "pre_scripts_and_recovery",
    "nested_subworkflows",
    "subworkflow_resubmitted",
]
HERE = "<monitord host>"


def replay_trace(src: Path, tmp_path: Path, *, batch: int | None = None) -> list[dict[str, Any]]:
    """Replay ``src`` into a JSON events file and return the canonical trace of its events."""
    events = tmp_path / "events.json"
    replay_copy(src, tmp_path, "-e", "json", "-d", f"file://{events}")
    return normalised(trace_of(events_of(events), batch=batch), tmp_path / "run")


def normalised(trace: list[dict[str, Any]], run_dir: Path) -> list[dict[str, Any]]:
    """Values of this machine made neutral: the submit dir a generated workflow was written
    in, and the host name monitord gives a sub-workflow job (doc §5.3 ``host.info``)."""
    text = json.dumps(trace).replace(str(run_dir), "<run dir>")
    fqdn = socket.getfqdn()
    out = json.loads(text)
    for span in out:
        if span["attributes"].get("pegasus.job.host") == fqdn:
            span["attributes"]["pegasus.job.host"] = HERE
    return out


def _check(name: str, trace: list[dict[str, Any]]) -> None:
    write_golden(name, trace)
    assert (GOLDEN / f"{name}.json").exists(), f"no golden trace {name}: see the docstring"
    expected = golden(name)
    assert len(trace) == len(expected)
    for got, want in zip(trace, expected, strict=True):
        assert got == want, f"{name}: span {want['name']} {want['span_id']} differs"


@pytest.mark.parametrize("sample", corpus_samples() or ["<corpus absent>"])
def test_corpus_sample_trace_is_golden(sample: str, tmp_path: Path) -> None:
    require_corpus()
    _check(sample, replay_trace(CORPUS / sample / "input", tmp_path))


@pytest.mark.parametrize("case", TRACE_CASES)
def test_case_trace_is_golden(case: str, tmp_path: Path) -> None:
    _check(f"case_{case}", replay_trace(CASES / case / "input", tmp_path))


def test_generated_workflow_with_retries_trace_is_golden(tmp_path: Path) -> None:
    from monitord.tools.synthetic import generate

    src = tmp_path / "src"
    generate(src, 40, retry_fraction=0.25, seed=28, name="traced")
    trace = replay_trace(src, tmp_path)
    text = json.dumps(trace).replace(str(src), "<run dir>")  # braindump's paths
    trace = json.loads(text.replace(str(tmp_path), "<tmp>"))  # its dax file, beside src
    _check("generated_retries", trace)
    retried = [s for s in trace if s["attributes"].get("pegasus.job.retry", 0) > 0]
    assert retried, "the generated workflow has no retried job"


def test_batches_do_not_change_the_trace(tmp_path: Path) -> None:
    """The sink sees batches: one event at a time gives the trace all at once gives."""
    events = tmp_path / "events.json"
    replay_copy(
        CASES / "held_released_aborted" / "input", tmp_path, "-e", "json", "-d", f"file://{events}"
    )
    evs = events_of(events)
    assert trace_of(evs, batch=1) == trace_of(evs)
