"""Ctrl-C or SIGTERM on a replay (issue 29): it ends within 2 s of the signal at any size, with
the shell's status for the signal (130, 143), no traceback, and one line saying what was written
and that a rerun starts over; the rerun then leaves the database and jobstate.log of an
uninterrupted replay (stampede-diff).

Each replay runs in a process group of its own and gets the signal there, as a terminal's
Ctrl-C does, at a seeded moment after it has started writing (``MONITORD_INTERRUPT_SEED``).
The 2 s bound is stretched only by how far the machine is loaded beyond its cores (the
1-minute load average over the CPU count), so that a busy CI host does not fail it; the
time each stop took is printed (``-s``).  The same holds with the SQL loader in a child
process as in a thread (issue 30: ``--sql-process``, ``--sql-thread``; the default picks
one of them by size, cores and load), and the loader child is gone when the replay has
ended.  Which replay starts which child process: tests/test_replay_children.py.
"""

from __future__ import annotations

import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from monitord.tools.synthetic import generate
from tests.conftest import CORPUS_TZ, STAMPEDE_DIFF
from tests.test_cli_commands import ANSI, MONITORD, PEGASUS_MONITORD

SEED = int(os.environ.get("MONITORD_INTERRUPT_SEED", "29"))
BOUND = 2.0  # seconds from the signal to the exit (issue 29)
LINE = re.compile(r"^(monitord replay|pegasus-monitord): replay interrupted by (SIGINT|SIGTERM): ")
# the latest moment of the signal, in seconds after the replay began writing, per size (the
# smallest is over in well under a second after its first chunk)
SIZES = {300: 0.05, 3000: 1.0}


@dataclass(frozen=True)
class Workflow:
    dagman_out: Path
    expected_db: Path
    expected_jobstate: Path
    home: Path


def env(home: Path) -> dict[str, str]:
    return {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}


def command(form: str, db: Path, dagman_out: Path) -> list[str]:
    """``replay``/``dropin``; ``+sql-process`` / ``+sql-thread``: the database written by a
    child process / a thread, whatever the size."""
    dest = ["-d", f"sqlite:///{db}"]
    if "+" in form:
        dest.append("--" + form.split("+")[1])
    if form.startswith("replay"):
        return [*MONITORD, "replay", *dest, dagman_out.name]
    return [*PEGASUS_MONITORD, "-r", *dest, dagman_out.name]


def loader_children(db: Path) -> list[int]:
    """The --sql-process children writing ``db`` (their title names it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if title.startswith(b"monitord sink-sql") and str(db).encode() in title:
            found.append(int(pid))
    return found


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[int], Workflow]]:
    """A generated workflow of each size, replayed once without interruption (the expected
    database and jobstate.log), made on first use."""
    made: dict[int, Workflow] = {}

    def get(jobs: int) -> Workflow:
        if jobs not in made:
            root = tmp_path_factory.mktemp(f"wf{jobs}")
            out = generate(root / "run", jobs, seed=SEED, retry_fraction=0.05, name="ctrlc")
            home = root / "home"
            home.mkdir()
            db = root / "expected.db"
            proc = subprocess.run(
                command("replay", db, out.dagman_out),
                cwd=out.dagman_out.parent,
                env=env(home),
                capture_output=True,
                text=True,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            jobstate = root / "expected.jobstate.log"
            jobstate.write_bytes((out.dagman_out.parent / "jobstate.log").read_bytes())
            made[jobs] = Workflow(out.dagman_out, db, jobstate, home)
        return made[jobs]

    yield get


def bound() -> float:
    """2 s, stretched by the load beyond the machine's cores (see the module's docstring)."""
    return BOUND * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def wait_for_writing(run_dir: Path, alive: Callable[[], bool]) -> None:
    """Until the replay has fed its first chunk (jobstate.log has lines)."""
    jobstate = run_dir / "jobstate.log"
    deadline = time.monotonic() + 300
    while not (jobstate.exists() and jobstate.stat().st_size > 0):
        assert alive(), "the replay ended before it wrote anything"
        assert time.monotonic() < deadline, "the replay did not start writing"
        time.sleep(0.005)


def check_stop(status: int, sig: int, took: float, limit: float, stderr: str) -> None:
    print(f"\n{signal.Signals(sig).name}: exit {status} {took:.2f} s after the signal")
    assert status == 128 + sig, stderr[-3000:]
    assert took <= limit, f"{took:.1f} s after the signal (bound {limit:.1f} s)\n{stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [x for x in stderr.splitlines() if LINE.match(x.strip())]
    assert len(lines) == 1, stderr[-3000:]
    assert "events to sqlite:///" in lines[0] and "Run the same command again" in lines[0]
    assert not re.search(r"\[(error|critical)", stderr), stderr[-3000:]


def check_rerun(wf: Workflow, cmd: list[str], db: Path) -> None:
    """The same command again leaves what an uninterrupted replay leaves."""
    again = subprocess.run(
        cmd, cwd=wf.dagman_out.parent, env=env(wf.home), capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr[-3000:]
    got = diff(str(wf.expected_db), str(db))
    assert got.returncode == 0, f"the rerun's database differs\n{got.stdout[-3000:]}"
    got = diff("--jobstate", str(wf.expected_jobstate), str(wf.dagman_out.parent / "jobstate.log"))
    assert got.returncode == 0, f"the rerun's jobstate.log differs\n{got.stdout[-3000:]}"


# 3,000 jobs is the largest size: its batches are already the largest (5,000 events) and the
# memory queue is bounded in batches, so a larger replay has no more in hand at the signal
# (the stop drops the queue: tests/test_runtime_executors.py). ``+sql-thread`` and
# ``+sql-process`` force either loader, whatever the size and the load.
@pytest.mark.parametrize(
    ("jobs", "form", "sig"),
    [
        (300, "replay", signal.SIGINT),
        (300, "dropin", signal.SIGINT),
        (3000, "replay+sql-thread", signal.SIGINT),
        (3000, "dropin", signal.SIGTERM),
        (3000, "replay+sql-process", signal.SIGINT),
        (3000, "dropin+sql-process", signal.SIGTERM),
    ],
)
def test_an_interrupted_replay_ends_at_once_and_its_rerun_is_whole(
    workflows: Callable[[int], Workflow],
    tmp_path: Path,
    jobs: int,
    form: str,
    sig: int,
) -> None:
    wf = workflows(jobs)
    run_dir = wf.dagman_out.parent
    (run_dir / "jobstate.log").unlink(missing_ok=True)  # the last run's: wait for this one's
    db = tmp_path / "got.db"
    cmd = command(form, db, wf.dagman_out)
    delay = random.Random(f"{SEED}-{jobs}-{form}-{sig}").uniform(0.0, SIZES[jobs])
    with open(tmp_path / "stderr", "w+") as err:
        proc = subprocess.Popen(
            cmd,
            cwd=run_dir,
            env=env(wf.home),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        try:
            wait_for_writing(run_dir, lambda: proc.poll() is None)
            time.sleep(delay)
            assert proc.poll() is None, "the replay ended before the signal"
            limit = bound()
            signalled = time.monotonic()
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=limit + 30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {limit + 30:.0f} s after {signal.Signals(sig).name}")
            took = time.monotonic() - signalled
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        err.seek(0)
        stderr = err.read()
    check_stop(proc.returncode, sig, took, limit, stderr)
    assert loader_children(db) == [], "the loader child outlived the replay"
    check_rerun(wf, cmd, db)


def test_ctrl_c_on_a_terminal(workflows: Callable[[int], Workflow], tmp_path: Path) -> None:
    """Ctrl-C typed on the replay's terminal (the progress bar showing): the same stop, the line
    below the bar."""
    wf = workflows(3000)
    run_dir = wf.dagman_out.parent
    (run_dir / "jobstate.log").unlink(missing_ok=True)
    db = tmp_path / "got.db"
    cmd = command("replay", db, wf.dagman_out)
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(run_dir)
        os.environ.update(env(wf.home))
        os.execv(cmd[0], cmd)
    out = b""

    def read(timeout: float) -> bool:
        nonlocal out
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        out += data
        return bool(data)

    took, limit = float("inf"), bound()
    try:
        jobstate = run_dir / "jobstate.log"
        deadline = time.monotonic() + 300
        while not (jobstate.exists() and jobstate.stat().st_size > 0):
            assert read(0.005) and time.monotonic() < deadline, out.decode(errors="replace")
        delay = random.Random(f"{SEED}-pty").uniform(0.0, SIZES[3000])
        end = time.monotonic() + delay
        while time.monotonic() < end:
            assert read(0.005), "the replay ended before Ctrl-C"
        limit = bound()
        signalled = time.monotonic()
        os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to the foreground group
        give_up = signalled + limit + 30
        while time.monotonic() < give_up and read(0.05):
            pass
        if time.monotonic() >= give_up:
            pytest.fail(f"still running {limit + 30:.0f} s after Ctrl-C")
        _, status = os.waitpid(pid, 0)
        took = time.monotonic() - signalled
        pid = 0
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    text = ANSI.sub("", out.decode("utf-8", "replace")).replace("\r", "\n")
    check_stop(os.waitstatus_to_exitcode(status), signal.SIGINT, took, limit, text)
    check_rerun(wf, cmd, db)
