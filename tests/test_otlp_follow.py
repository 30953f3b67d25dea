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
import subprocess
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
STOP_WAIT = 120.0  # seconds for a snapshot, or for a held export (a hang, not a race)
# The daemon's OTLP export timeout (ms): longer than the test, so a held export is never
# given up (retried, then spooled at the end: a daemon ending with 0 before its kill).
EXPORT_TIMEOUT_MS = str(int(10 * STOP_WAIT * 1000))


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

    No race with the daemon's end, under any load: the play waits at ``kill_at`` (a pause in
    its plan, :class:`Following`) until the snapshot is there and the signal sent or the gate
    shut, so the daemon has not read DAGMan's exit line yet; the workflow's span ends after
    it, so some later export is held, and a held export is never answered while the gate
    stands (the daemon's export timeout is longer than the test): the daemon is still
    running when the kill comes.
    """

    def __init__(self, *args: Any, gate: Path, interrupt: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interrupt = interrupt
        self.gate, self.held = gate, gate.with_name(gate.name.replace(".gate", ".held"))
        self.snapshots = self.logs / ".local" / "state" / "monitord" / "resume"
        self.exit_codes: list[int] = []

    def _at_stop(self) -> None:
        """The play waits here until the daemon has a snapshot and is interrupted, or its
        next export will be held and then killed."""
        deadline = time.monotonic() + STOP_WAIT
        while not any(self.snapshots.glob("*.pickle")):
            if time.monotonic() > deadline:
                self.errors.append(f"no snapshot {STOP_WAIT} s after the stop point")
                break
            time.sleep(0.005)
        with self.lock:
            daemon = self.daemon
        assert daemon is not None
        if self.interrupt:
            self._stop(daemon, signal.SIGINT)
            return
        self.gate.touch()  # the daemon's next export is held; the lines that make it follow
        threading.Thread(target=self._kill_when_held, args=(daemon,), daemon=True).start()

    def _kill_when_held(self, daemon: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + STOP_WAIT
        while not self.held.exists():
            if time.monotonic() > deadline:
                self.errors.append(f"no export held {STOP_WAIT} s after the gate was shut")
                break
            time.sleep(0.005)
        self._stop(daemon, signal.SIGKILL)
        self.gate.unlink()

    def _stop(self, daemon: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        """Not under ``self.lock``: after the play, :meth:`run` holds it waiting for this
        daemon's end."""
        if daemon.poll() is not None:
            self.errors.append(f"the daemon had ended (status {daemon.returncode})")
            return
        if sig == signal.SIGKILL:
            _kill_group(daemon)
        else:
            daemon.send_signal(sig)
        self.kills += 1
        self.killed = True  # the supervisor starts the successor (after the play: run())

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
            SRC,
            tmp_path,
            rate=600,
            seed=seed,
            kill_at=kill_at,
            gate=gate,
            interrupt=interrupt,
            env={"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": EXPORT_TIMEOUT_MS},
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
