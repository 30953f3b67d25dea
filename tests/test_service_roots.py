"""Watched roots the service cannot list (issue 29): ``serve --check`` and the start-up log warn,
one line per root, saying what the service does; ``monitord status`` (text, /status.json,
/metrics) lists every root, whether it exists and how many workflows below it are followed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from monitord.cli.status import format_table
from monitord.service.status import ServiceSnapshot, WatchedRootStatus, from_json, to_json
from monitord.service.statuspage import render_status_page
from tests.conftest import CORPUS, require_corpus
from tests.proxies import free_port
from tests.status_fixtures import RootRows
from tests.test_service import (
    corpus_source,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

WARNING = re.compile(r"root (\S+) (does not exist|is not a directory): the service looks for it")


def _check(cfg: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "monitord.cli", "serve", "--config", str(cfg), "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _watch(*roots: Path) -> str:
    return "".join(f'\n[[watch]]\nroot = "{root}"\nmax_depth = 3\n' for root in roots)


@pytest.mark.quick
def test_check_warns_once_per_root_it_cannot_list(tmp_path: Path) -> None:
    there = tmp_path / "there"
    there.mkdir()
    missing = tmp_path / "missing"
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    cfg = write_config(tmp_path, extra=_watch(there, missing, a_file))
    proc = _check(cfg, service_env(tmp_path, cfg))
    assert proc.returncode == 0 and proc.stdout == f"{cfg}: OK\n", proc.stderr
    warnings = [WARNING.search(line) for line in proc.stderr.splitlines()]
    assert all(w is not None for w in warnings), proc.stderr
    assert {(w.group(1), w.group(2)) for w in warnings if w} == {
        (str(missing), "does not exist"),
        (str(a_file), "is not a directory"),
    }
    assert len(warnings) == 2 and "monitord serve: warning:" in proc.stderr


@pytest.mark.quick
def test_status_lists_the_roots_text_and_json() -> None:
    snap = ServiceSnapshot(
        started_at=0.0,
        roots=[
            WatchedRootStatus("/data/runs", True, 2),
            WatchedRootStatus("/data/later", False, 0, "does not exist"),
        ],
    )
    again = from_json(to_json(snap))
    assert again.roots == snap.roots
    text = format_table(again)
    assert "watched roots (2):" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("/data/")}
    assert rows["/data/runs"].split()[1:] == ["yes", "2"]
    assert "no (does not exist, waiting for it)" in rows["/data/later"]
    assert rows["/data/later"].split()[-1] == "0"
    assert "watched roots" not in format_table(ServiceSnapshot(started_at=0.0))


@pytest.mark.quick
def test_the_status_page_lists_the_roots_as_the_json_does() -> None:
    """The HTML /status shows each root, whether it is listed and its workflows (as
    ``monitord status``); a root's name is text, never markup."""
    hostile = "/data/<img src=x>"
    snap = ServiceSnapshot(
        started_at=0.0,
        roots=[
            WatchedRootStatus("/data/runs", True, 2),
            WatchedRootStatus(hostile, False, 0, "does not exist"),
        ],
    )
    page = render_status_page(from_json(to_json(snap)))
    reader = RootRows()
    reader.feed(page)
    assert reader.rows == [
        ["/data/runs", "yes", "2"],
        [hostile, "no (does not exist, waiting for it)", "0"],
    ]
    assert "<img" not in page


def _half_written(sample: str, dest: Path) -> Path:
    """A copy of a corpus workflow whose dagman.out stops half-way: it stays followed."""
    run = corpus_source(sample, dest)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text().splitlines(keepends=True)
    dagman_out.write_text("".join(lines[: len(lines) // 2]))
    return dagman_out


def test_a_missing_root_is_logged_listed_and_followed_once_it_appears(tmp_path: Path) -> None:
    require_corpus()
    assert (CORPUS / "process_wf_success").is_dir()
    port = free_port()
    there = tmp_path / "there"
    later = tmp_path / "later"
    _half_written("process_wf_success", there / "u" / "run0001")
    cfg = write_config(tmp_path, extra=_watch(there, later), http_port=port)
    env = service_env(tmp_path, cfg)
    log = tmp_path / "service.log"
    service = start_service(cfg, env, log)

    def roots() -> list[tuple[str, bool, int]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=10) as r:
            return [(x.root, x.exists, x.workflows) for x in from_json(r.read()).roots]

    def status_text() -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "monitord.cli", "status", "--url", f"http://127.0.0.1:{port}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    try:
        first = [(str(there), True, 1), (str(later), False, 0)]
        wait_until(lambda: roots() == first, 30, f"roots {first}", log)
        assert re.search(rf"^{re.escape(str(later))}\s+no \(does not exist", status_text(), re.M)
        _half_written("process_wf_failure", later / "u" / "run0001")
        second = [(str(there), True, 1), (str(later), True, 1)]
        wait_until(lambda: roots() == second, 30, f"roots {second}", log)
        text = status_text()
        assert re.search(rf"^{re.escape(str(later))}\s+yes\s+1$", text, re.M), text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            metrics = r.read().decode()
        assert f'monitord_watch_root_exists{{root="{later}"}} 1.0' in metrics
        assert f'monitord_watch_root_workflows{{root="{there}"}} 1.0' in metrics
    finally:
        assert stop_service(service) == 0
    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    warned = [r for r in records if r.get("level") == "warning" and WARNING.search(r["event"])]
    assert [r["root"] for r in warned] == [str(later)], warned  # one line, at start-up only
    assert any(r.get("root") == str(later) and "can be listed" in r["event"] for r in records)
