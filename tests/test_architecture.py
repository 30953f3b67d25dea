"""docs/architecture.md's path of a line is what runs (issue 27).

A probe runs a real replay of a generated workflow (large enough for many chunks and batches)
in a process of its own and records, at every stage a line passes, the thread it runs on and
every thread and child process that exist at that moment: dagman.out is read and fed on one
parser thread (step 1-5 of the page), each sink writes on its own thread (6-7), so a line is
handed on twice; no other thread or process exists during the replay.  The page states the
same sets, which this test reads from it, so neither can change without the other.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import PROJECT
from tests.servers import require_server

PAGE = PROJECT / "docs" / "architecture.md"

PROBE = r"""
import asyncio, json, os, sys, threading

from monitord.daemon.config import MonitorConfig
from monitord.daemon.monitor import Monitor
from monitord.daemon.run import daemon_monitor, run_replay
from sinks.sql.dashboard import DashboardSink
from sinks.runtime.process_sink import ProcessSink
from sinks.sql.sink import SQLSink

seen = {"threads": set(), "processes": set(), "stages": {}}
titles = {}


def sample(stage):
    seen["stages"].setdefault(stage, set()).add(threading.current_thread().name)
    seen["threads"].update(t.name for t in threading.enumerate())
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                seen["processes"].add(pid)
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        title = fh.read().replace(b"\0", b" ").decode().strip()
                    if title:  # empty: ended, not yet reaped; keep the title it ran with
                        titles[pid] = title
                except OSError:
                    pass


def wrap(cls, name, stage):
    original = getattr(cls, name)

    def probed(self, *args, **kwargs):
        sample(stage)
        return original(self, *args, **kwargs)

    setattr(cls, name, probed)


class Probe:
    def added(self, tracked, *, opened, ended=False): pass
    def fed(self, tracked, lines): sample("feed")
    def published(self, events): sample("publish")
    def ended(self, tracked): pass


if hasattr(Monitor, "_replay_file"):
    wrap(Monitor, "_replay_file", "read")
wrap(SQLSink, "write_batch", "write sql")
wrap(ProcessSink, "write_batch", "write sql")
wrap(DashboardSink, "write_batch", "write dashboard")
sql_process = True if os.environ.get("PROBE_SQL_PROCESS") == "1" else None  # None: by size
read_ahead = os.environ.get("PROBE_READ_AHEAD") == "1"
config = MonitorConfig(
    sys.argv[1], replay=True, dests=sys.argv[2:] or None, sql_process=sql_process,
    read_ahead=read_ahead,
)
monitor = daemon_monitor(config, observers=[Probe()])
asyncio.run(run_replay(config, monitor))
seen["processes"] = {titles.get(pid, pid) for pid in seen["processes"]}  # the last title seen
print(json.dumps({k: sorted(v) if isinstance(v, set) else {s: sorted(t) for s, t in v.items()}
                  for k, v in seen.items()}))
"""


def _documented(heading: str) -> set[str]:
    """The thread names listed in backquotes on the page's line that starts with ``heading``."""
    line = next(x for x in PAGE.read_text().splitlines() if x.startswith(heading))
    return set(re.findall(r"`([^`]+)`", line.split(":", 1)[1]))


def _probe(
    home: Path,
    dagman_out: Path,
    *destinations: str,
    sql_process: bool = False,
    read_ahead: bool = False,
) -> Any:
    """Run the probed replay in a child process; what it saw (stages, threads, processes:
    their titles)."""
    env = {
        **os.environ,
        "HOME": str(home),
        "TZ": "UTC",
        "PROBE_SQL_PROCESS": str(int(sql_process)),
        "PROBE_READ_AHEAD": str(int(read_ahead)),
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(dagman_out), *destinations],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_replay_runs_the_threads_and_crossings_the_page_names(tmp_path: Path) -> None:
    gen = generate(tmp_path / "run", 400, retry_fraction=0.05, seed=27, name="arch")
    assert gen.dagman_out.stat().st_size > 2 * 256 * 1024  # several chunks
    seen = _probe(tmp_path, gen.dagman_out)
    stages = {stage: set(threads) for stage, threads in seen["stages"].items()}
    # steps 1-5: one parser thread reads, feeds and publishes (the first hand-over)
    assert stages.get("read") == stages["feed"] == stages["publish"] == {"parser_0"}, stages
    # steps 6-7: each sink writes on its own thread (the second hand-over)
    assert stages["write sql"] == {"sink-sql"}
    assert stages["write dashboard"] == {"sink-dashboard"}
    assert set(seen["threads"]) == _documented("Threads of a replay:"), seen["threads"]
    assert seen["processes"] == [], "a replay starts no process"
    assert _documented("Processes of a replay:") == {"none"}


def test_a_sql_process_replay_adds_the_one_process_the_page_names(tmp_path: Path) -> None:
    """``--sql-process``: the same threads, the SQL sink's batches handed to one child process
    titled as the page says (its database named, never a password); no other process."""
    gen = generate(tmp_path / "run", 400, retry_fraction=0.05, seed=27, name="arch")
    seen = _probe(tmp_path, gen.dagman_out, sql_process=True)
    stages = {stage: set(threads) for stage, threads in seen["stages"].items()}
    assert stages.get("read") == stages["feed"] == stages["publish"] == {"parser_0"}, stages
    assert stages["write sql"] == {"sink-sql"}  # the wrapper's, in the daemon
    assert stages["write dashboard"] == {"sink-dashboard"}
    threads = _documented("Threads of a large replay, or with `--sql-process`:")
    assert set(seen["threads"]) == threads, seen["threads"]
    db = next(gen.dagman_out.parent.glob("*.stampede.db"))
    shown = {t.replace(f"sqlite:///{db}", "<database>") for t in seen["processes"]}
    assert shown == _documented("Processes of a replay with `--sql-process`:"), seen["processes"]


def test_a_read_ahead_replay_adds_the_one_process_the_page_names(tmp_path: Path) -> None:
    """``--read-ahead``: the same threads and stages, and one worker process titled as the
    page says (the dagman.out it reads ahead of); no other process."""
    gen = generate(tmp_path / "run", 400, retry_fraction=0.05, seed=27, name="arch")
    seen = _probe(tmp_path, gen.dagman_out, read_ahead=True)
    stages = {stage: set(threads) for stage, threads in seen["stages"].items()}
    assert stages.get("read") == stages["feed"] == stages["publish"] == {"parser_0"}, stages
    assert stages["write sql"] == {"sink-sql"}
    threads = _documented("Threads of a replay with `--read-ahead`:")
    assert set(seen["threads"]) == threads, seen["threads"]
    shown = {t.replace(str(gen.dagman_out), "<dagman.out>") for t in seen["processes"]}
    assert shown == _documented("Processes of a replay with `--read-ahead`:"), seen["processes"]


def test_a_large_replay_adds_the_two_processes_the_page_names(tmp_path: Path) -> None:
    """Both helpers (what a large replay gets: ``--sql-process --read-ahead``): the threads of
    a large replay and the two processes the page names for it; no other process."""
    gen = generate(tmp_path / "run", 400, retry_fraction=0.05, seed=27, name="arch")
    seen = _probe(tmp_path, gen.dagman_out, sql_process=True, read_ahead=True)
    stages = {stage: set(threads) for stage, threads in seen["stages"].items()}
    assert stages.get("read") == stages["feed"] == stages["publish"] == {"parser_0"}, stages
    threads = _documented("Threads of a large replay, or with `--sql-process`:")
    assert set(seen["threads"]) == threads, seen["threads"]
    db = next(gen.dagman_out.parent.glob("*.stampede.db"))
    shown = {
        t.replace(f"sqlite:///{db}", "<database>").replace(str(gen.dagman_out), "<dagman.out>")
        for t in seen["processes"]
    }
    assert shown == _documented("Processes of a large replay:"), seen["processes"]


def test_the_page_names_the_sql_process_crossing_with_its_files_and_functions() -> None:
    line = next(
        x
        for x in PAGE.read_text().splitlines()
        if x.startswith("Crossing of a large replay, or with `--sql-process`")
    )
    pairs = re.findall(r"`((?:monitord|sinks)/[\w/]+\.py)` `([\w.]+)`", line)
    assert len(pairs) == 5, line
    for path, name in pairs:
        text = (PROJECT / path).read_text()
        *owner, function = name.split(".")
        assert all(f"class {o}" in text for o in owner) and f"def {function}(" in text, name


def test_an_amqp_destination_adds_its_sink_thread_and_its_connection_thread_only(
    tmp_path: Path,
) -> None:
    """``-d amqp://...``: the AMQP sink is an ordinary sink (its ``sink-`` thread writes, as
    every sink's) plus the one thread of its broker connection (``amqp-<hash>``, whose event
    loop answers heartbeats); no other thread, no process."""
    base = require_server("amqp")
    gen = generate(tmp_path / "run", 40, seed=27, name="arch")
    seen = _probe(tmp_path, gen.dagman_out, f"{base.rstrip('/')}/monitord.test.architecture")
    shown = {
        "sink-amqp:<url>"
        if name.startswith("sink-amqp:")
        else "amqp-<hash>"
        if re.fullmatch(r"amqp-[0-9a-f]{8}", name)
        else name
        for name in seen["threads"]
    }
    password = urlsplit(base).password
    assert password and not any(password in name for name in seen["threads"])
    assert shown == _documented("Threads of a replay into an AMQP exchange"), seen["threads"]
    assert seen["processes"] == []


@pytest.mark.quick
def test_the_page_names_each_hand_over_with_its_file_and_function() -> None:
    text = PAGE.read_text()
    rows = [x.split("|") for x in text.splitlines() if x.startswith("| ")]
    crossings = ["|".join(r) for r in rows if len(r) > 3 and r[2].strip().startswith("→")]
    assert len(crossings) == 2, crossings  # "handed on twice"
    assert "handed on twice" in text
    for row in crossings:
        files = re.findall(r"`((?:monitord|sinks)/[\w/]+\.py)`", row)
        assert files and all((PROJECT / f).is_file() for f in files), row
