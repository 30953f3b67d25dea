"""End to end: ``monitord replay -d otlp+http://127.0.0.1:PORT`` against a real OTLP/HTTP
receiver process (tests/otlp_receiver.py: aiohttp, opentelemetry-proto), which stores every
span it is sent.  What it received is compared with the golden traces, span by span."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus
from tests.otlp_fixtures import Receiver, golden
from tests.test_otlp_golden import CASES, normalised

OUTAGE_PROPERTIES = (
    "pegasus.monitord.spool.drain_timeout = 240\n"  # the replay waits for the receiver
    "pegasus.monitord.spool.max_backoff = 0.5\n"
)


def _run_dir(src: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    if not run.exists():
        copy_submit_dir(src, run)
    return run


def _replay_cmd(run: Path, url: str, *extra: str) -> tuple[list[str], dict[str, str]]:
    dagman_out = next(run.glob("*.dag.dagman.out"))
    home = run.parent / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}
    cmd = [sys.executable, "-m", "monitord.cli", "replay", "--no-dashboard", "-d", url, *extra]
    return [*cmd, str(dagman_out)], env


def replay(run: Path, url: str, *extra: str) -> None:
    cmd, env = _replay_cmd(run, url, *extra)
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]


def _sources() -> list[tuple[str, Path]]:
    out = [
        ("case_held_released_aborted", CASES / "held_released_aborted" / "input"),
        ("case_nested_subworkflows", CASES / "nested_subworkflows" / "input"),
    ]
    return [*out, ("process_wf_failure", CORPUS / "process_wf_failure" / "input")]


@pytest.mark.parametrize(("name", "src"), _sources(), ids=[n for n, _ in _sources()])
def test_replay_exports_the_golden_trace(
    name: str, src: Path, tmp_path: Path, receiver: Receiver
) -> None:
    if not src.is_dir():
        require_corpus()
    run = _run_dir(src, tmp_path)
    replay(run, receiver.url)
    got = normalised(receiver.spans(), run)
    assert got == golden(name)
    assert {line["resource"]["service.name"] for line in receiver.received()} == {"pegasus"}


def test_replay_twice_sends_the_same_spans(tmp_path: Path, receiver: Receiver) -> None:
    run = _run_dir(CASES / "rescue_dag_restart" / "input", tmp_path)
    replay(run, receiver.url)
    first = receiver.spans()
    receiver.store.rename(tmp_path / "first.jsonl")
    replay(run, receiver.url)
    second = receiver.spans()
    assert first == second
    ids = [(s["trace_id"], s["span_id"]) for s in first]
    assert len(ids) == len(set(ids))
    assert len({s["trace_id"] for s in first}) == 2  # the rescue run is a trace of its own


def test_receiver_down_then_up_every_span_once(tmp_path: Path, receiver_off: Receiver) -> None:
    """The receiver is down when the replay starts and comes back a few seconds after the
    sink first reported it down: the runtime spools and retries, the sink resends the spans
    of the batch that failed, and the receiver ends with the golden trace, nothing twice."""
    receiver = receiver_off  # started below, once the sink is down
    run = _run_dir(CASES / "held_released_aborted" / "input", tmp_path)
    conf = tmp_path / "outage.properties"
    conf.write_text(OUTAGE_PROPERTIES)
    cmd, env = _replay_cmd(run, receiver.url, "--conf", str(conf))
    proc = subprocess.Popen(cmd, cwd=run, env=env, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    down = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "sink down" in line and "otlp" in line:
                down.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert down.wait(120), "".join(lines)[-4000:]
        time.sleep(2.0)  # down a while longer: more batches wait in the spool
        receiver.start()
        assert proc.wait(timeout=240) == 0, "".join(lines)[-4000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    output = "".join(lines)
    assert "Traceback" not in output
    received = [line["span"] for line in receiver.received()]
    ids = [(s["trace_id"], s["span_id"]) for s in received]
    assert len(ids) == len(set(ids)), "a span was received twice"
    assert normalised(receiver.spans(), run) == golden("case_held_released_aborted")


def test_a_receiver_that_never_answers_is_named_in_the_report_token_masked(
    tmp_path: Path,
) -> None:
    """The replay's end-of-run report reads the sink's health like any sink's: the
    destination is named, the exit status is not 0, the header token appears nowhere."""
    token = "tok-5e8a1c9d2b"
    port = Receiver(tmp_path / "none.jsonl").port  # nothing listens there
    run = _run_dir(CASES / "held_released_aborted" / "input", tmp_path)
    conf = tmp_path / "short.properties"
    conf.write_text("pegasus.monitord.spool.drain_timeout = 1\n")
    cmd, env = _replay_cmd(run, f"otlp+http://127.0.0.1:{port}", "--conf", str(conf))
    env["OTEL_EXPORTER_OTLP_HEADERS"] = f"authorization=Bearer%20{token}"
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    assert "Traceback" not in output
    assert f"http://127.0.0.1:{port}/v1/traces" in output
    assert token not in output
    assert token not in "".join(p.read_text(errors="replace") for p in run.rglob("*.json"))
