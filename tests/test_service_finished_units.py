"""Unit tests of what the service reports about finished workflows, and of its option names.

(The service-level behaviour is in tests/test_service_finished.py.)
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from monitord.cli import build_parser
from monitord.cli.service import split_attach_options
from monitord.cli.status import base_url as status_url
from monitord.cli.status import build_parser as status_parser
from monitord.cli.status import format_table
from monitord.daemon.config import MonitorConfig
from monitord.service.config import KEEP_FINISHED_SECONDS, configured_path, load_config
from monitord.service.discovery import file_stamp
from monitord.service.finished import FinishedWorkflows
from monitord.service.metrics import render_metrics
from monitord.service.status import (
    OUTCOMES,
    FinishedStatus,
    ServiceSnapshot,
    from_json,
    to_json,
)
from monitord.service.statuspage import _SCRIPT, render_status_page
from monitord.service.store import Ended, FollowedStore
from monitord.service.workflows import Followed, outcome_of

pytestmark = pytest.mark.quick

FINISHED = [
    FinishedStatus("u-2", "/r/b/b.dag.dagman.out", "/r/b", "failure", 1795700000.5, 40, 0, 1),
    FinishedStatus("u-1", "/r/a/a.dag.dagman.out", "/r/a", "success", 1795690000.0, 98, 0, 0),
]


def _item(tmp_path: Path, name: str, outcome: str) -> Followed:
    out = tmp_path / f"{name}.dag.dagman.out"
    out.write_text("x\n")
    item = Followed(str(out), MonitorConfig(dagman_out=str(out)), "attach", 0, wf_uuid=name)
    item.outcome = outcome
    return item


def test_keep_finished_seconds_key(tmp_path: Path) -> None:
    path = tmp_path / "svc.toml"
    path.write_text("[service]\nkeep_finished_seconds = 600\n")
    assert load_config(str(path)).keep_finished_seconds == 600.0
    path.write_text("")
    assert load_config(str(path)).keep_finished_seconds == KEEP_FINISHED_SECONDS == 86400


def test_finished_list_expires_and_knows_unchanged_files(tmp_path: Path) -> None:
    kept = FinishedWorkflows(keep_seconds=0.2)
    a, b = _item(tmp_path, "a", "success"), _item(tmp_path, "b", "failure")
    kept.record(a, 0, file_stamp(a.dagman_out))
    time.sleep(0.05)
    kept.record(b, 0, file_stamp(b.dagman_out))
    assert [(f.wf_uuid, f.outcome) for f in kept.statuses()] == [("b", "failure"), ("a", "success")]
    assert kept.unchanged(a.dagman_out) is not None
    with open(a.dagman_out, "a") as fh:  # a rescue DAG's DAGMan writes again: not over
        fh.write("more\n")
    assert kept.unchanged(a.dagman_out) is None
    time.sleep(0.25)
    assert kept.expire() and kept.statuses() == []


def test_finished_list_survives_the_store(tmp_path: Path) -> None:
    store = FollowedStore(str(tmp_path))
    kept = FinishedWorkflows(keep_seconds=3600)
    item = _item(tmp_path, "a", "failure")
    item.dagman_exit = 1
    kept.record(item, 0, file_stamp(item.dagman_out))
    store.save([], kept.entries())
    again = FinishedWorkflows(keep_seconds=3600)
    again.load(store.load()[1])
    assert again.statuses() == kept.statuses()
    assert again.statuses()[0].dagman_exit == 1
    # a file written before outcomes were kept still loads
    old = Ended("/x/y.dag.dagman.out", 1, 10, 20, time.time())
    again.load([old])
    assert again.statuses()[0].outcome == "unknown"


def test_finished_round_trip_and_metrics() -> None:
    snap = ServiceSnapshot(started_at=1795600000.0, finished=list(FINISHED))
    assert from_json(to_json(snap)) == snap
    assert from_json(b'{"started_at": 1}').finished == []  # an older service's document
    text = render_metrics(snap)
    counts = dict(re.findall(r'^monitord_workflows_finished\{outcome="(\w+)"\} (\S+)$', text, re.M))
    assert counts == {o: {"success": "1.0", "failure": "1.0"}.get(o, "0.0") for o in OUTCOMES}


def test_status_table_lists_finished_workflows() -> None:
    out = format_table(ServiceSnapshot(started_at=0.0, finished=list(FINISHED)), long=True)
    section = out.split("finished (2 workflows):\n", 1)[1].splitlines()
    assert section[0].split() == ["ENDED", "OUTCOME", "EVENTS", "DAGNAME", "WF_UUID", "RUN_DIR"]
    assert section[1].split() == [
        *time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(FINISHED[0].ended_at)).split(),
        "failure",
        "40",
        "b.dag",
        "u-2",
        "/r/b",
    ]


def test_status_page_writes_every_time_in_utc_and_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # the server's zone must not show
    time.tzset()
    try:
        page = render_status_page(ServiceSnapshot(started_at=1795600000.0, finished=FINISHED))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert "Service started 2026-11-25 09:46:40 UTC." in page
    assert "All times are UTC." in page
    assert "2026-11-26 13:33:20 UTC" in page  # FINISHED[0].ended_at
    # the script writes its times the same way (never in the browser's own zone)
    assert not re.search(r"toLocale\w*String|getHours|getTimezoneOffset", _SCRIPT)
    assert 'toISOString().slice(0, 19).replace("T", " ") + " UTC"' in _SCRIPT


@pytest.mark.parametrize(
    "argv",
    [
        ["--config", "/etc/s.toml", "--wait", "x.dag.dagman.out"],
        ["--config=/etc/s.toml", "--wait", "x.dag.dagman.out"],
        ["--service-config", "/etc/s.toml", "--wait", "x.dag.dagman.out"],  # the former name
        ["--wait", "--service-config=/etc/s.toml", "x.dag.dagman.out"],
    ],
)
def test_attach_takes_config_like_serve_and_status(argv: list[str]) -> None:
    opts, rest = split_attach_options(argv)
    assert (opts.config, opts.wait, rest) == ("/etc/s.toml", True, ["x.dag.dagman.out"])


def test_attach_help_names_config_only() -> None:
    text = build_parser("monitord attach", "attach").format_help()
    assert "--config FILE" in text and "--service-config" not in text
    # the properties file keeps its own option
    assert build_parser("monitord attach", "attach").parse_args(["--conf", "p", "x"]).conf == "p"


def test_status_finds_the_configuration_as_serve_and_attach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "svc.toml"
    cfg.write_text('[http]\nlisten = "127.0.0.1:9876"\n')
    monkeypatch.setenv("MONITORD_SERVICE_CONFIG", str(cfg))
    assert configured_path(None) == str(cfg)  # what serve and attach use
    assert status_url(status_parser().parse_args([])) == "http://127.0.0.1:9876"
    other = tmp_path / "other.toml"
    other.write_text('[http]\nlisten = "127.0.0.1:9877"\n')
    assert status_url(status_parser().parse_args(["--config", str(other)])).endswith(":9877")
    monkeypatch.delenv("MONITORD_SERVICE_CONFIG")
    if configured_path(None) is None:  # no /etc/monitord/service.toml here
        assert status_url(status_parser().parse_args([])) == "http://127.0.0.1:9175"


class _Root:
    def __init__(self, state: str | None, dagman_exit: int | None) -> None:
        self.state, self.dagman_exit = state, dagman_exit


@pytest.mark.parametrize(
    ("root", "code", "interrupted", "error", "expected"),
    [
        (_Root("end", 0), 0, False, None, "success"),
        (_Root("end", 1), 0, False, None, "failure"),  # the daemon's code is 0 all the same
        (_Root("end", 1), 1, True, None, "failure"),  # DAGMan had exited: its word counts
        (_Root("start", None), 1, True, None, "interrupted"),
        (_Root("start", None), 0, False, None, "incomplete"),  # DAGMan gone, truncated, idle
        (None, 1, False, "no wf_uuid", "error"),
    ],
)
def test_outcome_comes_from_dagman_exit(
    tmp_path: Path,
    root: _Root | None,
    code: int,
    interrupted: bool,
    error: str | None,
    expected: str,
) -> None:
    item = _item(tmp_path, "a", "")
    item.error = error
    assert outcome_of(item, root, code, interrupted=interrupted) == expected
    assert expected in OUTCOMES
