"""``monitord serve``: configuration, the shared watcher and sink lanes, the attach policy,
and a service following workflows that come in through the socket, a watched root and the
``pegasus-monitord -N`` drop-in, each ending with the replay's database.

The 50-workflow run with a SIGKILL in the middle is in test_service_restart.py; the helpers
here (service start, players, replays, comparisons) are shared with it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from monitord.service.config import ConfigError, load_config, parse_config
from tests.conftest import CORPUS, CORPUS_TZ, PROJECT, STAMPEDE_DIFF, require_corpus
from tests.proxies import free_port

PY = sys.executable


# ---------------------------------------------------------------------------- helpers


def write_config(
    tmp: Path, *, watch: Path | None = None, extra: str = "", http_port: int | None = None
) -> Path:
    """The service's configuration for a test; ``http_port``: its status page on
    127.0.0.1:``http_port`` (none without)."""
    cfg = tmp / "service.toml"
    listen = "" if http_port is None else f"127.0.0.1:{http_port}"
    text = f"""
[service]
socket = "{tmp / "monitord.sock"}"
state_dir = "{tmp / "state"}"
log_format = "json"
log_level = "info"

[http]
listen = "{listen}"

[defaults]
dashboard = false

[limits]
scan_interval_seconds = 0.5
idle_check_seconds = 30
{extra}
"""
    if watch is not None:
        text += f'\n[[watch]]\nroot = "{watch}"\nmax_depth = 3\n'
    cfg.write_text(text)
    return cfg


def service_env(tmp: Path, cfg: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "TZ": CORPUS_TZ,
        "HOME": str(home),
        "MONITORD_SERVICE_CONFIG": str(cfg),
        # the project first, then what the tests added (tests/plugin_fixtures.py's site)
        "PYTHONPATH": os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH")) if p),
    }


def start_service(cfg: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    sock = load_config(str(cfg)).socket
    fh = log.open("ab")
    proc = subprocess.Popen(
        [PY, "-m", "monitord.cli", "serve", "--config", str(cfg)],
        env=env,
        stdout=fh,
        stderr=fh,
    )
    fh.close()
    deadline = time.time() + 30
    while time.time() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        if _answers(sock):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the service did not come up:\n" + log.read_text()[-3000:])


def _answers(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(path)
            s.sendall(b'{"op": "ping"}\n')
            return b"pong" in s.makefile("rb").readline()
    except OSError:
        return False


def stop_service(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(timeout=120)


def generate_source(dest: Path, jobs: int, seed: int) -> Path:
    """A generated finished workflow whose braindump submit_dir no longer exists.

    (Generated in place and renamed: a replay then writes its DB into the directory it
    reads, not into the generation path, exactly like a copied corpus sample.)
    """
    from monitord.tools.synthetic import generate

    staging = dest.parent / (dest.name + ".gen")
    generate(staging, jobs, seed=seed, retry_fraction=0.1, name=f"gen{seed}")
    staging.rename(dest)
    return dest


def corpus_source(sample: str, dest: Path) -> Path:
    from tests.conftest import copy_submit_dir

    copy_submit_dir(CORPUS / sample / "input", dest)
    return dest


def replay_all(dirs: Sequence[Path], env: dict[str, str], jobs: int = 4) -> ReplayBatch:
    """Replay every directory with ``pegasus-monitord -r`` (a few interpreters, in the background)."""
    return ReplayBatch([_replay(list(dirs)[i::jobs], env) for i in range(jobs) if dirs[i::jobs]])


class ReplayBatch:
    def __init__(self, procs: list[subprocess.Popen[str]]) -> None:
        self.procs = procs
        self.returncode: int | None = None

    def communicate(self, timeout: float) -> tuple[str, str]:
        errors = []
        self.returncode = 0
        for proc in self.procs:
            _, err = proc.communicate(timeout=timeout)
            if proc.returncode != 0:
                self.returncode = proc.returncode
                errors.append(err)
        return "", "\n".join(errors)


def _replay(dirs: Sequence[Path], env: dict[str, str]) -> subprocess.Popen[str]:
    script = (
        "import sys, glob\n"
        "from monitord.cli import main\n"
        "for d in sys.argv[1:]:\n"
        "    out = glob.glob(d + '/*.dag.dagman.out')[0]\n"
        "    code = main(['--no-dashboard', '-r', out])\n"
        "    assert code == 0, (d, code)\n"
    )
    replay_env = {k: v for k, v in env.items() if k != "MONITORD_SERVICE_CONFIG"}
    return subprocess.Popen(
        [PY, "-c", script, *map(str, dirs)],
        env=replay_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def db_of(run: Path) -> Path:
    dbs = sorted(run.glob("*.stampede.db"))
    assert dbs, f"no database in {run}"
    return dbs[0]


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(STAMPEDE_DIFF), *args], capture_output=True, text=True)


def assert_same_outputs(expected_db: Path, expected_js: Path, run: Path) -> None:
    got = diff(str(expected_db), str(db_of(run)))
    assert got.returncode == 0, f"{run}: database differs\n{got.stdout[-3000:]}"
    got = diff("--jobstate", str(expected_js), str(run))
    assert got.returncode == 0, f"{run}: jobstate.log differs\n{got.stdout[-3000:]}"


def wait_until(predicate, timeout: float, what: str, log: Path | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    tail = log.read_text()[-4000:] if log is not None and log.exists() else ""
    raise AssertionError(f"timed out waiting for {what}\n{tail}")


def finished(run: Path) -> bool:
    return (run / "monitord.done").exists() and not (run / "monitord.recover").exists()


def attach(dagman_out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "monitord.cli", "attach", *extra, str(dagman_out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def dropin(dagman_out: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PY, "-m", "monitord.cli", "-N", dagman_out.name],
        cwd=dagman_out.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# ---------------------------------------------------------------------------- configuration


def test_example_configuration_loads() -> None:
    cfg = load_config(str(PROJECT / "conf" / "monitord-service.toml"))
    assert cfg.socket == "/run/monitord/monitord.sock"
    assert cfg.http_listen == "127.0.0.1:9175"
    assert cfg.log_format == "json"
    assert cfg.limits.sink_threads == 4


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"service": {"sockt": "/x"}}, "[service] sockt: unknown key"),
        ({"limits": {"sink_threads": 0}}, "[limits] sink_threads: must be between 1"),
        ({"service": {"log_format": "xml"}}, "[service] log_format: must be one of json"),
        ({"http": {"listen": "localhost"}}, "[http] listen: must be HOST:PORT"),
        ({"defaults": {"dests": "sqlite:///x"}}, "[defaults] dests: must be a list"),
        ({"watch": [{"pattern": "*.dagman.out"}]}, "[[watch]] #1 root: missing"),
        ({"watch": [{"root": "/x", "depth": 2}]}, "[[watch]] #1 depth: unknown key"),
        ({"servce": {}}, "[servce]: unknown section"),
        ({"defaults": {"no_events": "yes"}}, "[defaults] no_events: must be true or false"),
    ],
)
def test_configuration_errors_name_the_key(doc: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(doc, "svc.toml")
    assert message in str(err.value)
    assert str(err.value).startswith("svc.toml: ")


def test_serve_rejects_a_bad_configuration_with_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[limits]\nworker_threads = "many"\n')
    proc = subprocess.run(
        [PY, "-m", "monitord.cli", "serve", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "[limits] worker_threads: must be an integer" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------- watcher


async def test_one_watcher_wakes_only_the_changed_file(tmp_path: Path) -> None:
    from monitord.service.watcher import FileWatcher

    watcher = FileWatcher(idle_seconds=30)
    watcher.start()
    try:
        a, b = tmp_path / "a" / "x.dagman.out", tmp_path / "b" / "y.dagman.out"
        for p in (a, b):
            p.parent.mkdir()
            watcher.add(str(p))
        assert watcher.inotify and watcher.watched_directories() == 2
        wait_a = asyncio.create_task(watcher.wait(str(a), 30))
        wait_b = asyncio.create_task(watcher.wait(str(b), 30))
        await asyncio.sleep(0.05)
        a.write_text("created\n")  # a file that did not exist yet: its directory is watched
        await asyncio.wait_for(wait_a, 2)
        await asyncio.sleep(0.1)
        assert not wait_b.done()
        # A change while nobody waits is not lost: the next wait returns at once.
        with b.open("a") as fh:
            fh.write("line\n")
        await asyncio.wait_for(wait_b, 2)
        with a.open("a") as fh:
            fh.write("more\n")
        await asyncio.sleep(0.1)
        await asyncio.wait_for(watcher.wait(str(a), 30), 1)
    finally:
        watcher.close()


async def test_watcher_polls_when_inotify_is_off(tmp_path: Path) -> None:
    from monitord.service.watcher import FileWatcher

    watcher = FileWatcher(poll_seconds=0.05, idle_seconds=30)
    watcher.start(inotify=False)
    try:
        f = tmp_path / "z.dagman.out"
        watcher.add(str(f))
        assert watcher.polled_files() == 1
        waiting = asyncio.create_task(watcher.wait(str(f), 30))
        await asyncio.sleep(0.1)
        f.write_text("x\n")
        await asyncio.wait_for(waiting, 2)
    finally:
        watcher.close()


# ---------------------------------------------------------------------------- sink lanes


class _RecordingSink:
    def __init__(self, name: str, *, fail: Exception | None = None, delay: float = 0.0) -> None:
        self.name = name
        self.fail = fail
        self.delay = delay
        self.batches: list[int] = []
        self.opened = self.closed = False

    def open(self) -> None:
        self.opened = True

    def write_batch(self, events) -> None:  # type: ignore[no-untyped-def]
        if self.delay:
            time.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        self.batches.append(len(events))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_a_failing_sink_does_not_stop_the_others_on_its_lane() -> None:
    from monitord.core.events import make_event
    from monitord.service.sinkpool import SinkPool
    from sinks.runtime.base import SinkError

    pool = SinkPool(local_lanes=1)
    try:
        good, bad = _RecordingSink("good"), _RecordingSink("bad", fail=SinkError("boom"))
        good_set = pool.sink_set("/a/x.dagman.out", "wf-a")([good])
        bad_set = pool.sink_set("/b/y.dagman.out", "wf-b")([bad])
        assert good_set.handles[0].lane is bad_set.handles[0].lane
        batch = [make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0})]
        for _ in range(10):
            bad_set.publish(batch)
            good_set.publish(batch)
        good_set.flush()
        bad_set.flush()
        assert good.batches == [1] * 10
        assert bad.batches == [] and bad_set.failed and not good_set.failed
        assert pool.local[0].stats.failures == 1
        good_set.close()
        bad_set.close()
        assert good.closed and bad.closed
    finally:
        pool.close()


def test_a_slow_workflow_shares_its_lane_round_robin() -> None:
    """Batches of a busy workflow do not queue up in front of another workflow's batch."""
    from monitord.core.events import make_event
    from monitord.service.sinkpool import SinkPool

    pool = SinkPool(local_lanes=1)
    try:
        slow, quick = _RecordingSink("slow", delay=0.05), _RecordingSink("quick")
        slow_set = pool.sink_set("/a", "a")([slow])
        quick_set = pool.sink_set("/b", "b")([quick])
        batch = [make_event("xwf.start", {"xwf.id": "u", "ts": 1, "restart_count": 0})]
        feeder = threading.Thread(target=lambda: [slow_set.publish(batch) for _ in range(40)])
        feeder.start()
        time.sleep(0.1)
        t0 = time.monotonic()
        quick_set.publish(batch)
        quick_set.flush()
        waited = time.monotonic() - t0
        feeder.join()
        slow_set.flush()
        assert quick.batches == [1] and len(slow.batches) == 40
        # at most a few slow batches (its bounded queue) ran before the quick one: not 40
        assert waited < 0.05 * 10, waited
    finally:
        pool.close()


def test_sql_engines_are_shared_per_server_and_not_for_sqlite(tmp_path: Path) -> None:
    from monitord.service.sinkpool import SinkPool, share_key
    from sinks.sql import SQLSink

    pool = SinkPool(local_lanes=2)
    try:
        a = SQLSink("postgresql://u:secret@db.example/stampede")
        b = SQLSink("postgresql://u:secret@db.example/stampede")
        c = SQLSink(f"sqlite:///{tmp_path}/w.db")
        assert share_key(a) == share_key(b) and "secret" not in str(share_key(a))
        assert share_key(c) is None
        set_a = pool.sink_set("/w/a", "a")([a])
        set_b = pool.sink_set("/w/b", "b")([b])
        assert set_a.handles[0].lane is set_b.handles[0].lane
        assert set_a.handles[0].lane not in pool.local
        engine = pool.engines(a.server_url)
        assert pool.engines(b.server_url) is engine
        assert pool.engines(c._url) is not pool.engines(c._url)  # sqlite: its own, unpooled
        set_a.close()
        set_b.close()
    finally:
        pool.close()


# ---------------------------------------------------------------------------- attach policy


def test_attach_policy(tmp_path: Path) -> None:
    from monitord.daemon.monitor import MonitorConfig
    from monitord.service.peer import NotAllowed, check_attach

    user, other = 4242, 4343
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    os.chown(mine, user, user)
    os.chown(theirs, other, other)
    out = str(mine / "wf.dag.dagman.out")
    db = f"sqlite:///{mine}/wf.stampede.db"

    check_attach(user, MonitorConfig(out, replay=False), db)
    check_attach(0, MonitorConfig(str(theirs / "wf.dag.dagman.out"), replay=False), db)
    refused = [
        (MonitorConfig(str(theirs / "wf.dag.dagman.out"), replay=False), db, "submit directory"),
        (MonitorConfig(out, replay=False), f"sqlite:///{theirs}/x.db", "event destination"),
        (MonitorConfig(out, replay=False, dests=[f"{theirs}/e.bp"]), db, "event destination"),
        (MonitorConfig(out, replay=False, output_dir=str(theirs)), db, "output directory"),
        (MonitorConfig(out, replay=False, jobstate_name=f"{theirs}/js"), db, "jobstate file"),
        (MonitorConfig(out, replay=False, dests=["-"]), db, "stdout"),
    ]
    for config, default_db, what in refused:
        with pytest.raises(NotAllowed, match=what):
            check_attach(user, config, default_db)
    # a database server is not a file-system write
    check_attach(user, MonitorConfig(out, replay=False, dests=["postgresql://h/db"]), db)
    # a symlink into someone else's directory is judged by where it points
    link = mine / "link"
    link.symlink_to(theirs)
    with pytest.raises(NotAllowed):
        check_attach(user, MonitorConfig(str(link / "wf.dag.dagman.out"), replay=False), db)


def test_socket_refuses_another_users_workflow(tmp_path: Path) -> None:
    """A real client running as ``nobody`` (SO_PEERCRED) may not attach root's workflow."""
    require_corpus()
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run a client as another user")
    import pwd
    import tempfile

    nobody = pwd.getpwnam("nobody")
    # pytest's tmp_path lies below a 0700 directory: nobody could not even reach the socket
    tmp_path = Path(tempfile.mkdtemp(prefix="monitord-peer-"))
    tmp_path.chmod(0o755)
    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    run = corpus_source("process_wf_success", tmp_path / "run")
    run.chmod(0o755)
    service = start_service(cfg, env, tmp_path / "service.log")
    try:
        dagman_out = next(run.glob("*.dag.dagman.out"))
        as_nobody = [
            setpriv,
            f"--reuid={nobody.pw_uid}",
            f"--regid={nobody.pw_gid}",
            "--clear-groups",
        ]
        proc = subprocess.run(
            [*as_nobody, PY, "-m", "monitord.cli", "attach", "--no-dashboard", str(dagman_out)],
            env={**env, "HOME": "/nonexistent"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 1, proc.stderr
        assert "refused" in proc.stderr and "not owned by uid" in proc.stderr
        assert not (run / "jobstate.log").exists()
        # the same request from the directory's owner (root) is accepted
        ok = attach(dagman_out, env, "--wait", "--no-dashboard")
        assert ok.returncode == 0, ok.stderr
        assert finished(run)
    finally:
        assert stop_service(service) == 0
        shutil.rmtree(tmp_path, ignore_errors=True)


# ---------------------------------------------------------------------------- end to end


def test_three_ways_in_each_equal_to_the_replay(tmp_path: Path) -> None:
    """attach, a watched root and the -N drop-in; status snapshot; clean stop leaves nothing."""
    require_corpus()
    from monitord.tools.player import Player

    watch = tmp_path / "watch"
    watch.mkdir()
    cfg = write_config(tmp_path, watch=watch)
    env = service_env(tmp_path, cfg)
    samples = {
        "attach": ("process_wf_success", tmp_path / "attached" / "run"),
        "watch": ("hierarchical_wf_failure", watch / "user" / "run0001"),
        "dropin": ("process_wf_failure", tmp_path / "dropin" / "run"),
    }
    service = start_service(cfg, env, tmp_path / "service.log")
    try:
        players = {}
        for way, (sample, dest) in samples.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            player = Player(str(CORPUS / sample / "input"), str(dest), lines_per_second=400)
            player.prepare()
            players[way] = player
        name = next((CORPUS / "process_wf_success" / "input").glob("*.dag.dagman.out")).name
        attached = attach(samples["attach"][1] / name, env, "--no-dashboard")
        assert attached.returncode == 0, attached.stderr
        assert "attached" in attached.stdout
        name = next((CORPUS / "process_wf_failure" / "input").glob("*.dag.dagman.out")).name
        client = dropin(samples["dropin"][1] / name, env)
        for player in players.values():
            player.start()
        for player in players.values():
            player.join(120)
        _, err = client.communicate(timeout=120)
        assert client.returncode == 0, err[-3000:]
        for _, dest in samples.values():
            wait_until(lambda d=dest: finished(d), 60, f"{dest} to be finished")
        log = (tmp_path / "service.log").read_text()
        assert '"source":"watch"' in log.replace(" ", "") or "new workflow found" in log
    finally:
        assert stop_service(service) == 0
    for sample, dest in samples.values():
        expected = CORPUS / sample / "expected"
        assert_same_outputs(expected / "stampede.db", expected / "jobstate", dest)
    # every line of the service's JSON log that is about a workflow names it
    import json

    for line in (tmp_path / "service.log").read_text().splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if record["event"] in ("following workflow", "workflow ended", "database opened"):
            assert record.get("wf_uuid"), record
    # the followed list is empty again: nothing would be resumed
    state = (tmp_path / "state" / "followed.json").read_text()
    assert '"workflows": []' in state


def test_status_of_a_paused_workflow(tmp_path: Path) -> None:
    """The service's snapshot (served by the HTTP endpoint) describes a workflow mid-run."""
    require_corpus()
    import json
    import urllib.request

    from monitord.service.status import JOB_COLUMNS, from_json

    port = free_port()
    cfg = write_config(tmp_path, http_port=port)
    env = service_env(tmp_path, cfg)
    run = corpus_source("process_wf_success", tmp_path / "run")
    dagman_out = next(run.glob("*.dag.dagman.out"))
    lines = dagman_out.read_text().splitlines(keepends=True)
    half = len(lines) // 2
    dagman_out.write_text("".join(lines[:half]))
    service = start_service(cfg, env, tmp_path / "service.log")

    def snapshot():  # type: ignore[no-untyped-def]
        url = f"http://127.0.0.1:{port}/status.json"
        with urllib.request.urlopen(url, timeout=10) as resp:
            return from_json(resp.read())

    try:
        assert attach(dagman_out, env, "--no-dashboard").returncode == 0
        wait_until(
            lambda: any(w.lag_bytes == 0 and w.events_total for w in snapshot().workflows),
            30,
            "the workflow to be caught up",
        )
        snap = snapshot()
        (wf,) = snap.workflows
        assert wf.dagman_out == str(dagman_out) and wf.run_dir == str(run)
        assert wf.wf_uuid == json.loads(json.dumps(wf.wf_uuid))  # a plain string
        assert wf.state == "running" and wf.lag_seconds == 0.0
        assert set(wf.jobs) == set(JOB_COLUMNS)
        assert sum(wf.jobs.values()) > 0 and 0.0 <= wf.percent_done < 100.0
        assert wf.events_total > 0
        assert snap.sinks and all(s.failures == 0 for s in snap.sinks)
        assert snap.started_at <= time.time()
        with dagman_out.open("a") as fh:
            fh.write("".join(lines[half:]))
        wait_until(lambda: finished(run), 30, "the workflow to end")
        wait_until(lambda: not snapshot().workflows, 10, "the status to drop it")
        # ... into the finished ones, with its outcome
        assert [(f.dagman_out, f.outcome) for f in snapshot().finished] == [
            (str(dagman_out), "success")
        ]
    finally:
        assert stop_service(service) == 0
    expected = CORPUS / "process_wf_success" / "expected"
    assert_same_outputs(expected / "stampede.db", expected / "jobstate", run)
