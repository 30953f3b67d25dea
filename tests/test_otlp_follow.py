"""Live: a daemon following a played workflow exports its trace while the receiver process
listens (tests/test_follow_played.py's player and supervisor).

- ``kill -9`` at a seeded line: the successor recovers from line 1 (the sink declares
  ``resumes=False``) and sends spans again; every span sent, before or after the kill, is the
  golden trace's span with that id: nothing lost, nothing different, no stray ids.
- a clean stop (SIGINT) in the middle and a new daemon: it goes on where the last one stopped,
  with the open spans the sink kept; the receiver gets every span exactly once.
"""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path

import pytest

from tests.otlp_fixtures import Receiver, events_of, golden, trace_of
from tests.test_follow_played import CASES, Following
from tests.test_otlp_golden import normalised

SRC = CASES / "held_released_aborted"
GOLDEN_NAME = "case_held_released_aborted"


def _with_traces(following: Following, receiver: Receiver) -> Following:
    """The daemons also export to ``receiver`` (a named endpoint; ``-D`` options go first)."""
    at = next(i for i, arg in enumerate(following.cmd) if arg.startswith("-D"))
    following.cmd.insert(at, f"-Dpegasus.catalog.workflow.traces.url={receiver.url}")
    return following


class _Interrupted(Following):
    """SIGINT (a clean stop) instead of SIGKILL at ``kill_at``."""

    def _on_flush(self, lines: list[tuple[str, str]], _t: float) -> None:
        self.written += sum(1 for path, _ in lines if path == self.root_out)
        if self.kill_at is not None and self.written >= self.kill_at:
            self.kill_at = None
            with self.lock:
                assert self.daemon is not None
                if self.daemon.poll() is None:
                    self.daemon.send_signal(signal.SIGINT)
                    self.kills += 1
                    self.killed = True

    def _reap(self, timeout: float) -> int | None:
        """The interrupted daemon ends with status 1 (interrupted), without a traceback."""
        before = len(self.errors)
        code = super()._reap(timeout)
        if code == 1 and self.kills == 1 and not self.reaped_interrupt:
            self.reaped_interrupt = True
            self.errors[before:] = [e for e in self.errors[before:] if "Traceback" in e]
        return code

    reaped_interrupt = False


def _key(span: dict) -> str:
    return json.dumps(span, sort_keys=True)


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_while_following_resends_only_the_same_spans(seed: int, tmp_path: Path) -> None:
    receiver = Receiver(tmp_path / "received.jsonl")
    receiver.start()
    try:
        probe = Following(SRC, tmp_path / "probe")
        kill_at = random.Random(2800 + seed).randint(20, len(probe.root_lines) - 20)
        following = Following(SRC, tmp_path, rate=600, seed=seed, kill_at=kill_at)
        _with_traces(following, receiver).run()
    finally:
        receiver.stop()
    assert following.kills == 1, "the daemon was not running when the kill was due"
    run = following.run_dir
    want = {s["span_id"]: _key(s) for s in golden(GOLDEN_NAME)}
    got = [normalised([line["span"]], run)[0] for line in receiver.received()]
    assert {s["span_id"] for s in got} == set(want)  # every span, no stray id
    different = [s["name"] for s in got if _key(s) != want[s["span_id"]]]
    assert different == []


def test_a_clean_stop_and_restart_sends_every_span_once(tmp_path: Path) -> None:
    """The new daemon goes on where the last one stopped, and the sink with the open spans
    the last one kept: what the receiver got from the two daemons is, span for span, the
    trace of the two daemons' events taken in one go (their events file), each span once.
    (Not the replay's golden trace: across a clean stop the daemon itself forgets the job
    instances in flight and numbers the next ones anew.)"""
    receiver = Receiver(tmp_path / "received.jsonl")
    receiver.start()
    try:
        probe = Following(SRC, tmp_path / "probe")
        stop_at = len(probe.root_lines) // 2
        following = _Interrupted(SRC, tmp_path, rate=600, seed=3, kill_at=stop_at)
        at = following.cmd.index("-d")
        following.cmd[at:at] = ["-e", "json"]  # the events file in JSON: read back below
        _with_traces(following, receiver).run()
    finally:
        receiver.stop()
    assert following.kills == 1 and following.daemons >= 2
    received = [line["span"] for line in receiver.received()]
    ids = [s["span_id"] for s in received]
    assert len(ids) == len(set(ids)), "a span was sent twice"
    expected = trace_of(events_of(following.bp))
    assert receiver.spans() == expected
    assert any(s["kind"] == "SERVER" for s in expected)  # the workflow's span crossed the stop
