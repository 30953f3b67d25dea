"""``-v`` shows what a debugging user needs, ``-vv`` more (issue 29): per-file progress, batch
sizes and write times per sink, sink decisions; by level, never one line per dagman.out line."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus

SAMPLE = "process_wf_success"
LINE = re.compile(r"^\S+Z \[(\w+)\s*\] (.*?)\s*((?<= )[\w.]+=.*)?$")  # level, message, fields
FIELD = re.compile(r"(\w[\w.]*)=('(?:[^'\\]|\\.)*'|\S+)")
SECRET = "s3cr3tpw"


def replay(tmp_path: Path, name: str, *args: str) -> tuple[list[tuple[str, str, dict]], str]:
    """Replay a copy of the corpus workflow; its log lines as (level, message, fields)."""
    run = tmp_path / name
    dagman_out = copy_submit_dir(CORPUS / SAMPLE / "input", run)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", "replay", *args, "--no-dashboard", dagman_out.name],
        cwd=run,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = []
    for text in proc.stderr.splitlines():
        m = LINE.match(text)
        if m:
            fields = {k: v.strip("'") for k, v in FIELD.findall(m.group(3) or "")}
            lines.append((m.group(1), m.group(2), fields))
    return lines, proc.stderr


def test_each_v_shows_more_and_debug_names_batches_and_files(tmp_path: Path) -> None:
    require_corpus()
    default, _ = replay(tmp_path, "v0")
    debug, stderr = replay(tmp_path, "v1", "-v")
    trace, _ = replay(tmp_path, "v2", "-vv")
    levels = [Counter(level for level, _, _ in lines) for lines in (default, debug, trace)]
    assert not levels[0]["debug"] and not levels[0]["trace"], default
    assert levels[1]["debug"] and not levels[1]["trace"], debug
    assert levels[2]["trace"], trace
    debug_kinds = [{m for level, m, _ in lines if level == "debug"} for lines in (debug, trace)]
    assert debug_kinds[0] == debug_kinds[1]  # -vv keeps what -v shows
    assert len(default) < len(debug) < len(trace)

    dagman_out = next((CORPUS / SAMPLE / "input").glob("*.dag.dagman.out"))
    total_lines = len(dagman_out.read_bytes().split(b"\n")) - 1  # the last line ends with \n
    by_message = {msg: [f for _, m, f in debug if m == msg] for msg in {m for _, m, _ in debug}}
    # per-file progress: the chunks cover the file, and the end says how many job files
    chunks = by_message["dagman.out chunk"]
    assert sum(int(f["lines"]) for f in chunks) == total_lines, chunks
    assert int(chunks[-1]["position"]) == dagman_out.stat().st_size
    [done] = by_message["dagman.out done"]
    assert int(done["lines"]) == total_lines and int(done["job_files_read"]) > 0, done
    # batches: size and time per sink; together every event the summary counts
    batches = by_message["batch written"]
    assert batches and all(f["sink"] == "sql" for f in batches)
    assert all(float(f["seconds"]) >= 0 for f in batches)
    events = sum(int(f["events"]) for f in batches)
    assert events > len(batches)  # batches, not one line per event
    assert f", {events} events," in stderr  # what the summary line counts
    assert by_message["start-up: outputs start over"][0]["replay"] == "True"
    # TRACE: the kinds of the lines, which add up to the lines of the file
    kinds = [f for level, m, f in trace if m == "dagman.out line kinds"]
    assert sum(int(v) for f in kinds for k, v in f.items() if k != "file") == total_lines
    assert sum(int(f["events"]) for _, m, f in trace if m == "events to the sinks") == events
    assert len(trace) < total_lines // 10  # never a line per dagman.out line


def test_debug_shows_a_sinks_decisions(tmp_path: Path) -> None:
    """A destination that refuses: each failed call and what the runtime decided."""
    require_corpus()
    url = f"postgresql://u:{SECRET}@127.0.0.1:1/stampede"  # nothing listens there
    lines, stderr = replay(
        tmp_path, "down", "-Dpegasus.monitord.spool.drain_timeout=1", "-v", "-d", url
    )
    assert SECRET not in stderr
    decisions = [f for level, m, f in lines if m == "sink call failed: decision"]
    assert decisions and all(level == "debug" for level, m, _ in lines if m.startswith("sink call"))
    assert {f["decision"] for f in decisions} <= {"spool and retry", "retry", "disable"}
    assert decisions[0]["call"] == "open" and decisions[0]["attempt"] == "1", decisions[0]
    assert decisions[0]["decision"] == "spool and retry", decisions[0]  # a replay has a spool


def test_trace_classifies_each_dagman_out_line_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """-vv counts the kinds the workflow's machine gave the lines, never classifying them a
    second time: a replay at TRACE calls the classifier as often as one at INFO."""
    import asyncio

    from monitord.core import dagman
    from monitord.daemon.config import MonitorConfig
    from monitord.daemon.run import daemon_monitor, run_replay
    from monitord.system import loglevel
    from monitord.system.logs import configure_logging
    from monitord.tools.synthetic import generate

    calls = [0]

    def counting(original):  # type: ignore[no-untyped-def]
        def count(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls[0] += 1
            return original(*args, **kwargs)

        return count

    # The compiled rule tables every classification goes through (``classify`` and the
    # machine's ``feed_lines`` call them by module attribute).
    for name in ("classify_line", "classify_in_log_list"):
        monkeypatch.setattr(dagman, name, counting(getattr(dagman, name)))
    monkeypatch.setenv("HOME", str(tmp_path))
    counted = {}
    for verbosity, level in ((2, loglevel.TRACE), (0, logging.INFO)):
        gen = generate(tmp_path / str(level), 30, seed=27, name="once")
        config = MonitorConfig(str(gen.dagman_out), replay=True, dashboard=False)
        configure_logging(verbosity)  # conftest restores the logging it found
        assert loglevel.level() == level
        calls[0] = 0
        asyncio.run(run_replay(config, daemon_monitor(config)))
        counted[level] = calls[0]
    assert counted[logging.INFO] > 0
    assert counted[loglevel.TRACE] == counted[logging.INFO], counted
