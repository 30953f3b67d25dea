"""Live: a daemon following a played workflow exports its trace while the receiver process
listens (tests/test_follow_played.py's player and supervisor).  The sink keeps delivery marks
with its state file (sinks/otlp/sink.py), so a daemon that resumes from its crash snapshot
sends every span exactly once:

- ``kill -9`` at a seeded line (once the daemon has written a snapshot, in the middle of its
  next export): the successor resumes from it; the receiver got every span of the replay's
  golden trace, none twice;
- a clean stop (SIGINT, exit 130) in the middle and a new daemon: the same.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_fixtures import Receiver, golden
from tests.test_follow_played import CASES, Following, _kill_group
from tests.test_otlp_golden import normalised

SRC = CASES / "held_released_aborted"
GOLDEN_NAME = "case_held_released_aborted"
RESUMED = "resuming from a snapshot"


def _with_traces(following: Following, receiver: Receiver) -> Following:
    """The daemons export to ``receiver`` (a named endpoint) and the workflow's own database
    (the default), not to an events file, which cannot resume from a snapshot."""
    cmd = following.cmd
    at = next(i for i, arg in enumerate(cmd) if arg.startswith("-Dpegasus.catalog.workflow."))
    cmd[at] = f"-Dpegasus.catalog.workflow.traces.url={receiver.url}"
    at = cmd.index("-d")
    del cmd[at : at + 2]
    return following


class _Stopped(Following):
    """Stops the daemon at ``kill_at`` lines, once it has written a crash snapshot (before
    its first one a successor recovers from line 1 instead: not the case under test).

    SIGINT (``interrupt``: a clean stop, exit status 130) at once; SIGKILL at the daemon's
    next export, held by the receiver before it stores anything (``gate``): every export
    before the kill was answered and recorded by the sink.  A kill between an export's answer
    and that record re-sends the export's spans (docs/traces.md: the one at-least-once window,
    tests/test_otlp_sink.py) -- a window a busy machine's fsync makes wide enough to hit.
    """

    def __init__(self, *args: Any, gate: Path, interrupt: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interrupt = interrupt
        self.gate, self.held = gate, gate.with_name(gate.name.replace(".gate", ".held"))
        self.snapshots = self.logs / ".local" / "state" / "monitord" / "resume"
        self.exit_codes: list[int] = []

    def _on_flush(self, lines: list[tuple[str, str]], _t: float) -> None:
        self.written += sum(1 for path, _ in lines if path == self.root_out)
        if self.kill_at is not None and self.written >= self.kill_at:
            self.kill_at = None  # the player goes on meanwhile
            threading.Thread(target=self._stop_after_snapshot, daemon=True).start()

    def _stop_after_snapshot(self) -> None:
        deadline = time.monotonic() + 120
        while not any(self.snapshots.glob("*.pickle")) and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.interrupt:
            self._stop(signal.SIGINT)
            return
        self.gate.touch()  # the daemon's next export is held
        while not self.held.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        self._stop(signal.SIGKILL)
        self.gate.unlink()

    def _stop(self, sig: signal.Signals) -> None:
        with self.lock:
            assert self.daemon is not None
            if self.daemon.poll() is None:
                if sig == signal.SIGKILL:
                    _kill_group(self.daemon)
                else:
                    self.daemon.send_signal(sig)
                self.kills += 1
                self.killed = True

    def _reap(self, timeout: float) -> int | None:
        """The interrupted daemon ends with status 130, without a traceback."""
        before = len(self.errors)
        code = super()._reap(timeout)
        if code is not None:
            self.exit_codes.append(code)
        if code == 128 + signal.SIGINT and self.interrupt:
            self.errors[before:] = [e for e in self.errors[before:] if "Traceback" in e]
        return code

    def resumed(self) -> bool:
        """The daemon started after the stop resumed from its predecessor's snapshot."""
        err = self.logs / "daemon-2.err"
        return err.exists() and RESUMED in err.read_text(errors="replace")


def _follow(tmp_path: Path, seed: int, *, interrupt: bool) -> tuple[_Stopped, list[dict]]:
    """Play the case with a stop at a seeded line; the spans the receiver got, in order."""
    receiver = Receiver(tmp_path / "received.jsonl")
    receiver.start()
    try:
        probe = Following(SRC, tmp_path / "probe")
        kill_at = random.Random(2800 + seed).randint(20, len(probe.root_lines) - 40)
        gate = tmp_path / "received.jsonl.gate"
        following = _Stopped(
            SRC, tmp_path, rate=600, seed=seed, kill_at=kill_at, gate=gate, interrupt=interrupt
        )
        _with_traces(following, receiver).run()
    finally:
        receiver.stop()
    return following, [line["span"] for line in receiver.received()]


def _check_exactly_once(following: _Stopped, received: list[dict]) -> None:
    assert following.kills == 1, "the daemon was not running when the stop was due"
    assert following.resumed(), "the successor did not resume from the snapshot"
    twice = sorted(i for i, n in Counter(s["span_id"] for s in received).items() if n > 1)
    assert twice == [], f"{len(twice)} spans sent twice"
    got = normalised(
        sorted(received, key=lambda s: (s["trace_id"], s["start_ns"], s["span_id"])),
        following.run_dir,
    )
    want = golden(GOLDEN_NAME)
    assert [s["span_id"] for s in got] == [s["span_id"] for s in want]  # none lost, no stray
    different = [g["name"] for g, w in zip(got, want, strict=True) if g != w]
    assert different == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_while_following_then_resume_sends_every_span_once(
    seed: int, tmp_path: Path
) -> None:
    following, received = _follow(tmp_path, seed, interrupt=False)
    assert following.exit_codes[0] == -signal.SIGKILL
    _check_exactly_once(following, received)


def test_a_clean_stop_and_restart_sends_every_span_once(tmp_path: Path) -> None:
    following, received = _follow(tmp_path, 4, interrupt=True)
    assert following.exit_codes[0] == 128 + signal.SIGINT
    _check_exactly_once(following, received)
    assert any(s["kind"] == "SERVER" for s in received)  # the workflow's span crossed the stop
