"""A replay or follow in a time zone other than the planner's says so, once, naming the fix
(issue 29): dagman.out times carry no offset, so without ``TZ`` every stored time is shifted.
The service counts it too: ``zone_warnings`` in /status.json, a counter in /metrics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from monitord.core.readers.braindump import parse_braindump_yml, planner_iso_offset
from monitord.system import zonecheck
from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus

PLANNED = 1677911013  # 20230303T222333-0800, the corpus's braindump timestamp
PST = -8 * 3600
FAILURE_UUID = "f84f05fc-a8d0-42b5-bac5-52d6f41a77e3"  # process_wf_failure


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Set this process's TZ for one test (restored after)."""
    import time

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.mark.quick
@pytest.mark.parametrize(
    ("stamp", "offset"),
    [
        ("20230303T222333-0800", PST),
        ("20230303T222333+0530", 19800),
        ("2023-03-03T22:23:33Z", 0),
        ("20230303T222333", None),  # no zone: no offset
        ("20231303T222333-0800", None),  # month 13
    ],
)
def test_planner_offset(stamp: str, offset: int | None) -> None:
    assert planner_iso_offset(stamp) == offset
    bd = parse_braindump_yml(f'timestamp: "{stamp}"\n')
    assert bd.utc_offset == offset


@pytest.mark.quick
def test_mismatch_names_a_zone_with_the_planners_offset_at_that_date(zone) -> None:  # type: ignore[no-untyped-def]
    zone("UTC")
    found = zonecheck.zone_mismatch(PLANNED, PST)
    assert found is not None and (found.recorded, found.local) == (PST, 0)
    assert found.fix == "TZ=America/Los_Angeles"
    zone(CORPUS_TZ)
    assert zonecheck.zone_mismatch(PLANNED, PST) is None
    # -a (adjust) that makes up the difference is no mismatch either
    zone("UTC")
    assert zonecheck.zone_mismatch(PLANNED, PST, adjust=8 * 3600) is None


@pytest.mark.quick
def test_the_suggested_zone_has_that_offset_at_that_moment() -> None:
    summer = 1689000000  # July 2023: Los Angeles is at -07:00 then, not -08:00
    assert zonecheck.zone_with_offset(summer, PST) != "America/Los_Angeles"
    assert zonecheck.zone_with_offset(PLANNED, 19800) == "Asia/Kolkata"
    # an offset no zone has: a POSIX TZ of that offset (POSIX counts west as positive)
    odd = -(3 * 3600 + 17 * 60)
    assert zonecheck.zone_with_offset(PLANNED, odd) == "<-0317>3:17"
    assert zonecheck.posix_tz(19800) == "<+0530>-5:30"


def _run(command: str, tz: str, tmp_path: Path, sample: str = "process_wf_success") -> list[str]:
    """``monitord replay``/``follow`` of a corpus copy with ``TZ=tz``; its zone warnings."""
    run = tmp_path / f"{command}-{tz.replace('/', '_')}"
    dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    extra = ["--state-dir", str(tmp_path / "state")] if command == "follow" else []
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", command, "--no-dashboard", *extra, dagman_out.name],
        cwd=run,
        env={**os.environ, "TZ": tz, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return [line for line in proc.stderr.splitlines() if "time zone" in line]


@pytest.mark.parametrize("command", ["replay", "follow"])
def test_a_run_in_another_zone_warns_once_naming_the_fix(command: str, tmp_path: Path) -> None:
    require_corpus()
    [line] = _run(command, "UTC", tmp_path)
    assert "[warning" in line and "run it with TZ=America/Los_Angeles" in line, line
    assert "UTC-08:00" in line and "UTC+00:00" in line and "8 h early" in line, line
    assert _run(command, CORPUS_TZ, tmp_path) == []


def test_sub_workflows_do_not_repeat_the_warning(tmp_path: Path) -> None:
    """Once per root workflow: the hierarchy's sub-workflows share the planner's zone."""
    require_corpus()
    lines = _run("replay", "Asia/Kolkata", tmp_path, sample="hierarchical_wf_success")
    assert len(lines) == 1 and "13.5 h early" in lines[0], lines


def _half(sample: str, run: Path, planned_at: str | None = None) -> Path:
    """A corpus copy whose dagman.out stops half-way (it stays followed); ``planned_at``: the
    braindump's timestamp instead of the planner's."""
    dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
    lines = dagman_out.read_text().splitlines(keepends=True)
    dagman_out.write_text("".join(lines[: len(lines) // 2]))
    if planned_at is not None:
        braindump = run / "braindump.yml"
        text = re.sub(r'(?m)^timestamp: ".*"$', f'timestamp: "{planned_at}"', braindump.read_text())
        braindump.write_text(text)
    return dagman_out


def test_the_service_counts_the_warning_in_status_json_and_metrics(tmp_path: Path) -> None:
    """A service in UTC follows a workflow planned at -08:00 (one warning: 1 in its status and
    its counter ``monitord_workflow_time_zone_warnings_total``) and one planned in UTC (0)."""
    from monitord.service.status import from_json
    from tests.proxies import free_port
    from tests.test_service import (
        attach,
        service_env,
        start_service,
        stop_service,
        wait_until,
        write_config,
    )

    require_corpus()
    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = {**service_env(tmp_path, cfg), "TZ": "UTC"}
    shifted = _half("process_wf_success", tmp_path / "shifted")
    in_utc = _half("process_wf_failure", tmp_path / "utc", planned_at="20230303T230934+0000")
    log = tmp_path / "service.log"
    service = start_service(cfg, env, log)

    def get(path: str) -> bytes:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return bytes(resp.read())

    def warnings() -> dict[str, int]:
        return {w.run_dir: w.zone_warnings for w in from_json(get("/status.json")).workflows}

    try:
        for dagman_out in (shifted, in_utc):
            assert attach(dagman_out, env, "--no-dashboard").returncode == 0
        want = {str(shifted.parent): 1, str(in_utc.parent): 0}
        wait_until(lambda: warnings() == want, 60, "both workflows in /status.json", log)
        metrics = get("/metrics").decode().splitlines()
    finally:
        assert stop_service(service) == 0
    name = "monitord_workflow_time_zone_warnings_total"
    for uuid, count in (("f00c0056-abd4-4e8e-b793-24eb760dda1f", 1), (FAILURE_UUID, 0)):
        assert f'{name}{{wf_uuid="{uuid}"}} {count:.1f}' in metrics, [
            m for m in metrics if name in m
        ]
    lines = [line for line in log.read_text().splitlines() if "local time zone" in line]
    assert len(lines) == 1 and str(shifted.parent) in lines[0], lines
