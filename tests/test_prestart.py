"""A replay's helper processes start before the daemon loads its modules (issue 30,
bench/README.md "Issue 30, eleventh session: small30h"): as soon as the command line is read
(``monitord/daemon/prestart.py``), so that their interpreters and modules load on the second
core meanwhile; the replay's read-ahead and SQL loader then take them, and one not taken ends
with the command.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from monitord.daemon.config import MonitorConfig
from monitord.daemon.prestart import READ_AHEAD_SERVE, SQL_SERVE
from monitord.tools.synthetic import generate
from sinks.runtime.child import Child, close_spares, prestart
from tests.conftest import CORPUS_TZ
from tests.test_replay_children import children


def test_the_helpers_are_those_of_their_modules() -> None:
    from monitord.daemon import readahead
    from sinks.runtime import process_sink

    assert (SQL_SERVE, READ_AHEAD_SERVE) == (process_sink.SERVE, readahead.SERVE)


def _ask(code: str) -> list[str]:
    """What ``code`` prints in a fresh interpreter (this one has SQLAlchemy loaded)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_deciding_the_helpers_loads_no_sqlalchemy() -> None:
    """The SQL schemes come from the SQL sink's package without its SQLAlchemy, so the helpers
    start before the daemon loads it; and they are the SQL factory's own list."""
    light = "import sys, monitord.daemon.prestart as p; print('sqlalchemy' in sys.modules)"
    assert _ask(light) == ["False"]
    same = (
        "import monitord.daemon.prestart as p, sinks.sql.factory as f;"
        "print(p.SQL_SCHEMES is f.SQLFactory.schemes)"
    )
    assert _ask(same) == ["True"]


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


@pytest.mark.usefixtures("in_checkout")
@pytest.mark.parametrize("same", [True, False])
def test_a_child_prestarted_with_its_payload_is_taken_only_for_that_payload(same: bool) -> None:
    """Told its payload as it started, it serves at once; a Child with that payload takes it
    (the payload not sent twice), one with another starts a new child and this one ends."""
    before = set(children())
    told = Child(ECHO, ["colorsys"], title="monitord test", level=20)
    prestart(ECHO, ("colorsys",), first=told.first)
    (spare,) = set(children()) - before
    child = told if same else Child(ECHO, ["wave"], title="monitord test", level=20)
    try:
        assert child.start() == (["colorsys"] if same else [])
        assert (child.pid == spare) is same
        if not same:
            assert spare not in children()  # the one told another payload ended
    finally:
        child.close()
    assert set(children()) == before


BUSY = "tests.test_prestart:busy"


def busy(conn: object, payload: None) -> None:
    """A child's serve function at work on its payload, not reading its pipe."""
    while True:
        time.sleep(1)


@pytest.mark.usefixtures("in_checkout")
def test_a_child_told_its_payload_and_never_taken_ends_at_once_with_close_spares() -> None:
    """A replay interrupted before it took its worker: the worker, at work on its plan, does
    not hold the command's end (it is killed; without a payload it ends as its pipe closes)."""
    before = set(children())
    prestart(BUSY, first=Child(BUSY, None, title="monitord test", level=20).first)
    assert len(set(children()) - before) == 1
    closing = threading.Thread(target=close_spares, daemon=True)
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "close_spares waited for a busy child"
    assert set(children()) == before


NICENESS = "tests.test_prestart:niceness"


def niceness(conn: object, payload: None) -> None:
    """A child's serve function: answers its niceness and its autogroup's (None: none)."""
    import os

    try:
        with open("/proc/self/autogroup") as fh:
            group: int | None = int(fh.read().split()[-1])
    except OSError:
        group = None
    conn.send((os.nice(0), group))  # type: ignore[attr-defined]
    conn.recv()  # type: ignore[attr-defined]  # until the pipe closes


@pytest.mark.usefixtures("in_checkout")
def test_a_helper_prestarted_nicer_yields_to_the_daemon_in_its_own_autogroup_too() -> None:
    import os

    prestart(NICENESS, nice=3)
    child = Child(NICENESS, None, title="monitord test", level=20)
    try:
        nice, group = child.start()
    finally:
        child.close()
    assert nice == min(19, os.nice(0) + 3)
    assert group is None or group == 3  # alone in a new session: a new autogroup, at 0 + 3


def test_the_helpers_are_nicer_only_on_a_quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from monitord.daemon import outputs
    from monitord.daemon import prestart as pre

    monkeypatch.setattr(outputs, "usable_cores", lambda: 2)
    monkeypatch.setattr(outputs.os, "getloadavg", lambda: (0.4, 0.0, 0.0))
    assert pre.helper_nice() == pre.HELPER_NICE
    monkeypatch.setattr(outputs.os, "getloadavg", lambda: (1.8, 0.0, 0.0))
    assert pre.helper_nice() == 0  # a busy machine: they would yield to everyone else too
    monkeypatch.setattr(outputs, "usable_cores", lambda: 1)
    monkeypatch.setattr(outputs.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert pre.helper_nice() == 0  # one core: the daemon needs it as much as they do


def test_a_child_refused_a_lower_priority_still_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    from sinks.runtime import child as child_module

    def refused(increment: int) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(child_module.os, "nice", refused)
    child_module._lower_priority(5)  # no exception: the child serves at the daemon's priority


def _helpers_when_settling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_settle: Callable[[], None] = lambda: None
) -> tuple[dict[int, str], dict[int, str]]:
    """A large replay (the bound lowered to it) on an idle two-core machine: the child
    processes alive as the daemon starts loading its sinks (``startup.settle``, where
    ``on_settle`` runs first), and those the replay's helpers took (pid -> what they serve)."""
    from monitord import cli
    from monitord.cli import startup
    from monitord.daemon import outputs

    out = generate(tmp_path / "run", 200, seed=3, name="big").dagman_out
    monkeypatch.setattr(outputs, "PROCESS_FROM", out.stat().st_size)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    before = children()
    settling: dict[int, str] = {}
    taken: dict[int, str] = {}
    settle, start = startup.settle, Child.start

    def settle_seen(config: MonitorConfig) -> None:
        settling.update((pid, t) for pid, t in children().items() if pid not in before)
        on_settle()
        settle(config)

    def start_seen(self: Child, timeout: float = 60.0) -> object:
        answer = start(self, timeout)
        taken[self.pid or 0] = self.serve
        return answer

    monkeypatch.setattr(startup, "settle", settle_seen)
    monkeypatch.setattr(Child, "start", start_seen)
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    dest = ["-d", f"sqlite:///{tmp_path / 'w.db'}"]
    assert cli.main(["replay", "-q", "--no-dashboard", *dest, out.name]) == 0
    assert set(children()) <= set(before)  # every helper ended with the command
    return settling, taken


def test_a_large_replays_helpers_start_before_the_daemon_loads_its_sinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settling, taken = _helpers_when_settling(tmp_path, monkeypatch)
    assert len(settling) == 2 and all("sinks.runtime.child" in t for t in settling.values()), (
        settling
    )
    assert sorted(taken.values()) == sorted([READ_AHEAD_SERVE, SQL_SERVE])
    assert set(taken) == set(settling)  # the helpers are the two started ahead


def test_the_read_ahead_worker_has_its_plan_before_the_daemon_loads_its_sinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its plan is sent as it is prestarted (its title, set once it has its plan, shows while
    the daemon has not loaded its sinks): it scans dagman.out meanwhile."""
    titled: list[str] = []

    def wait_for_the_title() -> None:
        for _ in range(3000):  # 30 s: without the plan sent ahead, never
            titled.extend(t for t in children().values() if t.startswith("monitord read-ahead "))
            if titled:
                return
            time.sleep(0.01)

    _, taken = _helpers_when_settling(tmp_path, monkeypatch, wait_for_the_title)
    assert titled, "the worker had no plan before the daemon loaded its sinks"
    assert sorted(taken.values()) == sorted([READ_AHEAD_SERVE, SQL_SERVE])


@pytest.mark.parametrize(
    ("dest", "started"), [("file://{}/events.bp", []), ("sqlite:///{}/w.db", [SQL_SERVE])]
)
def test_a_sql_child_is_started_ahead_for_a_sql_destination_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dest: str, started: list[str]
) -> None:
    from monitord import cli
    from monitord.daemon import prestart as prestarting

    asked: list[str] = []
    monkeypatch.setattr(
        prestarting, "prestart", lambda serve, preload=(), nice=0, first=None: asked.append(serve)
    )
    out = generate(tmp_path / "run", 20, seed=3, name="small").dagman_out
    monkeypatch.setenv("TZ", CORPUS_TZ)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(out.parent)
    argv = ["replay", "-q", "--no-dashboard", "--sql-process", "--no-read-ahead"]
    assert cli.main([*argv, "-d", dest.format(tmp_path), out.name]) == 0
    assert asked == started


AT_EXIT = "tests.test_prestart:mark_at_exit"


def mark_at_exit(conn: object, path: str) -> None:
    """A child's serve function whose atexit hook writes ``path``."""
    import atexit
    from pathlib import Path

    atexit.register(Path(path).write_text, "teardown")
    conn.send("ok")  # type: ignore[attr-defined]


@pytest.mark.usefixtures("in_checkout")
@pytest.mark.parametrize("teardown", [True, False])
def test_a_child_skips_the_interpreters_teardown_only_when_told(
    tmp_path: Path, teardown: bool
) -> None:
    """The project's helpers (``teardown=False``) exit at once once served; any other child
    (a process-isolated plugin's) keeps the teardown and its atexit hooks."""
    mark = tmp_path / "mark"
    child = Child(AT_EXIT, str(mark), title="monitord test", level=20, teardown=teardown)
    assert child.start() == "ok"
    child.close()
    assert child.exit_code == 0
    assert mark.exists() is teardown
