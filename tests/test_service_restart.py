"""The service follows 50 played workflows, is killed with SIGKILL midway and restarted.

Workflows come in the three ways (``monitord attach``, a watched root, the ``pegasus-monitord
-N`` drop-in, whose clients must ride through the restart and exit 0 as the per-workflow
daemon would).  Every workflow's database and jobstate.log must equal its replay: the corpus
samples' reference outputs, and for generated workflows a ``pegasus-monitord -r`` replay of the
source directory.  A second test stops the service cleanly (SIGTERM) in the middle of
following and checks the same after the restart.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from tests.conftest import CORPUS, require_corpus
from tests.test_service import (
    PY,
    assert_same_outputs,
    corpus_source,
    dropin,
    finished,
    generate_source,
    replay_all,
    service_env,
    start_service,
    stop_service,
    wait_until,
    write_config,
)

CORPUS_SAMPLES = ["process_wf_success", "process_wf_failure", "hierarchical_wf_failure"]
WAYS = ("attach", "watch", "dropin")


def _plan(tmp: Path, count: int, corpus_copies: int) -> list[dict]:
    """Sources (corpus copies + generated) and where each is played, by way of entry."""
    rng = random.Random(7)
    src_root, watch = tmp / "src", tmp / "watch"
    src_root.mkdir()
    items = []
    for i in range(count):
        way = WAYS[i % 3]
        if i < corpus_copies:
            sample = CORPUS_SAMPLES[i % len(CORPUS_SAMPLES)]
            src = corpus_source(sample, src_root / f"c{i:02d}")
            expected: tuple[Path | None, Path] = (
                CORPUS / sample / "expected" / "stampede.db",
                CORPUS / sample / "expected" / "jobstate",
            )
        else:
            src = generate_source(src_root / f"g{i:02d}", rng.randint(6, 18), seed=100 + i)
            expected = (None, src)  # filled in by the replay of the source
        base = watch / f"user{i % 4}" if way == "watch" else tmp / way
        items.append({"way": way, "src": src, "dest": base / f"run{i:02d}", "expected": expected})
    return items


def _play_all(items: list[dict], rate: float) -> list:
    from monitord.tools.player import Player

    players = []
    for n, item in enumerate(items):
        item["dest"].parent.mkdir(parents=True, exist_ok=True)
        player = Player(str(item["src"]), str(item["dest"]), lines_per_second=rate, seed=n)
        player.prepare()
        item["dagman_out"] = item["dest"] / next(item["src"].glob("*.dag.dagman.out")).name
        players.append(player)
    return players


def _attach_all(items: list[dict], env: dict[str, str]) -> None:
    procs = [
        subprocess.Popen(
            [PY, "-m", "monitord.cli", "attach", "--no-dashboard", str(i["dagman_out"])],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in items
        if i["way"] == "attach"
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


def _check_all(items: list[dict]) -> None:
    failures = []
    for item in items:
        expected_db, expected_js = item["expected"]
        if expected_db is None:
            expected_db = next(item["src"].glob("*.stampede.db"))
        try:
            assert_same_outputs(expected_db, expected_js, item["dest"])
        except AssertionError as exc:
            failures.append(f"[{item['way']}] {exc}")
    assert not failures, f"{len(failures)} of {len(items)} differ:\n" + "\n".join(failures)[:6000]


def _run(tmp: Path, *, count: int, corpus_copies: int, stop_signal: int, rate: float) -> dict:
    require_corpus()
    cfg = write_config(tmp, watch=tmp / "watch")
    env = service_env(tmp, cfg)
    (tmp / "watch").mkdir()
    items = _plan(tmp, count, corpus_copies)
    players = _play_all(items, rate)
    # The replays first (their plans are made, so the players copy none of their outputs).
    replays = replay_all([i["src"] for i in items if i["expected"][0] is None], env)
    _, err = replays.communicate(timeout=300)
    assert replays.returncode == 0, err[-3000:]
    log = tmp / "service.log"
    service = start_service(cfg, env, log)
    clients = []
    try:
        _attach_all(items, env)
        clients = [(i, dropin(i["dagman_out"], env)) for i in items if i["way"] == "dropin"]
        handed_over = sum(1 for i in items if i["way"] != "watch")
        wait_until(
            lambda: _followed(tmp) == handed_over,
            120,
            f"{handed_over} workflows to be handed over (have {_followed(tmp)})",
            log,
        )
        t0 = time.monotonic()
        for player in players:
            player.start()
        longest = max(len(p.actions) for p in players) / rate
        time.sleep(longest * 0.45)
        service.send_signal(stop_signal)
        killed_at = time.monotonic() - t0
        if stop_signal == signal.SIGHUP:  # a service ignores it (a logout): it goes on
            time.sleep(1.0)
            code = service.poll()
            status_before = _followed(tmp)
        else:
            code = service.wait(timeout=120)
            status_before = _followed(tmp)
            time.sleep(0.5)
            service = start_service(cfg, env, log)
        for player in players:
            player.join(300)
        for item, client in clients:
            _, err = client.communicate(timeout=300)
            assert client.returncode == 0, f"{item['dest']}: {err[-2000:]}"
        for item in items:
            wait_until(lambda d=item["dest"]: finished(d), 120, f"{item['dest']} to finish", log)
        elapsed = time.monotonic() - t0
    finally:
        for _, client in clients:
            if client.poll() is None:
                client.kill()
        assert stop_service(service) == 0
    assert "Traceback" not in log.read_text()
    _check_all(items)
    return {
        "exit": code,
        "killed_at": killed_at,
        "followed": status_before,
        "elapsed": elapsed,
    }


def _followed(tmp: Path) -> int:
    try:
        doc = orjson.loads((tmp / "state" / "followed.json").read_bytes())
    except FileNotFoundError:
        return 0
    return len(doc["workflows"])


def test_fifty_workflows_sigkill_midway_then_restart_equal_replays(tmp_path: Path) -> None:
    figures = _run(tmp_path, count=50, corpus_copies=15, stop_signal=signal.SIGKILL, rate=250)
    assert figures["exit"] == -signal.SIGKILL
    # the kill came while workflows were being followed (they were resumed, not re-attached)
    assert figures["followed"] > 0, figures
    print(
        f"50 workflows, SIGKILL at {figures['killed_at']:.1f} s with {figures['followed']} "
        f"followed; all followed to the end after {figures['elapsed']:.1f} s; "
        "every output equals its replay"
    )


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name
)
def test_clean_stop_midway_then_restart_equal_replays(sig: signal.Signals, tmp_path: Path) -> None:
    """SIGTERM (systemd's stop) and SIGINT (Ctrl-C) stop the service cleanly, exit 0, and the
    restarted service goes on; SIGHUP leaves it running (None: it has not exited)."""
    figures = _run(tmp_path, count=9, corpus_copies=3, stop_signal=sig, rate=250)
    assert figures["exit"] == (None if sig == signal.SIGHUP else 0)
    assert figures["followed"] > 0, figures
