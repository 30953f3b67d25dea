"""One path for a line (issue 27): a replay of any size loads its database in threads of the
daemon, never in a process of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ

SEED = int(os.environ.get("MONITORD_INTERRUPT_SEED", "29"))


def test_a_large_replay_starts_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One path for a line (issue 27): a replay of any size loads its database in a thread of
    the daemon; the process it once switched to for a dagman.out of 2 MiB or more on a machine
    with a second core is what hung on Ctrl-C."""
    import multiprocessing.process
    import threading

    from monitord import cli

    out = generate(tmp_path / "run", 1000, seed=SEED, retry_fraction=0.05, name="big").dagman_out
    assert out.stat().st_size >= 2 << 20  # the size that switched
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # and a second core
    processes: list[str] = []
    threads: list[str] = []
    start_process = multiprocessing.process.BaseProcess.start
    start_thread = threading.Thread.start

    def process_started(self: multiprocessing.process.BaseProcess) -> None:
        processes.append(self.name)
        start_process(self)

    def thread_started(self: threading.Thread) -> None:
        threads.append(self.name)
        start_thread(self)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", process_started)
    monkeypatch.setattr(threading.Thread, "start", thread_started)
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    db = tmp_path / "w.db"
    assert cli.main(["replay", "-q", "-d", f"sqlite:///{db}", out.name]) == 0
    assert processes == []
    assert {"sink-sql", "sink-dashboard"} <= set(threads), threads
    assert db.stat().st_size > 0
