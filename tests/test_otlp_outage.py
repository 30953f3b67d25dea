"""The receiver down for a long while during ``monitord follow`` of a played workflow, then
back: every span is delivered after, none twice, equal to the golden trace.

The outage lasts ``MONITORD_OTLP_OUTAGE`` seconds (default 60, the issue's minute; the test
takes about that plus 15 s).  Meanwhile the runtime keeps the batch whose export failed in
the sink (its spans pending, fed to the trace model once) and spools the batches behind it to
disk; when the receiver is back the pending spans go first, then the spool drains in order
(the daemon's "sink is back" line counts the events drained from it).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from monitord.tools.player import Player
from tests.conftest import CORPUS_TZ
from tests.otlp_fixtures import Receiver, golden
from tests.test_otlp_golden import CASES, normalised

OUTAGE = float(os.environ.get("MONITORD_OTLP_OUTAGE", "60"))
RATE = 25.0  # lines per second: the play lasts ~20 s, so the workflow ends while it is down
SEED = int(os.environ.get("MONITORD_KILL_SEED", "21"))
CASE = "held_released_aborted"


class Outage:
    """Stops the receiver once the player has written ``at`` dagman.out lines, starts it
    again ``OUTAGE`` seconds later (in a thread of its own: the player goes on)."""

    def __init__(self, receiver: Receiver, at: int) -> None:
        self.receiver, self.at = receiver, at
        self.written = 0
        self.thread: threading.Thread | None = None
        self.down_for = 0.0

    def on_flush(self, lines: list[tuple[str, str]], _t: float) -> None:
        self.written += sum(1 for path, _ in lines if path.endswith(".dag.dagman.out"))
        if self.thread is None and self.written >= self.at:
            self.thread = threading.Thread(target=self._down, daemon=True)
            self.thread.start()

    def _down(self) -> None:
        self.receiver.stop()
        began = time.monotonic()
        time.sleep(OUTAGE)
        self.receiver.start()
        self.down_for = time.monotonic() - began


def test_receiver_down_for_a_minute_then_every_span_once(tmp_path: Path) -> None:
    receiver = Receiver(tmp_path / "received.jsonl")
    receiver.start()
    run = tmp_path / "run"
    outage = Outage(receiver, at=random.Random(SEED).randint(40, 150))
    player = Player(
        str(CASES / CASE / "input"),
        str(run),
        lines_per_second=RATE,
        seed=SEED,
        on_flush=outage.on_flush,
    )
    player.prepare()
    dagman_out = run / next((CASES / CASE / "input").glob("*.dag.dagman.out")).name
    home = tmp_path / "home"
    home.mkdir()
    err = tmp_path / "daemon.err"
    props = tmp_path / "outage.properties"
    props.write_text(
        f"pegasus.monitord.spool.drain_timeout = {OUTAGE + 120:.0f}\n"  # it waits at the end
        "pegasus.monitord.spool.max_backoff = 0.5\n"  # test clock: quick retries
    )
    cmd = [
        sys.executable,
        "-m",
        "monitord.cli",
        "follow",
        "--no-dashboard",
        "--conf",
        str(props),
        "-d",
        receiver.url,
        dagman_out.name,
    ]
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}
    with err.open("w") as fh:
        daemon = subprocess.Popen(cmd, cwd=run, env=env, stdout=subprocess.DEVNULL, stderr=fh)
    try:
        deadline = time.monotonic() + 30
        while not (run / "monitord.recover").exists() and time.monotonic() < deadline:
            assert daemon.poll() is None, err.read_text()[-3000:]
            time.sleep(0.02)
        player.start()
        player.join(timeout=120)
        assert daemon.wait(timeout=OUTAGE + 180) == 0, err.read_text()[-4000:]
    finally:
        player.stop.set()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        if outage.thread is not None:
            outage.thread.join(OUTAGE + 30)
        receiver.stop()
    log = err.read_text(errors="replace")
    assert "Traceback" not in log
    assert outage.down_for >= OUTAGE
    assert re.search(r"sink down.*otlp", log), log[-3000:]
    drained = [int(n) for n in re.findall(r"drained_events=(\d+)", log)]
    assert drained and max(drained) > 0, "nothing went through the spool"
    received = [line["span"] for line in receiver.received()]
    twice = [
        k for k, n in Counter((s["trace_id"], s["span_id"]) for s in received).items() if n > 1
    ]
    assert twice == [], f"{len(twice)} spans received twice"
    got = normalised(
        sorted(received, key=lambda s: (s["trace_id"], s["start_ns"], s["span_id"])), run
    )
    assert got == golden(f"case_{CASE}")
