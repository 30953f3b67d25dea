"""A replay's helper processes start before the daemon loads its modules (issue 30,
bench/README.md "Issue 30, eleventh session: small30h"): as soon as the command line is read
(``monitord/daemon/prestart.py``), so that their interpreters and modules load on the second
core meanwhile; the replay's read-ahead and SQL loader then take them, and one not taken ends
with the command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from monitord.daemon.prestart import SQL_SCHEMES
from monitord.tools.synthetic import generate
from sinks.runtime.child import Child, close_spares, prestart
from sinks.runtime.process_sink import SERVE as SQL_SERVE
from tests.conftest import CORPUS_TZ
from tests.test_replay_children import children


def test_the_sql_schemes_are_the_sql_factorys() -> None:
    from sinks.sql.factory import SQLFactory

    assert SQL_SCHEMES == SQLFactory.schemes


ECHO = "tests.test_prestart:echo_modules"


def echo_modules(conn: object, payload: list[str]) -> None:
    """A child's serve function: answers which of ``payload``'s modules it had loaded."""
    import sys

    conn.send([m for m in payload if m in sys.modules])  # type: ignore[attr-defined]
    conn.recv()  # type: ignore[attr-defined]  # until the pipe closes


@pytest.fixture
def in_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the child imports tests.*


@pytest.mark.usefixtures("in_checkout")
def test_a_prestarted_child_is_the_one_taken_with_its_modules_loaded() -> None:
    before = set(children())
    prestart(ECHO, ("colorsys",))
    (spare,) = set(children()) - before
    child = Child(ECHO, ["colorsys", "wave"], title="monitord test", level=20)
    try:
        assert child.start() == ["colorsys"]  # loaded before the payload came; not "wave"
        assert child.pid == spare
    finally:
        child.close()
    assert set(children()) == before


@pytest.mark.usefixtures("in_checkout")
def test_a_child_not_taken_ends_with_close_spares() -> None:
    before = set(children())
    prestart(ECHO)
    assert len(set(children()) - before) == 1
    close_spares()
    assert set(children()) == before
    child = Child(ECHO, [], title="monitord test", level=20)
    try:
        assert child.start() == []  # a new one: none was left to take
    finally:
        child.close()


def _helpers_when_settling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str
) -> tuple[list[str], list[str]]:
    """A large replay (the bound lowered to it) on an idle two-core machine: the child
    processes alive as the daemon starts loading its sinks (``startup.settle``), and those
    it had while its sinks wrote."""
    from monitord import cli
    from monitord.cli import startup
    from monitord.daemon import outputs
    from sinks.runtime.process_sink import ProcessSink

    out = generate(tmp_path / "run", 200, seed=3, name="big").dagman_out
    monkeypatch.setattr(outputs, "PROCESS_FROM", out.stat().st_size)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    before = children()
    settling: list[str] = []
    writing: dict[int, str] = {}
    settle, write = startup.settle, ProcessSink.write_batch

    def settle_seen() -> None:
        settling.extend(t for pid, t in children().items() if pid not in before)
        settle()

    def write_seen(self: ProcessSink, events: object) -> None:
        writing.update((pid, t) for pid, t in children().items() if pid not in before and t)
        write(self, events)  # type: ignore[arg-type]

    monkeypatch.setattr(startup, "settle", settle_seen)
    monkeypatch.setattr(ProcessSink, "write_batch", write_seen)
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    dest = ["-d", f"sqlite:///{tmp_path / 'w.db'}"]
    assert cli.main(["replay", "-q", "--no-dashboard", *options, *dest, out.name]) == 0
    assert set(children()) <= set(before)  # every helper ended with the command
    return settling, sorted(" ".join(t.split()[:2]) for t in writing.values())


def test_a_large_replays_helpers_start_before_the_daemon_loads_its_sinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settling, writing = _helpers_when_settling(tmp_path, monkeypatch)
    assert len(settling) == 2 and all("sinks.runtime.child" in t for t in settling), settling
    assert writing == ["monitord read-ahead", "monitord sink-sql"]  # the same two, taken


@pytest.mark.parametrize(
    ("dest", "started"), [("file://{}/events.bp", []), ("sqlite:///{}/w.db", [SQL_SERVE])]
)
def test_a_sql_child_is_started_ahead_for_a_sql_destination_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dest: str, started: list[str]
) -> None:
    from monitord import cli
    from monitord.daemon import prestart as prestarting

    asked: list[str] = []
    monkeypatch.setattr(prestarting, "prestart", lambda serve, preload=(): asked.append(serve))
    out = generate(tmp_path / "run", 20, seed=3, name="small").dagman_out
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    argv = ["replay", "-q", "--no-dashboard", "--sql-process", "--no-read-ahead"]
    assert cli.main([*argv, "-d", dest.format(tmp_path), out.name]) == 0
    assert asked == started
