"""Event plugins in the daemon: replay and live follow feed installed contract plugins.

The plugins (tests/plugins/contract_plugins) know nothing of monitord; they are
pip-installed and found through their entry points.  Each must get exactly the
events its filter selects, in order, with payloads equal to the reference's
events.bp; the raising and blocking ones must not disturb the database or the
others; the spool policy loses nothing while a plugin is stopped, across a
clean restart too; drop-newest counts what it drops; after a kill -9 the plugin
is told the stream starts over and gets every event again.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir, require_corpus
from tests.plugin_fixtures import (
    events_in,
    expected_events,
    install_plugin_packages,
    journal,
    payload_differences,
    plugin_args,
)
from tests.test_service import wait_until

# name -> (settings, the prefixes its filter selects: class attribute or `events` property)
CONTRACT = {
    "oldstyle": ({}, None),
    "ticker": ({"tick_interval": "0.05"}, ("stampede.job_inst.",)),
    "raiser": ({"tick_interval": "0.2"}, ("stampede.job.", "stampede.xwf.")),
    "slow": (
        {"delay": "0.002", "events": "stampede.inv., stampede.job_inst.main."},
        ("stampede.inv.", "stampede.job_inst.main."),
    ),
    "blocker": ({"join_timeout": "1"}, None),  # no gate: blocks in its first handle_event
}


@pytest.fixture(scope="module", autouse=True)
def plugins_installed() -> None:
    install_plugin_packages()


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path)}


def _run(run: Path, args: list[str], env: dict[str, str], timeout: int = 120):
    dagman_out = next(run.glob("*.dag.dagman.out"))
    cmd = [sys.executable, "-m", "monitord.cli", *args, dagman_out.name]
    return subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=timeout)


def _db_equal(run: Path, sample: str) -> None:
    db = next(run.glob("*.stampede.db"))
    expected = CORPUS / sample / "expected" / "stampede.db"
    diff = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), str(expected), str(db)], capture_output=True, text=True
    )
    assert diff.returncode == 0, diff.stdout[-3000:]


def _check_contract_journals(tmp_path: Path, sample: str, *, restart: bool) -> None:
    bp = CORPUS / sample / "expected" / "events.bp"
    for name, (_, prefixes) in CONTRACT.items():
        records = journal(tmp_path / f"{name}.jsonl")
        assert records and records[0]["hook"] == "start", name
        if name == "oldstyle":
            assert "restart" not in records[0]  # called without the keyword
        else:
            assert records[0]["restart"] is restart, name
        got = events_in(records)
        if name == "blocker":
            assert got == [], "the blocked plugin cannot have finished an event"
            assert records[-1]["hook"] == "start"  # stop() skipped: it never finished
            continue
        assert payload_differences(got, expected_events(bp, prefixes)) == [], name
        assert records[-1]["hook"] == "stop", name
        assert [r["hook"] for r in records].count("stop") == 1


@pytest.mark.parametrize("sample", ["process_wf_success", "hierarchical_wf_failure"])
def test_replay_feeds_each_plugin_its_events(sample: str, tmp_path: Path) -> None:
    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    settings = {name: s for name, (s, _) in CONTRACT.items()}
    proc = _run(run, [*plugin_args(tmp_path, settings), "-r"], _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_contract_journals(tmp_path, sample, restart=True)
    _db_equal(run, sample)
    # the raising plugin's failures are logged with its name, and counted
    assert re.search(r"plugin handle_event\(\) raised .*plugin=raiser", proc.stderr)
    assert re.search(r"plugin did not finish in time.*plugin=blocker", proc.stderr)


def _play(lines: list[str], dest: Path, seconds: float, steps: int = 40) -> None:
    step = max(1, len(lines) // steps)
    with dest.open("a", encoding="utf-8") as fh:
        for i in range(0, len(lines), step):
            fh.write("".join(lines[i : i + step]))
            fh.flush()
            time.sleep(seconds / steps)


def _start_live(run: Path, args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    dagman_out = next(run.glob("*.dag.dagman.out"))
    return subprocess.Popen(
        [sys.executable, "-m", "monitord.cli", *args, dagman_out.name],
        cwd=run,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _truncated_copy(sample: str, run: Path, keep: int = 10) -> tuple[Path, list[str]]:
    copy_submit_dir(CORPUS / sample / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    dagman_out.write_text("".join(lines[:keep]), encoding="utf-8")
    return dagman_out, lines


def test_live_follow_feeds_each_plugin_its_events(tmp_path: Path) -> None:
    require_corpus()
    sample = "hierarchical_wf_failure"
    run = tmp_path / "run"
    dagman_out, lines = _truncated_copy(sample, run)
    settings = {name: s for name, (s, _) in CONTRACT.items()}
    daemon = _start_live(run, plugin_args(tmp_path, settings), _env(tmp_path))
    try:
        time.sleep(0.5)
        _play(lines[10:], dagman_out, 3.0)
        _, err = daemon.communicate(timeout=120)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err[-3000:]
    _check_contract_journals(tmp_path, sample, restart=False)
    ticks = [r for r in journal(tmp_path / "ticker.jsonl") if r["hook"] == "tick"]
    assert ticks, "tick() was never called in a 3 s follow with tick_interval 0.05"
    _db_equal(run, sample)


def test_spool_policy_a_stopped_plugin_gets_every_event_afterwards(tmp_path: Path) -> None:
    """The blocker is held (gate file) for a while during a live follow, then let go.

    The log keeps growing the whole time (a live DAGMan; an idle one would be declared dead),
    and is played over 1.5 times the hold, so events come before, during and after it.  The
    hold lasts until something is spooled (however slowly a loaded machine starts the
    daemon), and DAGMan's last lines are written only after it, so the workflow cannot end
    while the plugin is stopped.
    """
    import threading

    require_corpus()
    sample = "process_wf_success"
    stopped_for = float(os.environ.get("MONITORD_PLUGIN_STOP_SECONDS", "8"))
    run = tmp_path / "run"
    dagman_out, lines = _truncated_copy(sample, run)
    tail = 5  # DAGMan's exit lines, written once the plugin is let go
    gate = tmp_path / "gate"
    gate.touch()
    args = plugin_args(tmp_path, {"blocker": {"gate": str(gate), "queue_size": "5"}})
    daemon = _start_live(run, args, _env(tmp_path))
    player = threading.Thread(
        target=_play,
        args=(lines[10:-tail], dagman_out, stopped_for * 1.5, max(40, int(stopped_for))),
    )
    try:
        player.start()
        started = time.monotonic()
        spooled = False
        # the daemon declares an idle DAGMan dead only after ~35 s without growth
        while time.monotonic() < started + 30 + stopped_for * 1.5:
            spooled = spooled or any((run / "monitord.spool").glob("*/*"))
            if spooled and time.monotonic() >= started + stopped_for:
                break
            time.sleep(0.2)
        assert spooled, "nothing was spooled for the stopped plugin"
        assert events_in(journal(tmp_path / "blocker.jsonl")) == []
        assert daemon.poll() is None, "the daemon ended while the plugin was stopped"
        gate.unlink()
        player.join()
        _play(lines[-tail:], dagman_out, 0.1, 1)
        _, err = daemon.communicate(timeout=120)
    finally:
        player.join()
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err[-3000:]
    got = events_in(journal(tmp_path / "blocker.jsonl"))
    bp = CORPUS / sample / "expected" / "events.bp"
    assert payload_differences(got, expected_events(bp, None)) == []
    _db_equal(run, sample)


def test_spool_policy_survives_a_clean_restart(tmp_path: Path) -> None:
    """Stopped (SIGINT) while its plugin is held: the successor hands it everything, in order."""
    require_corpus()
    sample = "process_wf_success"
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    half = next(i for i, line in enumerate(lines) if "Submitting HTCondor Node stage_out" in line)
    dagman_out.write_text("".join(lines[:half]), encoding="utf-8")
    gate = tmp_path / "gate"
    gate.touch()
    args = [
        *plugin_args(tmp_path, {"blocker": {"gate": str(gate), "join_timeout": "1"}}),
        "-Dpegasus.monitord.spool.drain_timeout=1",
    ]
    first = _start_live(run, args, _env(tmp_path))
    deadline = time.time() + 30
    while time.time() < deadline and not (run / "monitord.recover").exists():
        time.sleep(0.1)
    time.sleep(1.5)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err[-3000:]
    assert events_in(journal(tmp_path / "blocker.jsonl")) == []
    assert any((run / "monitord.spool").iterdir()), "nothing left for the next daemon"
    gate.unlink()
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines[half:]))
    second = _run(run, args, _env(tmp_path))
    assert second.returncode == 0, second.stderr[-3000:]
    records = journal(tmp_path / "blocker.jsonl")
    assert [r["restart"] for r in records if r["hook"] == "start"] == [False, False]
    bp = CORPUS / sample / "expected" / "events.bp"
    assert payload_differences(events_in(records), expected_events(bp, None)) == []


@pytest.mark.parametrize("policy", ["drop-newest", "drop-oldest"])
def test_drop_policies_count_what_they_drop(policy: str, tmp_path: Path) -> None:
    require_corpus()
    sample = "process_wf_success"
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    settings = {"slow": {"delay": "0.02", "queue_size": "5", "overflow_policy": policy}}
    proc = _run(run, [*plugin_args(tmp_path, settings), "-r"], _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the runtime's queue drops (its overflow option), logged once for the 1st drop here
    assert re.search(r"buffer full, events dropped .*sink=plugin:slow", proc.stderr)
    stopped = re.search(r"plugin stopped .*dropped=(\d+) .*plugin=slow", proc.stderr)
    assert stopped, proc.stderr[-3000:]
    dropped = int(stopped.group(1))
    got = events_in(journal(tmp_path / "slow.jsonl"))
    expected = expected_events(CORPUS / sample / "expected" / "events.bp", None)
    assert dropped > 0 and len(got) + dropped == len(expected)
    # what arrived is in order: a subsequence of the reference's stream
    names = iter(e["event"] for e in expected)
    assert all(any(name == want for want in names) for name, _ in got)
    if policy == "drop-oldest":
        assert got[-1][0] == expected[-1]["event"]  # the freshest events are kept
    _db_equal(run, sample)


@pytest.mark.parametrize("outputs", ["events file", "database only"])
def test_kill_9_during_follow_then_restart(outputs: str, tmp_path: Path) -> None:
    """With an events file (it cannot resume) the successor starts the plugin over
    (restart=True, every event); with the database only it resumes from the snapshot and
    the plugin gets what it had not handled, some events again (restart=False, at least once)."""
    require_corpus()
    sample = "process_wf_success"
    run = tmp_path / "run"
    dagman_out, lines = _truncated_copy(sample, run)
    args = plugin_args(tmp_path, {"slow": {"delay": "0.02", "queue_size": "10"}})
    if outputs == "events file":
        db = run / (dagman_out.name.split(".dag.dagman.out")[0] + ".stampede.db")
        args += [f"-Dpegasus.catalog.workflow.live.url=sqlite:///{db}"]
        args += ["-d", f"file://{tmp_path / 'events.bp'}"]
    args += ["--state-dir", str(tmp_path / "state")]
    first = _start_live(run, args, _env(tmp_path))
    # killed once its plugin runs, however slowly this machine started the daemon
    wait_until(lambda: journal(tmp_path / "slow.jsonl"), 60, "the first daemon's plugin to start")
    _play(lines[10 : len(lines) * 2 // 3], dagman_out, 1.5)
    time.sleep(0.5)
    first.send_signal(signal.SIGKILL)
    assert first.wait() == -signal.SIGKILL
    before = events_in(journal(tmp_path / "slow.jsonl"))
    with dagman_out.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines[len(lines) * 2 // 3 :]))
    second = _run(run, args, _env(tmp_path))
    assert second.returncode == 0, second.stderr[-3000:]
    records = journal(tmp_path / "slow.jsonl")
    starts = [i for i, r in enumerate(records) if r["hook"] == "start"]
    assert len(starts) == 2
    expected = expected_events(CORPUS / sample / "expected" / "events.bp", None)
    after = events_in(records[starts[1] :])
    if outputs == "events file":
        # the successor replays from the start: every event, in order, after restart=True
        assert records[starts[1]]["restart"] is True
        said = [line for line in second.stderr.splitlines() if "recovering from line 1" in line]
        assert len(said) == 1 and "an output cannot resume from a snapshot: file" in said[0]
        assert payload_differences(after, expected) == []
        assert len(before) < len(after)
    else:
        # resumed: at least once -- every event the first daemon's plugin had not handled
        # reaches the successor's (those since the snapshot, and its spool, again)
        assert records[starts[1]]["restart"] is False
        missing = Counter(e["event"] for e in expected[len(before) :]) - Counter(
            name for name, _ in after
        )
        assert after and not missing, missing
        assert not list(run.glob("*.stampede.db.000"))  # not rotated: resumed
    _db_equal(run, sample)


def test_plugins_command_lists_installed_enabled_and_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from sinks.plugins.listing import main

    run = tmp_path / "run"
    run.mkdir()
    conf = tmp_path / "site.properties"
    conf.write_text(
        "pegasus.monitord.plugins.ticker.enabled = true\n"
        "pegasus.monitord.plugins.ticker.tick_interval = 2\n"
        "pegasus.monitord.plugins.ticker.api_token = s3cret\n"
        "pegasus.monitord.plugins.slow.enabled = yes\n"
        "pegasus.monitord.plugins.slow.overflow_policy = sometimes\n"
        "pegasus.monitord.plugins.ghost.enabled = on\n"
    )
    assert main(["-Dpegasus.monitord.plugins.raiser.enabled=1", "--conf", str(conf), str(run)]) == 0
    out = capsys.readouterr().out
    assert "ticker: enabled" in out and "tick_interval: 2.0" in out
    assert "raiser: enabled" in out and "oldstyle: disabled" in out
    assert "ghost: enabled, NOT INSTALLED" in out
    assert "pegasus.monitord.plugins.slow.overflow_policy = 'sometimes'" in out
    assert "api_token = ****" in out and "s3cret" not in out
    assert main(["--json", "--conf", str(conf), str(run)]) == 0
    listing = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    assert listing["ticker"]["enabled"] and not listing["oldstyle"]["enabled"]
    assert listing["ticker"]["class_event_filter"] == "stampede.job_inst."
    assert listing["job_summary"]["installed"]  # the example package
    assert main([str(tmp_path / "absent")]) == 1


@pytest.mark.parametrize("sample", ["process_wf_failure", "hierarchical_wf_success"])
def test_example_job_summary_plugin(sample: str, tmp_path: Path) -> None:
    """The shipped example keeps one summary per workflow equal to what the events say."""
    import json

    require_corpus()
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    out = tmp_path / "summaries"
    args = [
        "-Dpegasus.monitord.plugins.job_summary.enabled=true",
        f"-Dpegasus.monitord.plugins.job_summary.dir={out}",
        "-Dpegasus.monitord.plugins.job_summary.tick_interval=0.2",
        "-r",
    ]
    proc = _run(run, args, _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    ends = expected_events(CORPUS / sample / "expected" / "events.bp", ("stampede.xwf.end",))
    finals = expected_events(
        CORPUS / sample / "expected" / "events.bp", ("stampede.job_inst.main.end",)
    )
    assert {e["xwf.id"] for e in ends} <= {
        p.name.split(".")[0] for p in out.glob("*.job-summary.json")
    }
    for end in ends:
        doc = json.loads((out / f"{end['xwf.id']}.job-summary.json").read_text())
        assert doc["state"] == "finished" and str(doc["status"]) == end["status"]
        mine = [e for e in finals if e["xwf.id"] == end["xwf.id"]]
        failed = sorted(e["job.id"] for e in mine if e["status"] != "0")
        assert sorted(f["job"] for f in doc["failed"]) == failed
        assert doc["job_counts"].get("succeeded", 0) == len(mine) - len(failed)


def test_process_isolation_a_crashing_plugin_is_restarted_and_resumes(tmp_path: Path) -> None:
    """The plugin's process segfaults mid-replay; the daemon and the DB do not notice, and the
    restarted process gets every event (those the dead one had not confirmed, again)."""
    require_corpus()
    sample = "process_wf_success"
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    settings = {
        "crasher": {"isolation": "process", "crash_at": "20", "marker": str(tmp_path / "crashed")},
        "oldstyle": {"isolation": "process"},
    }
    proc = _run(run, [*plugin_args(tmp_path, settings), "-r"], _env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "crashed").exists()
    assert re.search(r"plugin process died.*plugin=crasher", proc.stderr)
    records = journal(tmp_path / "crasher.jsonl")
    starts = [r for r in records if r["hook"] == "start"]
    assert [s["restart"] for s in starts] == [True, False] and starts[0]["pid"] != starts[1]["pid"]
    seen: list[tuple[str, dict]] = []
    for name, kw in events_in(records):  # at least once; a repeat is a resent unconfirmed event
        if (name, kw) not in seen:
            seen.append((name, kw))
    bp = CORPUS / sample / "expected" / "events.bp"
    assert payload_differences(seen, expected_events(bp, None)) == []
    assert (
        payload_differences(
            events_in(journal(tmp_path / "oldstyle.jsonl")), expected_events(bp, None)
        )
        == []
    )
    _db_equal(run, sample)
