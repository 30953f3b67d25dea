"""The script pool (doc §11.3/11.4) with real processes: bound, queueing, argv quoting,
timeouts that kill the whole process group, shutdown without zombies, the log file."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from notifications.logfile import NotificationsLog, format_record, log_path
from notifications.matching import Firing
from notifications.pool import Finished, ScriptPool


@pytest.fixture
async def make_pool():
    """Pools built through this are aborted at teardown, so a failing test cannot hang."""
    pools: list[ScriptPool] = []

    def make(**kwargs) -> ScriptPool:
        pool = ScriptPool(**kwargs)
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        await asyncio.wait_for(pool.abort(), 30)


def _firing(action: str, n: int = 0, subject: str = "job_a") -> Firing:
    env = {"PEGASUS_EVENT": "at_end", "PEGASUS_JOBID": subject, "PEGASUS_N": str(n)}
    return Firing(subject, "at_end", action, env)


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def _state(pid: int) -> str | None:
    """The process's state letter, or None if it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def _gone_or_not_ours(pid: int) -> bool:
    """Not running; a zombie is tolerated only when PID 1 (not us) must reap it."""
    state = _state(pid)
    return state is None or (state == "Z" and _ppid(pid) != os.getpid())


async def _wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


async def test_fifty_scripts_with_max_three_never_run_more_than_three(
    tmp_path: Path, make_pool
) -> None:
    (tmp_path / "run").mkdir()
    script = _script(
        tmp_path / "count.sh",
        'd="$1"; n="$2"\n'
        ': > "$d/run/$n"\n'
        'ls "$d/run" | wc -l > "$d/count.$n"\n'
        "sleep 0.1\n"
        'rm -f "$d/run/$n"\n'
        ': > "$d/done.$n"\n',
    )
    finished: list[Finished] = []

    async def record(done: Finished) -> None:
        finished.append(done)

    pool = make_pool(max_running=3, cwd=str(tmp_path), record=record)
    for n in range(50):
        pool.submit(_firing(f"{script} {tmp_path} {n}", n))
    assert len(pool.running) == 3 and len(pool.pending) == 47
    assert await pool.drain() is True
    counts = [int((tmp_path / f"count.{n}").read_text()) for n in range(50)]
    # Each script counts the scripts running (itself included) when it starts; a script only
    # leaves after removing its marker, so a count above 3 means a 4th ran at the same time.
    assert max(counts) <= 3, counts
    assert max(counts) >= 2, "the pool never ran scripts concurrently"
    assert sorted(int(p.name.split(".")[1]) for p in tmp_path.glob("done.*")) == list(range(50))
    assert len(finished) == 50 and {f.status for f in finished} == {0}
    assert sorted(int(f.firing.env["PEGASUS_N"]) for f in finished) == list(range(50))
    assert pool.peak_running == 3 and not pool.busy


async def test_arguments_with_quotes_and_spaces_arrive_intact(tmp_path: Path, make_pool) -> None:
    dump = tmp_path / "argv.py"
    dump.write_text(
        "import json, os, sys\n"
        "json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd(),"
        " 'env': {k: v for k, v in os.environ.items() if k.startswith('PEGASUS_')}},"
        " open(os.environ['OUT'], 'w'))\n"
    )
    out = tmp_path / "argv.json"
    action = (
        f'{sys.executable} {dump} "two  words" \'single quoted\' with\\ escape "" '
        "'it''s' \"a\\\"b\" '$HOME' a|b >not_a_redirect ; 'tab\there'"
    )
    pool = make_pool(max_running=2, cwd=str(tmp_path), base_env={**os.environ, "OUT": str(out)})
    pool.submit(_firing(action))
    await pool.drain()
    got = json.loads(out.read_text())
    assert got["argv"] == [
        "two  words",
        "single quoted",
        "with escape",
        "",
        "its",
        'a"b',
        "$HOME",
        "a|b",
        ">not_a_redirect",
        ";",
        "tab\there",
    ]
    assert got["cwd"] == str(tmp_path)
    assert got["env"] == {"PEGASUS_EVENT": "at_end", "PEGASUS_JOBID": "job_a", "PEGASUS_N": "0"}
    assert not (tmp_path / "not_a_redirect").exists()  # no shell


async def test_a_script_that_sleeps_forever_is_killed_with_its_children(
    tmp_path: Path, make_pool
) -> None:
    # The script ignores SIGTERM (so SIGKILL is needed) and leaves a child that sleeps too.
    script = _script(
        tmp_path / "hang.sh",
        'sleep 1000 &\necho $! > "$1/child.pid"\necho $$ > "$1/script.pid"\n'
        "trap '' TERM\nsleep 1000\n",
    )
    finished: list[Finished] = []

    async def record(done: Finished) -> None:
        finished.append(done)

    pool = make_pool(max_running=1, timeout=1, kill_grace=0.5, record=record)
    pool.submit(_firing(f"{script} {tmp_path}"))
    pool.submit(_firing(f"{script} {tmp_path}/second"))  # queued behind the first
    (tmp_path / "second").mkdir()
    assert await _wait_for(lambda: (tmp_path / "child.pid").exists())
    pids = [int((tmp_path / n).read_text()) for n in ("script.pid", "child.pid")]
    await asyncio.wait_for(pool.drain(), 20)
    pids += [int((tmp_path / "second" / n).read_text()) for n in ("script.pid", "child.pid")]
    assert await _wait_for(lambda: all(_gone_or_not_ours(p) for p in pids)), [
        (p, _state(p)) for p in pids
    ]
    assert _state(pids[0]) is None and _state(pids[2]) is None  # our children: reaped
    assert finished == []  # killed scripts get no log record (reference)
    assert pool.failed == 2 and not pool.busy


async def test_failures_are_logged_and_never_raise(tmp_path: Path, make_pool) -> None:
    finished: list[Finished] = []

    async def record(done: Finished) -> None:
        finished.append(done)

    pool = make_pool(max_running=2, record=record)
    pool.submit(_firing(f"{tmp_path}/does-not-exist arg"))
    pool.submit(_firing('"unbalanced quote'))
    pool.submit(_firing("   "))
    pool.submit(_firing(str(tmp_path)))  # a directory: permission denied
    pool.submit(_firing("/bin/sh -c 'echo out; echo err >&2; exit 3'"))
    pool.submit(_firing("/bin/sh -c 'kill -9 $$'"))
    await asyncio.wait_for(pool.drain(), 20)
    statuses = sorted(f.status for f in finished)
    assert statuses == [-9, 3]
    three = next(f for f in finished if f.status == 3)
    assert (three.stdout, three.stderr) == ("out\n", "err\n")
    assert pool.failed == 6 and pool.completed == 2


async def test_shutdown_terminates_running_skips_pending_and_leaves_no_zombie(
    tmp_path: Path, make_pool
) -> None:
    script = _script(tmp_path / "long.sh", 'echo $$ > "$1.pid"\nexec sleep 1000\n')
    pool = make_pool(max_running=3, timeout=0, kill_grace=0.5)
    for n in range(5):
        pool.submit(_firing(f"{script} {tmp_path}/s{n}", n))
    assert await _wait_for(lambda: all((tmp_path / f"s{n}.pid").exists() for n in range(3)))
    stop = asyncio.Event()
    stop.set()
    assert await pool.drain(stop) is False  # a stop wins over waiting
    await asyncio.wait_for(pool.abort(), 20)
    pids = [int((tmp_path / f"s{n}.pid").read_text()) for n in range(3)]
    assert all(_state(p) is None for p in pids), [(p, _state(p)) for p in pids]
    assert not (tmp_path / "s3.pid").exists() and not (tmp_path / "s4.pid").exists()
    assert not pool.busy


async def test_notifications_log_records_in_completion_order(tmp_path: Path, make_pool) -> None:
    path = log_path(str(tmp_path), None)
    assert path == str(tmp_path / "monitord-notifications.log")
    assert log_path("/run", "out") == "/run/out/monitord-notifications.log"
    notify_log = NotificationsLog(path)
    pool = make_pool(max_running=2, record=notify_log.write)
    pool.submit(_firing("/bin/sh -c 'sleep 0.5; echo slow'", subject="slow"))
    pool.submit(_firing("/bin/sh -c 'echo fast; exit 4'", subject="fast"))
    await pool.drain()
    notify_log.close()
    text = Path(path).read_text()
    records = text.split("-" * 80 + "\n")
    assert records[0] == "" and len(records) == 3
    assert "Notification event : fast - at_end\n" in records[1]
    assert "Notification status: 4\n" in records[1]
    assert records[1].endswith("stdout:\nfast\n\nstderr:\n\n\n")
    assert "Notification event : slow - at_end\n" in records[2]


def test_record_formats_full_and_short() -> None:
    firing = Firing(
        "wf-1",
        "start",
        "/bin/notify wfstart",
        {"PEGASUS_EVENT": "start", "PEGASUS_JOBID": "wf-1", "PEGASUS_WFID": "demo-0"},
    )
    done = Finished(firing, 0, "hello\n", "", 1.0, 1672531200.0)
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        assert format_record(done) == (
            "-" * 80 + "\n"
            "Notification time  : 2023-01-01T00:00:00+0000\n"
            "Notification event : wf-1 - start\n"
            "Notification action: /bin/notify wfstart\n"
            "Notification status: 0\n"
            "\n"
            "Notification environment\n"
            "PEGASUS_EVENT : start\n"
            "PEGASUS_JOBID : wf-1\n"
            "PEGASUS_WFID : demo-0\n"
            "\n"
            "stdout:\n"
            "hello\n"
            "\n"
            "stderr:\n"
            "\n"
            "\n"
        )
        assert format_record(done, full=False) == (
            "2023-01-01T00:00:00+0000 - wf-1 - start - /bin/notify wfstart - 0\n"
        )
    finally:
        os.environ.pop("TZ", None)
        time.tzset()


def test_zero_bound_is_refused() -> None:
    with pytest.raises(ValueError):
        ScriptPool(max_running=0)


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")
async def test_a_root_service_runs_scripts_as_the_submit_dirs_owner(make_pool) -> None:
    import pwd
    import shutil
    import tempfile

    nobody = pwd.getpwnam("nobody")
    base = Path(tempfile.mkdtemp(prefix="monitord-runas-", dir="/tmp"))  # pytest's is 0700
    try:
        base.chmod(0o755)
        out_dir = base / "out"
        out_dir.mkdir()
        out_dir.chmod(0o777)
        script = _script(base / "whoami.sh", f"id -u > {out_dir}/uid; id -g > {out_dir}/gid\n")
        pool = make_pool(max_running=1, timeout=30, run_as=(nobody.pw_uid, nobody.pw_gid))
        pool.submit(_firing(script))
        await asyncio.wait_for(pool.drain(), 30)
        assert (out_dir / "uid").read_text().strip() == str(nobody.pw_uid)
        assert (out_dir / "gid").read_text().strip() == str(nobody.pw_gid)
    finally:
        shutil.rmtree(base)
