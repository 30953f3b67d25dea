"""The Monitor is one class with its varying parts handed in (monitord/daemon/parts.py): an
``Outputs`` decides where batches go, a ``MonitorObserver`` sees exactly what they carry, a
``CrashResume`` numbers them, and the registry wakes a running follow loop for queued work."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from monitord.core.events import StampedeEvent, make_event
from monitord.daemon.config import MonitorConfig
from monitord.daemon.monitor import Monitor
from monitord.daemon.registry import Registry
from monitord.daemon.resuming import CrashResume
from monitord.daemon.tracked import Tracked
from sinks.runtime.base import Sink
from sinks.runtime.marks import marks_of
from sinks.runtime.spool import SpoolSettings


class _Captured:
    """A sink set keeping every batch it is handed."""

    def __init__(self) -> None:
        self.batches: list[Sequence[StampedeEvent]] = []
        self.closed = False

    def __bool__(self) -> bool:
        return True

    def start(self) -> None: ...

    def publish(self, batch: Sequence[StampedeEvent]) -> None:
        self.batches.append(batch)

    def flush(self) -> None: ...

    def close(self) -> None:
        self.closed = True


class _CaptureOutputs:
    def __init__(self) -> None:
        self.set = _Captured()
        self.built_for: list[Sink] = []

    def sink_set(self, sinks: list[Sink], spool: SpoolSettings | None) -> _Captured:
        self.built_for = sinks
        return self.set

    async def settle(self) -> None: ...

    def forget_marks(self, root_uuid: str) -> None: ...


class _Recorder:
    def __init__(self) -> None:
        self.opened: list[str] = []
        self.lines = 0
        self.events: list[str] = []

    def added(self, tracked: Tracked, *, opened: bool, ended: bool) -> None:
        if opened:
            self.opened.append(tracked.dagman_out)

    def fed(self, tracked: Tracked, lines: list[str]) -> None:
        self.lines += len(lines)

    def published(self, events: Sequence[StampedeEvent]) -> None:
        self.events.extend(e.name for e in events)

    def ended(self, tracked: Tracked) -> None: ...


def test_a_replay_publishes_to_the_outputs_given_and_the_observer_sees_it(tmp_path: Path) -> None:
    from monitord.tools.synthetic import generate

    made = generate(tmp_path / "wf", 4, seed=3, name="parts")
    config = MonitorConfig(str(made.dagman_out), dashboard=False, notifications=False)
    outputs, recorder = _CaptureOutputs(), _Recorder()
    monitor = Monitor(config, outputs, resume=CrashResume(stream="s"), observers=[recorder])

    async def replay() -> None:
        try:
            await asyncio.to_thread(monitor.start)
            await monitor.replay_all()
        finally:
            await monitor.close()

    asyncio.run(replay())
    published = [e.name for batch in outputs.set.batches for e in batch]
    assert outputs.set.closed and [s.name for s in outputs.built_for] == ["sql"]
    assert published and recorder.events == published  # the observer saw every event, once
    assert recorder.opened == [str(made.dagman_out)]
    assert recorder.lines == len(Path(made.dagman_out).read_text().splitlines())
    assert "xwf.end" in published
    # numbered for the sinks' delivery marks: the counts add up to every event published
    marks = [marks_of(batch) for batch in outputs.set.batches]
    assert all(m is not None and m.stream == "s" for m in marks)
    last = marks[-1]
    assert last is not None and sum(last.counts.values()) == len(published)


def test_batches_carry_marks_only_with_a_stream() -> None:
    batch = [make_event("xwf.start", {"ts": 1.0, "xwf.id": "w", "restart_count": 0})]
    assert marks_of(CrashResume().mark(batch)) is None
    numbered = CrashResume(stream="s")
    first, second = numbered.mark(batch), numbered.mark(batch)
    one, two = marks_of(first), marks_of(second)
    assert one is not None and two is not None
    assert (one.counts, two.counts) == ({"w": 1}, {"w": 2})


def test_queued_work_wakes_a_running_follow_loop() -> None:
    woken: list[int] = []
    registry = Registry()
    registry.queue(Tracked(None, "/r", "/r/w.dag.dagman.out", None, 0.0, {}))  # nobody waits
    registry.wake = lambda: woken.append(1)
    registry.queue(Tracked(None, "/r", "/r/x.dag.dagman.out", None, 0.0, {}))
    assert woken == [1] and len(registry.pending) == 2
