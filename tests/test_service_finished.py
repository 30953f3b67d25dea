"""What a running service tells its operator about workflows that ended, or that it only stopped.

One service follows a failed and a successful corpus workflow to their ends, and a third one
half-written.  Then:

* the log's "workflow ended" line carries the outcome the workflow's own database records (its
  WORKFLOW_TERMINATED status), not only the daemon's exit code (0 for a failed workflow too);
* both stay listed, with outcome, end time and events, in /status.json, /status and
  ``monitord status``, and still after a service restart;
* attaching a finished workflow again is answered at once with its outcome: no second
  following, no error in the log, the database unchanged (equal to the reference's);
* the half-written one, at the service's stop, is logged as "stopped", never as ended.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from monitord.service.status import from_json
from tests.conftest import CORPUS, require_corpus
from tests.proxies import free_port
from tests.test_service import (
    PY,
    attach,
    corpus_source,
    db_of,
    diff,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)


def _log_records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def _db_outcome(run: Path) -> str:
    """What the workflow's stampede database says: its root's last WORKFLOW_TERMINATED status."""
    with sqlite3.connect(db_of(run)) as con:
        (status,) = con.execute(
            "SELECT ws.status FROM workflowstate ws JOIN workflow w ON w.wf_id = ws.wf_id "
            "WHERE w.wf_id = w.root_wf_id AND ws.state = 'WORKFLOW_TERMINATED' "
            "ORDER BY ws.timestamp DESC, ws.restart_count DESC LIMIT 1"
        ).fetchone()
    return "success" if status == 0 else "failure"


def _answers(port: int) -> bool:
    try:
        _get(port, "/healthz")
    except urllib.error.HTTPError:
        return True  # 503: answers all the same
    except OSError:
        return False
    return True


def _get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return bytes(resp.read())


def test_finished_workflows_outcomes_and_reattach(tmp_path: Path) -> None:
    require_corpus()
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = service_env(tmp_path, cfg)
    samples = {"process_wf_failure": tmp_path / "failed", "process_wf_success": tmp_path / "ok"}
    outs = {name: next(corpus_source(name, run).glob("*.dag.dagman.out")) for name, run in samples.items()}  # fmt: skip
    half = corpus_source("process_wf_success", tmp_path / "half")
    half_out = next(half.glob("*.dag.dagman.out"))
    lines = half_out.read_text().splitlines(keepends=True)
    half_out.write_text("".join(lines[: len(lines) // 2]))
    log = tmp_path / "service.log"
    t0 = time.time()
    service = start_service(cfg, env, log)
    try:
        for out in outs.values():
            got = attach(out, env, "--no-dashboard", "--wait")
            assert got.returncode == 0, got.stderr
        t1 = time.time()
        assert attach(half_out, env, "--no-dashboard").returncode == 0
        # -- the log's end lines carry the outcome the database records
        ended = {r["dagman_out"]: r for r in _log_records(log) if r["event"] == "workflow ended"}
        for name, run in samples.items():
            record = ended[str(outs[name])]
            assert record["outcome"] == _db_outcome(run), record
            assert record["exit_code"] == 0 and record["events"] > 0
        assert ended[str(outs["process_wf_failure"])]["dagman_exit"] != 0
        # -- /status.json lists both, most recent first
        snap = from_json(_get(port, "/status.json"))
        listed = {f.dagman_out: f for f in snap.finished}
        assert list(listed) == [str(outs["process_wf_success"]), str(outs["process_wf_failure"])]
        for name, run in samples.items():
            f = listed[str(outs[name])]
            assert f.outcome == _db_outcome(run) and f.run_dir == str(run)
            assert t0 <= f.ended_at <= t1
            assert f.events_total == ended[str(outs[name])]["events"]
        page = _get(port, "/status").decode()
        for name in samples:
            f = listed[str(outs[name])]
            assert f'<td class="{f.outcome}">{f.outcome}</td>' in page
            assert time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(f.ended_at)) in page
        shown = subprocess.run(
            [PY, "-m", "monitord.cli", "status", "--url", f"http://127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        section = shown.stdout.split("finished (2 workflows):\n", 1)[1].splitlines()
        assert section[0].split() == ["ENDED", "OUTCOME", "EVENTS", "DAGNAME"]
        assert section[1].split()[3:] == ["success", str(listed[str(outs["process_wf_success"])].events_total), "process-0.dag"]  # fmt: skip
        assert section[2].split()[3:5] == ["failure", str(listed[str(outs["process_wf_failure"])].events_total)]  # fmt: skip
        # -- attaching a finished workflow again: its outcome at once, nothing followed again
        before = len(_log_records(log))
        again = attach(outs["process_wf_failure"], env, "--no-dashboard", "--wait")
        assert again.returncode == 0, again.stderr
        shown = attach(outs["process_wf_failure"], env, "--no-dashboard")
        assert "has ended already (failure)" in shown.stdout, shown
        later = _log_records(log)[before:]
        assert [r for r in later if r["level"] in ("warning", "error")] == []
        assert not [r for r in later if r["event"] == "following workflow"]
        wait_until(
            lambda: any(
                w.lag_bytes == 0 and w.events_total
                for w in from_json(_get(port, "/status.json")).workflows
            ),  # fmt: skip
            30,
            "the half-written workflow to be caught up",
            log,
        )
    finally:
        assert stop_service(service) == 0
    # -- the service's stop: the half-written workflow is "stopped", not ended
    records = _log_records(log)
    assert not [r for r in records if r["event"] == "workflow ended" and r["dagman_out"] == str(half_out)]  # fmt: skip
    (stopped,) = [r for r in records if r["event"] == "workflow stopped"]
    assert stopped["dagman_out"] == str(half_out)
    assert not finished(half)
    for name, run in samples.items():
        got = diff(str(CORPUS / name / "expected" / "stampede.db"), str(db_of(run)))
        assert got.returncode == 0, f"{name}: database differs\n{got.stdout[-3000:]}"
    # -- a restart keeps the finished list
    service = start_service(cfg, env, log)
    try:
        wait_until(lambda: _answers(port), 30, "the status endpoint after the restart", log)
        snap = from_json(_get(port, "/status.json"))
        assert [f.dagman_out for f in snap.finished] == list(listed)
        assert [f.outcome for f in snap.finished] == [f.outcome for f in listed.values()]
    finally:
        assert stop_service(service) == 0
