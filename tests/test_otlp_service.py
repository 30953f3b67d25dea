"""The ``otlp`` sink in ``monitord serve``: one exporter per endpoint for every workflow, and
its health in ``/metrics`` and ``monitord status`` like any sink's.

Each workflow is a case of tests/data/cases copied with the first part of its dagman.out (the
rest is appended later, as DAGMan would write it) and attached with ``-d otlp+http://...`` to
the receiver process (tests/otlp_receiver.py), which decodes every request with
opentelemetry-proto and counts the connections they came on.
"""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from tests.conftest import copy_submit_dir
from tests.otlp_fixtures import Receiver, golden
from tests.proxies import free_port
from tests.test_otlp_golden import CASES, normalised
from tests.test_service import (
    attach,
    finished,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

TOKEN = "tok-7c41d9e0aa5f"
#: the cases played into one service (three traces of their own)
SERVED = ["held_released_aborted", "nested_subworkflows", "clustered_jobs"]


class Cut:
    """A case's submit dir with the first ``share`` of its dagman.out; ``go_on`` appends the rest."""

    def __init__(self, case: str, dest: Path, share: float = 0.5) -> None:
        self.case = case
        self.run = dest
        copy_submit_dir(CASES / case / "input", dest)
        self.dagman_out = next(dest.glob("*.dag.dagman.out"))
        lines = self.dagman_out.read_text().splitlines(keepends=True)
        cut = int(len(lines) * share)
        self.rest = "".join(lines[cut:])
        self.dagman_out.write_text("".join(lines[:cut]))

    def go_on(self) -> None:
        with self.dagman_out.open("a") as fh:
            fh.write(self.rest)


def _service(tmp_path: Path, extra_env: dict[str, str] | None = None) -> tuple[Any, dict, int]:
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = {**service_env(tmp_path, cfg), **(extra_env or {})}
    props = tmp_path / "fast-retries.properties"
    props.write_text("pegasus.monitord.spool.max_backoff = 0.5\n")  # test clock: quick retries
    env["_PROPS"] = str(props)
    return start_service(cfg, env, tmp_path / "service.log"), env, port


def _attach(cut: Cut, env: dict[str, str], receiver: Receiver) -> None:
    done = attach(
        cut.dagman_out, env, "--no-dashboard", "--conf", env["_PROPS"], "-d", receiver.url
    )
    assert done.returncode == 0, done.stderr


def _trace_of(received: list[dict[str, Any]], cut: Cut) -> list[dict[str, Any]]:
    """The received spans of ``cut``'s trace(s), in the golden order, made neutral."""
    want = golden(f"case_{cut.case}")
    ids = {s["trace_id"] for s in want}
    spans = sorted(
        (s for s in received if s["trace_id"] in ids),
        key=lambda s: (s["trace_id"], s["start_ns"], s["span_id"]),
    )
    return normalised(spans, cut.run)


def _check_every_span_once(receiver: Receiver, cuts: list[Cut]) -> None:
    received = [line["span"] for line in receiver.received()]
    twice = [
        k for k, n in Counter((s["trace_id"], s["span_id"]) for s in received).items() if n > 1
    ]
    assert twice == [], f"{len(twice)} spans received twice"
    for cut in cuts:
        assert _trace_of(received, cut) == golden(f"case_{cut.case}"), cut.case
    assert len(received) == sum(len(golden(f"case_{c.case}")) for c in cuts)  # no stray span


def test_one_connection_serves_every_workflow(tmp_path: Path, receiver: Receiver) -> None:
    """Three workflows followed at once, each exporting to one endpoint: every span of each
    trace once (its golden trace), all over one connection (the service's shared exporter;
    with a sink per workflow there would be one connection each)."""
    service, env, _ = _service(tmp_path)
    try:
        cuts = [Cut(case, tmp_path / case / "run") for case in SERVED]
        for cut in cuts:
            _attach(cut, env, receiver)
        for cut in cuts:  # each workflow's sink has exported over the connection
            wait_until(
                lambda c=cut: _trace_of([ln["span"] for ln in receiver.received()], c),
                60,
                f"{cut.case}'s first spans",
                tmp_path / "service.log",
            )
        for cut in cuts:
            cut.go_on()
        for cut in cuts:
            wait_until(lambda c=cut: finished(c.run), 60, f"{cut.case} to end")
    finally:
        assert stop_service(service) == 0
    _check_every_span_once(receiver, cuts)
    assert receiver.connections() == 1


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read().decode()


def _metric(text: str, name: str, sink: str) -> float | None:
    pattern = rf'^{name}\{{sink="{re.escape(sink)}"\}} (\S+)$'
    found = re.search(pattern, text, re.M)
    return float(found.group(1)) if found else None


def _status(env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout + proc.stderr


def test_metrics_and_status_show_the_exporters_health(tmp_path: Path, receiver: Receiver) -> None:
    """/metrics and ``monitord status`` read the otlp destination's health: up with events
    written; the receiver stopped: down, retries counting; back: up, and every span once.
    The header token (OTEL_EXPORTER_OTLP_HEADERS) is sent and never shown."""
    service, env, port = _service(
        tmp_path, {"OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{TOKEN}"}
    )
    sink = f"otlp:http://127.0.0.1:{receiver.port}/v1/traces"
    shown: list[str] = []

    def metric(name: str) -> float | None:
        text = _metrics(port)
        shown.append(text)
        return _metric(text, name, sink)

    def status() -> str:
        shown.append(text := _status(env))
        return text

    try:
        cut = Cut("held_released_aborted", tmp_path / "run")
        _attach(cut, env, receiver)
        wait_until(lambda: receiver.received(), 60, "the first spans", tmp_path / "service.log")
        wait_until(lambda: (metric("monitord_sink_events_written_total") or 0) > 0, 30, "written")
        assert metric("monitord_sink_up") == 1.0
        assert re.search(rf"{re.escape(sink)} up queued=", status())
        retries = metric("monitord_sink_retries_total")
        assert retries is not None

        receiver.stop()
        cut.go_on()  # the rest of the run: its spans wait for the receiver
        wait_until(lambda: metric("monitord_sink_up") == 0.0, 60, "the sink to be down")
        assert re.search(rf"{re.escape(sink)} down since ", status())
        down = metric("monitord_sink_retries_total") or 0.0
        assert down > retries
        wait_until(
            lambda: (metric("monitord_sink_retries_total") or 0) > down, 30, "retries counting"
        )

        receiver.start()
        wait_until(lambda: finished(cut.run), 60, "the workflow to end")
        wait_until(lambda: metric("monitord_sink_up") == 1.0, 30, "the sink to be up")
        assert re.search(rf"{re.escape(sink)} up queued=", status())
    finally:
        assert stop_service(service) == 0
    _check_every_span_once(receiver, [cut])
    assert {line["authorization"] for line in receiver.received()} == {f"Bearer {TOKEN}"}
    shown.append((tmp_path / "service.log").read_text())
    assert all(TOKEN not in text for text in shown)
