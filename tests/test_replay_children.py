"""Which replay starts which child process (issue 30; /proc, whatever started it): a large one
on two idle usable cores the SQL loader's child and the read-ahead worker, the same on one
core or with ``--sql-thread --no-read-ahead`` none, ``--sql-thread`` the worker only,
``--sql-process`` its child whatever the cores.  (Apart from
tests/test_replay_interrupt.py, whose replays take the longest: two modules, two workers.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ

SEED = int(os.environ.get("MONITORD_INTERRUPT_SEED", "29"))


def children() -> dict[int, str]:
    """This process's child processes: pid -> command line (a process title)."""
    me, found = str(os.getpid()), {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                parent = fh.read().rsplit(")", 1)[1].split()[1]
            if parent == me:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                found[int(pid)] = title.decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
    return found


def _children_of_a_large_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str, cores: int = 2
) -> tuple[dict[int, str], list[str]]:
    """A replay of a dagman.out at the size from which the loader goes to a child process (the
    bound lowered to this 1,000-job workflow's), in this process, on ``cores`` usable cores:
    the child processes it had while its sinks wrote (sampled from /proc at every batch,
    whatever started them), and the threads it started."""
    import threading

    from monitord import cli
    from monitord.daemon import outputs
    from sinks.runtime.process_sink import ProcessSink
    from sinks.sql.dashboard import DashboardSink
    from sinks.sql.sink import SQLSink

    out = generate(tmp_path / "run", 1000, seed=SEED, retry_fraction=0.05, name="big").dagman_out
    monkeypatch.setattr(outputs, "PROCESS_FROM", out.stat().st_size)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # an idle machine
    before = children()
    seen: dict[int, str] = {}
    threads: list[str] = []
    start_thread = threading.Thread.start

    def thread_started(self: threading.Thread) -> None:
        threads.append(self.name)
        start_thread(self)

    def sampled(cls: type[Any]) -> None:
        write = cls.write_batch

        def write_batch(self: object, events: object) -> None:
            # a child that has ended and is not yet reaped shows an empty command line: keep
            # the title it had while it ran (the read-ahead worker may end before the last batch)
            seen.update((pid, t) for pid, t in children().items() if pid not in before and t)
            write(self, events)

        monkeypatch.setattr(cls, "write_batch", write_batch)

    for cls in (SQLSink, DashboardSink, ProcessSink):
        sampled(cls)
    monkeypatch.setattr(threading.Thread, "start", thread_started)
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    db = tmp_path / "w.db"
    assert cli.main(["replay", "-q", *options, "-d", f"sqlite:///{db}", out.name]) == 0
    assert db.stat().st_size > 0
    return seen, threads


def _titles(seen: dict[int, str]) -> list[list[str]]:
    return [t.split()[:2] for t in seen.values()]


def test_a_large_replay_on_two_cores_loads_its_database_in_one_child_reading_in_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: by default a large replay's SQL loader runs in one child process on two idle
    cores and its job files are read ahead by another, the two the page names (started
    through subprocess, not multiprocessing: no helper process), beside the same threads."""
    seen, threads = _children_of_a_large_replay(tmp_path, monkeypatch)
    assert sorted(_titles(seen)) == [["monitord", "read-ahead"], ["monitord", "sink-sql"]], seen
    assert {"sink-sql", "sink-dashboard"} <= set(threads), threads
    page = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()
    line = next(x for x in page.splitlines() if x.startswith("Processes of a large replay:"))
    assert re.findall(r"`monitord ([\w-]+) ", line) == ["sink-sql", "read-ahead"], line


def test_sql_thread_keeps_the_read_ahead_worker_of_a_large_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--sql-thread`` says where the loader runs, not who reads the job files."""
    seen, _ = _children_of_a_large_replay(tmp_path, monkeypatch, "--sql-thread")
    assert _titles(seen) == [["monitord", "read-ahead"]], seen


@pytest.mark.parametrize(("options", "cores"), [(("--sql-thread", "--no-read-ahead"), 2), ((), 1)])
def test_a_large_replay_with_no_helpers_or_on_one_core_starts_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...], cores: int
) -> None:
    """``--sql-thread --no-read-ahead``, or a single usable core: the loader stays a thread of
    the daemon and the parser reads; no child of any kind (multiprocessing, subprocess) while
    it writes."""
    seen, threads = _children_of_a_large_replay(tmp_path, monkeypatch, *options, cores=cores)
    assert seen == {}
    assert {"sink-sql", "sink-dashboard"} <= set(threads), threads


def test_sql_process_starts_its_child_on_one_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--sql-process`` forces the child where the default would not (one usable core)."""
    seen, _ = _children_of_a_large_replay(tmp_path, monkeypatch, "--sql-process", cores=1)
    assert _titles(seen) == [["monitord", "sink-sql"]], seen
