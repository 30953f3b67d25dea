"""Real workflows for the status tests: corpus dagman.out files fed to ``Workflow`` objects.

``CorpusStatusSource`` is a StatusSource as the service builds one, but over workflows fed by
the test (all of a corpus file, or only its first lines, to have workflows mid-run).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from monitord.core.readers.braindump import read_braindump
from monitord.core.readers.dagfile import parse_dag
from monitord.core.workflow import Workflow, WorkflowContext, WorkflowOptions
from monitord.daemon.monitor import read_text
from monitord.service.jobcounts import DagmanProgress, job_counts, percent_done, progress_for
from monitord.service.status import ServiceSnapshot, WorkflowStatus
from sinks.runtime.health import SinkHealth
from tests.conftest import CORPUS, corpus_samples


def corpus_dagman_outs() -> list[Path]:
    return [next((CORPUS / s / "input").glob("*.dag.dagman.out")) for s in corpus_samples()]


def need_corpus() -> None:
    if not corpus_dagman_outs():
        pytest.skip(f"conformance corpus not available: {CORPUS} is absent")


def open_workflow(dagman_out: Path) -> Workflow:
    run_dir = str(dagman_out.parent)
    bd = read_braindump(run_dir)
    ctx = WorkflowContext(read_text=read_text, events=[], options=WorkflowOptions())
    dag = parse_dag(read_text(os.path.join(run_dir, bd.dag)) or "")
    return Workflow(ctx, run_dir=run_dir, braindump=bd, dag=dag, root_uuid=bd.wf_uuid)


@dataclass
class FedWorkflow:
    wf: Workflow
    progress: DagmanProgress
    dagman_out: Path
    size: int
    fed_bytes: int = 0
    lines: list[str] = field(default_factory=list)

    def feed(self, line: str) -> None:
        self.wf.feed(line.rstrip("\n"))
        self.progress.feed(line)
        self.fed_bytes += len(line.encode())


def fed_workflow(dagman_out: Path, *, lines: int | None = None) -> FedWorkflow:
    """``dagman_out``'s first ``lines`` lines (all when None) fed to a new Workflow."""
    wf = open_workflow(dagman_out)
    with open(dagman_out, encoding="utf-8", errors="replace", newline="") as fh:
        text = fh.read()
    fed = FedWorkflow(wf, progress_for(wf), dagman_out, len(text.encode()))
    all_lines = text.splitlines(keepends=True)
    for line in all_lines[: len(all_lines) if lines is None else lines]:
        fed.feed(line)
    return fed


def workflow_state(wf: Workflow) -> str:
    if wf.state == "end":
        return "success" if wf.dagman_exit == 0 else "failure"
    return "running" if wf.state == "start" else "waiting"


class CorpusStatusSource:
    """Snapshots of fed workflows; ``calls`` counts snapshots, ``after_first`` feeds more lines."""

    def __init__(self, fed: list[FedWorkflow], sinks: list[SinkHealth] | None = None) -> None:
        self.fed = fed
        self.sinks = sinks or []
        self.started_at = time.time() - 12.5
        self.calls = 0

    def snapshot(self) -> ServiceSnapshot:
        self.calls += 1
        workflows = []
        for f in self.fed:
            counts = job_counts(f.wf)
            workflows.append(
                WorkflowStatus(
                    wf_uuid=f.wf.uuid,
                    dagman_out=str(f.dagman_out),
                    run_dir=f.wf.run_dir,
                    state=workflow_state(f.wf),
                    jobs=counts,
                    percent_done=percent_done(counts),
                    lag_bytes=f.size - f.fed_bytes,
                    lag_seconds=0.0 if f.size == f.fed_bytes else 3.5,
                    events_per_second=float(len(f.wf.events)) / 10.0,
                    events_total=len(f.wf.events),
                )
            )
        return ServiceSnapshot(
            started_at=self.started_at,
            workflows=workflows,
            sinks=list(self.sinks),
            notifications_running=1,
            notifications_queued=2,
        )


class RootRows(HTMLParser):
    """The cells of each row of the status page's watched-roots table."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody" and dict(attrs).get("id") == "root-rows":
            self._in = True
        elif self._in and tag == "tr":
            self.rows.append([])
        elif self._in and tag == "td":
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._in and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data
