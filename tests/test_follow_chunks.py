"""The follow loop's chunks (monitord/daemon/following.py ``CHUNK_PERIOD``): a follower that
caught up lets the next lines gather before it reads again, so a steady writer's lines come
in chunks at most every CHUNK_PERIOD (each paying one worker-thread hop, one sink flush and
one checkpoint), and every line still arrives, in order, once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from monitord.daemon import following
from monitord.daemon.following import CHUNK_PERIOD, FollowLoop
from monitord.daemon.registry import Registry
from monitord.daemon.tail import READ_SIZE, LineFollower
from monitord.daemon.tracked import Tracked


class Host:
    shutting_down = False

    def __init__(self) -> None:
        self.lines: list[str] = []

    def feed_chunk(
        self, tracked: Tracked, lines: list[str], offset: int, publish: bool
    ) -> tuple[None, bool]:
        self.lines.extend(lines)
        assert tracked.wf is not None
        tracked.wf.line_no += len(lines)
        return None, publish

    def end_workflow(self, tracked: Tracked) -> None:
        pass

    def stop_workflow(self, tracked: Tracked) -> None:
        pass

    def flush(self) -> None:
        pass

    def checkpoint(self, target: Any, line_no: int) -> None:
        pass


class Polling:
    """A waiter that looks again every 2 ms: the old loop then read about that often."""

    def watch(self, path: str) -> None:
        pass

    async def wait(self, path: str, timeout: float) -> None:
        await asyncio.sleep(min(timeout, 0.002))

    async def unwatch(self, path: str) -> None:
        pass

    async def close(self) -> None:
        pass


def _one_workflow(tmp_path: Path) -> tuple[Path, Registry]:
    """An empty dagman.out and a registry that follows it (one root workflow)."""
    path = tmp_path / "w.dag.dagman.out"
    path.write_text("")
    wf = SimpleNamespace(
        uuid="u", parent_uuid=None, line_no=0, last_processed_line=0, dagman_exit=None,
        state=None, dagman_pid=None, monitord_exit=0,
    )  # fmt: skip
    registry = Registry(root_uuid="u")
    registry.queue(Tracked(wf, str(tmp_path), str(path), None, 0.0, {}))  # type: ignore[arg-type]
    return path, registry


def _follow_a_writer(
    tmp_path: Path,
    host: Host,
    written: list[str],
    every: int,
    pause: float,
    done: Callable[[], bool] | None = None,
    **loop_kw: Any,
) -> None:
    """Follows a new workflow's dagman.out while ``written`` is appended to it (``every``
    lines, then a ``pause`` of that many seconds) until ``done`` (by default: every line fed),
    waited for up to 10 s (a loaded machine), then stops the loop."""
    path, registry = _one_workflow(tmp_path)
    finished = done or (lambda: len(host.lines) == len(written))

    async def main() -> None:
        stop = asyncio.Event()
        loop = FollowLoop(host, registry, Polling(), **loop_kw)  # type: ignore[arg-type]
        follow = asyncio.create_task(loop.run(stop))
        with path.open("a") as fh:
            for n, line in enumerate(written):
                fh.write(line + "\n")
                fh.flush()
                if n % every == every - 1:
                    await asyncio.sleep(pause)
        for _ in range(1000):
            if finished():
                break
            await asyncio.sleep(0.01)
        stop.set()
        await follow
        await loop.close()

    asyncio.run(main())


def test_a_steady_writers_lines_come_in_chunks_at_most_every_chunk_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[float] = []

    class Recording(LineFollower):
        async def read_lines(self, limit: int = READ_SIZE) -> list[str]:
            lines = await super().read_lines(limit)
            if lines:
                reads.append(time.monotonic())
            return lines

    monkeypatch.setattr(following, "LineFollower", Recording)
    host = Host()
    written = [f"line {n}" for n in range(600)]
    _follow_a_writer(tmp_path, host, written, every=5, pause=0.01)  # ~500 lines/s
    assert host.lines == written  # every line, in order, once
    gaps = [b - a for a, b in zip(reads, reads[1:], strict=False)]
    assert len(reads) >= 2 and min(gaps) >= CHUNK_PERIOD * 0.95, gaps


@pytest.mark.parametrize("feed_thread", [True, False])
def test_every_chunk_is_fed_on_one_thread_as_in_a_replay(tmp_path: Path, feed_thread: bool) -> None:
    """Each thread that allocates gets a glibc heap of its own: a follow that fed its chunks
    on whichever default-executor thread was free spread the machine's long-lived objects (and
    the freed pages among them) over up to six heaps (bench/README.md, live30c).  The
    service (``feed_thread=False``) keeps its bounded default executor: no thread of its own
    per workflow."""
    fed_on: list[int] = []
    names: set[str] = set()

    class Threads(Host):
        def feed_chunk(
            self, tracked: Tracked, lines: list[str], offset: int, publish: bool
        ) -> tuple[None, bool]:
            fed_on.append(threading.get_ident())
            names.add(threading.current_thread().name)
            return super().feed_chunk(tracked, lines, offset, publish)

        def flush(self) -> None:
            time.sleep(0.001)  # the checkpointer's cycle holds a worker thread meanwhile

    host = Threads()
    written = [f"line {n}" for n in range(300)]
    # ~25 chunks, CHUNK_PERIOD apart
    _follow_a_writer(tmp_path, host, written, 10, CHUNK_PERIOD, feed_thread=feed_thread)
    assert host.lines == written
    assert len(fed_on) >= 5, fed_on
    assert threading.get_ident() not in fed_on
    if feed_thread:
        assert len(set(fed_on)) == 1 and names == {"monitord-feed_0"}, (fed_on, names)
    else:
        assert not any(name.startswith("monitord-feed") for name in names), names


def test_a_steady_writers_events_are_published_at_most_every_publish_period(
    tmp_path: Path,
) -> None:
    """Each publish is a sink transaction (an fsync on a live SQLite file), a flush cycle and
    monitord.recover's rewrite: at a steady rate a follower publishes (and asks for a
    checkpoint) at most every PUBLISH_PERIOD, not with every chunk, and once the writer stops
    it publishes at once, so the last checkpoint covers every line."""
    fed: list[tuple[float, int, bool]] = []  # (when, lines, publish) per chunk
    checkpoints: list[int] = []

    class Publishing(Host):
        def feed_chunk(
            self, tracked: Tracked, lines: list[str], offset: int, publish: bool = True
        ) -> tuple[None, bool]:
            fed.append((time.monotonic(), len(lines), publish))
            return super().feed_chunk(tracked, lines, offset, publish)

        def checkpoint(self, target: Any, line_no: int) -> None:
            if isinstance(target, Tracked):
                checkpoints.append(line_no)

    host = Publishing()
    written = [f"line {n}" for n in range(1000)]

    def last_checkpointed() -> bool:
        return bool(checkpoints) and checkpoints[-1] == len(written)

    _follow_a_writer(tmp_path, host, written, 5, 0.01, last_checkpointed)  # ~500 lines/s
    assert host.lines == written  # every line, in order, once
    assert checkpoints and checkpoints[-1] == len(written), checkpoints
    published = [when for when, lines, publish in fed if publish and lines]
    gaps = [b - a for a, b in zip(published, published[1:], strict=False)]
    assert all(gap >= following.PUBLISH_PERIOD * 0.95 for gap in gaps), gaps
    assert len(checkpoints) <= sum(publish for _, _, publish in fed) < len(fed), fed


def test_a_follow_ends_within_a_round_of_dagman_s_exit_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: a live follow ends < 1 s after DAGMan's last line.  Once the exit line is fed,
    the loop publishes what it owes and returns on its own: no wait for a change, at most
    two more reads (the owed publish's round and the one that finds nothing), and never the
    stop it would otherwise need."""
    after_exit = {"reads": 0, "waits": 0, "feeds": 0}
    exited = False

    class Exiting(Host):
        def feed_chunk(
            self, tracked: Tracked, lines: list[str], offset: int, publish: bool
        ) -> tuple[None, bool]:
            nonlocal exited
            if exited:
                after_exit["feeds"] += 1
            result = super().feed_chunk(tracked, lines, offset, publish)
            if any("EXITING WITH STATUS" in line for line in lines):
                assert tracked.wf is not None
                tracked.wf.dagman_exit, tracked.wf.state, exited = 0, "end", True
            return result

    class Counting(Polling):
        async def wait(self, path: str, timeout: float) -> None:
            after_exit["waits"] += exited
            await super().wait(path, timeout)

    class Reads(LineFollower):
        async def read_lines(self, limit: int = READ_SIZE) -> list[str]:
            after_exit["reads"] += exited
            return await super().read_lines(limit)

    monkeypatch.setattr(following, "LineFollower", Reads)
    path, registry = _one_workflow(tmp_path)
    host = Exiting()
    written = [f"line {n}" for n in range(200)] + ["(condor_DAGMAN) pid 1 EXITING WITH STATUS 0"]

    async def main() -> None:
        stop = asyncio.Event()
        loop = FollowLoop(host, registry, Counting())  # type: ignore[arg-type]
        follow = asyncio.create_task(loop.run(stop))
        with path.open("a") as fh:
            for n, line in enumerate(written):
                fh.write(line + "\n")
                fh.flush()
                if n % 20 == 19:
                    await asyncio.sleep(0.01)
        done, _ = await asyncio.wait({follow}, timeout=30)  # a loaded machine: not a timing
        stop.set()
        await follow
        await loop.close()
        assert done, "the follow did not end by itself after DAGMan's exit line"

    asyncio.run(main())
    assert host.lines == written  # every line, in order, once
    # the owed publish (none if the exit line's chunk published) and a read that finds nothing
    assert after_exit["waits"] == 0, after_exit
    assert after_exit["feeds"] <= 1 and after_exit["reads"] <= 2, after_exit
