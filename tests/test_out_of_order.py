"""Job states out of DAGMan's order (``Workflow.out_of_order``, counted by the job machine and
handled anyway) are shown: in the replay's summary line, the service's /status.json and its
/metrics.  The workflow: a generated one whose dagman.out releases a running job never held."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from monitord.service.status import from_json
from monitord.tools.synthetic import generate
from tests.proxies import free_port
from tests.test_service import (
    attach,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

RELEASED = " Event: ULOG_JOB_RELEASED "


def out_of_order_workflow(where: Path) -> Path:
    """A generated workflow (3 jobs) with one job state out of DAGMan's order: a job released
    right after it started running, never held.  Its dagman.out."""
    dagman_out = generate(where, 3, seed=1, name="ooo").dagman_out
    lines = dagman_out.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if " Event: ULOG_EXECUTE " in line)
    lines.insert(at + 1, lines[at].replace(" Event: ULOG_EXECUTE ", RELEASED))
    dagman_out.write_text("".join(lines))
    return dagman_out


def _replay_summary(dagman_out: Path, home: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "--no-dashboard", "-r", dagman_out.name],
        cwd=dagman_out.parent,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (summary,) = [line for line in proc.stderr.splitlines() if line.startswith("monitord: ")]
    return summary


@pytest.mark.quick
def test_the_replay_summary_counts_them_when_there_are_some(tmp_path: Path) -> None:
    summary = _replay_summary(out_of_order_workflow(tmp_path / "ooo"), tmp_path)
    assert "3 jobs done" in summary and ", 1 job state out of DAGMan's order," in summary
    plain = generate(tmp_path / "plain", 3, seed=1, name="plain").dagman_out
    assert "out of DAGMan's order" not in _replay_summary(plain, tmp_path)


def test_the_service_shows_them_in_status_json_and_metrics(tmp_path: Path) -> None:
    """Followed by the service, paused after the released job: 1 in the workflow's status and
    in its counter ``monitord_workflow_job_states_out_of_order_total``."""
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = service_env(tmp_path, cfg)
    dagman_out = out_of_order_workflow(tmp_path / "run")
    lines = dagman_out.read_text().splitlines(keepends=True)
    half = len(lines) // 2
    assert any(RELEASED in line for line in lines[:half])
    dagman_out.write_text("".join(lines[:half]))
    log = tmp_path / "service.log"
    service = start_service(cfg, env, log)

    def get(path: str) -> bytes:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return bytes(resp.read())

    try:
        assert attach(dagman_out, env, "--no-dashboard").returncode == 0
        wait_until(
            lambda: [w.out_of_order for w in from_json(get("/status.json")).workflows] == [1],
            30,
            "the state out of order in /status.json",
            log,
        )
        (wf,) = from_json(get("/status.json")).workflows
        metric = f'monitord_workflow_job_states_out_of_order_total{{wf_uuid="{wf.wf_uuid}"}} 1.0'
        assert metric in get("/metrics").decode().splitlines()
        with dagman_out.open("a") as fh:
            fh.write("".join(lines[half:]))
        wait_until(lambda: finished(dagman_out.parent), 30, "the workflow to end", log)
    finally:
        assert stop_service(service) == 0
