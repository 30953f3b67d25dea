"""The ``otlp`` sink across a restart of ``monitord serve`` (issue 28: "a service restart
neither loses nor repeats a span").

Three conformance cases (those of tests/test_otlp_service.py) are attached to one service
exporting to the receiver process, each with the first part of its dagman.out.  Once every
workflow has exported spans, a further slice of each is appended and the service is stopped:

- SIGKILL in the middle of an export: the receiver holds the next request (``STORE.gate``)
  and the service is killed while it waits.  The service's exports to one endpoint run one
  after another on its lane, so every export before the held one was answered *and* recorded
  in its workflow's state file (a kill between an answer and that record re-sends the spans:
  the one at-least-once window, docs/traces.md);
- SIGTERM (a clean stop, exit 0) at once, the slice's lines still being read.

The service is started again at once (it resumes the workflows it followed), the rest of
each dagman.out is appended, and every workflow ends: each span of each golden trace was
received exactly once, none twice, no stray one.
"""

from __future__ import annotations

import signal
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
FIRST, SECOND = 0.4, 0.7  # shares of each dagman.out before the stop, and before the rest


class Slices(Cut):
    """A :class:`Cut` whose rest comes in two parts: ``more`` up to ``SECOND``, ``go_on``."""

    def __init__(self, case: str, dest: Path) -> None:
        super().__init__(case, dest, FIRST)
        lines = self.rest.splitlines(keepends=True)
        total = len(self.dagman_out.read_text().splitlines()) + len(lines)
        at = int(total * SECOND) - (total - len(lines))
        self.middle, self.rest = "".join(lines[:at]), "".join(lines[at:])

    def more(self) -> None:
        with self.dagman_out.open("a") as fh:
            fh.write(self.middle)


def _attach_all(cuts: list[Slices], env: dict[str, str], receiver: Receiver, log: Path) -> None:
    for cut in cuts:
        _attach(cut, env, receiver)
    for cut in cuts:  # every workflow has exported spans before the stop
        wait_until(
            lambda c=cut: _trace_of([ln["span"] for ln in receiver.received()], c),
            60,
            f"{cut.case}'s first spans",
            log,
        )


@pytest.fixture
def receiver(tmp_path: Path):
    rec = Receiver(tmp_path / "received.jsonl")
    rec.start()
    yield rec
    rec.stop()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_service_stopped_midway_and_restarted_sends_every_span_once(
    sig: signal.Signals, tmp_path: Path, receiver: Receiver
) -> None:
    service, env, _ = _service(tmp_path)
    log = tmp_path / "service.log"
    cfg = Path(env["MONITORD_SERVICE_CONFIG"])
    gate = receiver.store.with_name(receiver.store.name + ".gate")
    held = receiver.store.with_name(receiver.store.name + ".held")
    try:
        cuts = [Slices(case, tmp_path / case / "run") for case in SERVED]
        _attach_all(cuts, env, receiver, log)
        before = len(receiver.received())
        if sig == signal.SIGKILL:
            gate.touch()  # the next export is held: the kill comes in the middle of it
        for cut in cuts:
            cut.more()
        if sig == signal.SIGKILL:
            wait_until(held.exists, 60, "an export held at the receiver", log)
        service.send_signal(sig)
        code = service.wait(timeout=120)
        gate.unlink(missing_ok=True)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0), log.read_text()[-3000:]
        restarted_at = log.stat().st_size
        service = start_service(cfg, env, log)  # at once; it resumes what it followed
        for cut in cuts:
            cut.go_on()
        for cut in cuts:
            wait_until(lambda c=cut: finished(c.run), 60, f"{cut.case} to end", log)
    finally:
        gate.unlink(missing_ok=True)
        assert stop_service(service) == 0
    assert "Traceback" not in log.read_text()
    after = log.read_text()[restarted_at:]
    # each workflow resumed from its snapshot (not from line 1, which sends its spans again)
    # and its otlp sink took up the state the stopped service left
    assert after.count(RESUMED) == len(cuts), after[-3000:]
    assert after.count(TAKEN_UP) == len(cuts), after[-3000:]
    if sig == signal.SIGKILL:  # the held export was never stored: it went after the restart
        assert len(receiver.received()) > before
    _check_every_span_once(receiver, list(cuts))
