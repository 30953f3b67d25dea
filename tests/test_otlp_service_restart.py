"""The ``otlp`` sink across a restart of ``monitord serve`` (issue 28: "a service restart
neither loses nor repeats a span").

Three conformance cases (those of tests/test_otlp_service.py) are attached to one service
exporting to the receiver process, each with the first part of its dagman.out.  Once every
workflow has exported spans, the rest of the three is played (a few lines at a time, in
turn) and the service is stopped once spans of the played lines have arrived:

- SIGKILL in the middle of an export: the receiver holds the next request (``STORE.gate``)
  and the service is killed while it waits.  The service's exports to one endpoint run one
  after another on its lane, so every export before the held one was answered *and* recorded
  in its workflow's state file (a kill between an answer and that record re-sends the spans:
  the one at-least-once window, docs/traces.md).  Exports answered since the service's last
  resume snapshot are skipped by their delivery marks when the lines are read again;
- SIGTERM (a clean stop, exit 0), lines still coming.

The service is started again at once (it resumes the workflows it followed), the play goes
on to the end and every workflow ends: each span of each golden trace was received exactly
once, none twice, no stray one.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.otlp_fixtures import Receiver
from tests.test_otlp_service import (
    SERVED,
    Cut,
    _attach,
    _check_every_span_once,
    _service,
    _trace_of,
)
from tests.test_service import finished, start_service, stop_service, wait_until

RESUMED = "resuming from a snapshot, not from line 1"
TAKEN_UP = "OTLP: state of the last daemon taken up"
FIRST = 0.4  # the share of each dagman.out the service reads before the play
CHUNK, PAUSE = 3, 0.02  # lines appended to each workflow in turn, and the pause between


class Played(Cut):
    """A :class:`Cut` whose rest is appended ``CHUNK`` lines at a time (``step``)."""

    def __init__(self, case: str, dest: Path) -> None:
        super().__init__(case, dest, FIRST)
        self.lines = self.rest.splitlines(keepends=True)

    def step(self) -> bool:
        """The next lines appended; False once none are left."""
        chunk, self.lines = self.lines[:CHUNK], self.lines[CHUNK:]
        with self.dagman_out.open("a") as fh:
            fh.write("".join(chunk))
        return bool(self.lines)


def _play(cuts: list[Played], stop: Callable[[], bool]) -> None:
    """Append to every workflow in turn until ``stop()`` or the end of every dagman.out."""
    going = list(cuts)
    while going and not stop():
        going = [cut for cut in going if cut.step()]
        time.sleep(PAUSE)


def _stop_midway(
    sig: signal.Signals, service: subprocess.Popen[bytes], cuts: list[Played], receiver: Receiver
) -> int:
    """Play until spans of the played lines arrive, then stop the service (see above)."""
    before = len(receiver.received())
    gate = receiver.store.with_name(receiver.store.name + ".gate")
    held = receiver.store.with_name(receiver.store.name + ".held")

    def due() -> bool:
        if len(receiver.received()) == before:
            return False
        if sig != signal.SIGKILL:
            return True
        gate.touch()  # the next export is held: the kill comes in the middle of it
        return held.exists()

    try:
        _play(cuts, due)
        assert any(cut.lines for cut in cuts), "the plays ended before the stop"
        if sig == signal.SIGKILL:
            wait_until(held.exists, 60, "an export held at the receiver")
        service.send_signal(sig)
        return service.wait(timeout=120)
    finally:
        gate.unlink(missing_ok=True)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_service_stopped_midway_and_restarted_sends_every_span_once(
    sig: signal.Signals, tmp_path: Path, receiver: Receiver
) -> None:
    service, env, _ = _service(tmp_path)
    log = tmp_path / "service.log"
    try:
        cuts = [Played(case, tmp_path / case / "run") for case in SERVED]
        for cut in cuts:
            _attach(cut, env, receiver)
        for cut in cuts:  # every workflow has exported spans before the stop
            wait_until(
                lambda c=cut: _trace_of([ln["span"] for ln in receiver.received()], c),
                60,
                f"{cut.case}'s first spans",
                log,
            )
        code = _stop_midway(sig, service, cuts, receiver)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0), log.read_text()[-3000:]
        restarted_at = log.stat().st_size
        # at once; it resumes what it followed
        service = start_service(Path(env["MONITORD_SERVICE_CONFIG"]), env, log)
        _play(cuts, lambda: False)
        for cut in cuts:
            wait_until(lambda c=cut: finished(c.run), 60, f"{cut.case} to end", log)
    finally:
        assert stop_service(service) == 0
    assert "Traceback" not in log.read_text()
    after = log.read_text()[restarted_at:]
    # each workflow resumed from its snapshot (not from line 1, which sends its spans again)
    # and its otlp sink took up the state the stopped service left
    assert after.count(RESUMED) == len(cuts), after[-3000:]
    assert after.count(TAKEN_UP) == len(cuts), after[-3000:]
    _check_every_span_once(receiver, list(cuts))
