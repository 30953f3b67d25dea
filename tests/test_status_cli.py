"""``monitord status``: the table printed from a running status endpoint."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from monitord.cli.status import format_table
from monitord.service.http import start_http
from monitord.service.jobcounts import job_counts, percent_done
from monitord.service.status import JOB_COLUMNS, ServiceSnapshot, WorkflowStatus, from_json
from tests.conftest import PROJECT
from tests.proxies import free_port
from tests.status_fixtures import (
    CorpusStatusSource,
    corpus_dagman_outs,
    fed_workflow,
    need_corpus,
    workflow_state,
)


@pytest.fixture
async def served(corpus_tz):
    need_corpus()
    fed = []
    for i, path in enumerate(corpus_dagman_outs()):
        total = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        fed.append(fed_workflow(path, lines=total // 2 if i % 2 else None))
    source = CorpusStatusSource(fed)
    srv = await start_http(source, "127.0.0.1:0")
    yield source, srv.sockets[0].getsockname()[1]
    srv.close()
    await srv.wait_closed()


async def run_cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "monitord.cli",
        "status",
        *args,
        cwd=PROJECT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def check_table(out: str, source: CorpusStatusSource) -> None:
    lines = out.splitlines()
    assert lines[0].split() == [*JOB_COLUMNS, "%DONE", "STATE", "DAGNAME", "WF_UUID", "RUN_DIR"]
    rows = {}
    for line in lines[1 : 1 + len(source.fed)]:
        words = line.split()
        rows[words[10]] = words
    total = dict.fromkeys(JOB_COLUMNS, 0)
    for f in source.fed:
        counts = job_counts(f.wf)
        words = rows[f.wf.uuid]
        assert [int(w) for w in words[:7]] == [counts[c] for c in JOB_COLUMNS]
        assert words[7] == f"{percent_done(counts):.1f}"
        assert words[8] == workflow_state(f.wf)
        assert words[9] == f.dagman_out.name.removesuffix(".dagman.out")
        assert words[11] == f.wf.run_dir
        for c in JOB_COLUMNS:
            total[c] += counts[c]
    total_line = lines[1 + len(source.fed)].split()
    assert [int(w) for w in total_line[:7]] == [total[c] for c in JOB_COLUMNS]
    assert total_line[8:] == ["TOTAL", f"({len(source.fed)}", "workflows)"]
    assert "notifications: 1 running, 2 queued" in out


async def test_status_by_url(served):
    source, port = served
    code, out, err = await run_cli("--long", "--url", f"http://127.0.0.1:{port}")
    assert code == 0, err
    check_table(out, source)
    # Mid-run and finished workflows are both shown.
    states = {workflow_state(f.wf) for f in source.fed}
    assert "running" in states and states & {"success", "failure"}


async def test_status_by_config(served, tmp_path):
    source, port = served
    conf = tmp_path / "service.toml"
    conf.write_text(f'[http]\nlisten = "127.0.0.1:{port}"\n')
    code, out, err = await run_cli("--config", str(conf), "--long")
    assert code == 0, err
    check_table(out, source)


async def test_status_json(served):
    source, port = served
    code, out, err = await run_cli("--json", "--url", f"http://127.0.0.1:{port}/")
    assert code == 0, err
    assert from_json(out) == source.snapshot()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda tmp: ["--url", f"http://127.0.0.1:{free_port()}"], "cannot reach the monitord"),
        (lambda tmp: ["--url", "ftp://example"], "not an http:// URL"),
        (lambda tmp: ["--config", str(tmp / "missing.toml")], "cannot read"),
        (lambda tmp: ["--config", write(tmp, "[http\n")], "not valid TOML"),
        (lambda tmp: ["--config", write(tmp, "[http]\nlisten = 9175\n")], "http.listen must be"),
        (lambda tmp: ["--config", write(tmp, '[http]\nlisten = "x:y"\n')], "is not a number"),
        (lambda tmp: ["--config", write(tmp, '[http]\nlisten = ""\n')], "disabled"),
    ],
)
async def test_status_errors_are_one_line(tmp_path, setup, message):
    code, out, err = await run_cli(*setup(tmp_path))
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("monitord status: error: ") and message in err


def write(tmp, text: str) -> str:
    path = os.path.join(tmp, "service.toml")
    with open(path, "w") as fh:
        fh.write(text)
    return path


def test_table_keeps_control_characters_off_the_terminal():
    snap = ServiceSnapshot(
        started_at=0.0,
        workflows=[
            WorkflowStatus(
                "u1",
                "/r/evil\x1b[2J.dag.dagman.out",
                "/r",
                "running",
                {"SUCCESS": 1, "UNREADY": 3},
                25.0,
                0,
                0.0,
                0.0,
                0,
            )
        ],
    )
    out = format_table(snap)
    assert "\x1b" not in out
    assert "evil?[2J.dag" in out
    assert out.splitlines()[1].split()[:8] == ["3", "0", "0", "0", "0", "1", "0", "25.0"]
