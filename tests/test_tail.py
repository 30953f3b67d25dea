"""LineFollower: complete lines only, offsets for checkpoints, truncation and replacement."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from monitord.daemon import tail
from monitord.daemon.tail import ChangeWatch, LineFollower, wait_for_change


async def test_partial_lines_are_held_back(tmp_path: Path) -> None:
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"one\ntw")
    f = LineFollower(str(path))
    assert await f.read_lines() == ["one"]
    assert f.offset == 4 and f.pending() is False
    with path.open("ab") as fh:
        fh.write(b"o\nthree\nfo")
    assert f.pending()
    assert await f.read_lines() == ["two", "three"]
    assert f.offset == len(b"one\ntwo\nthree\n")
    assert f.take_partial() == ["fo"] and f.offset == path.stat().st_size


async def test_resume_from_offset_and_small_reads(tmp_path: Path) -> None:
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"a\nbb\nccc\n")
    f = LineFollower(str(path), offset=2)
    lines = []
    while f.pending():
        lines += await f.read_lines(limit=3)
    assert lines == ["bb", "ccc"]


async def test_truncation_and_replacement_are_noticed(tmp_path: Path) -> None:
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"a\nb\n")
    f = LineFollower(str(path))
    await f.read_lines()
    assert not f.check().truncated
    path.write_bytes(b"a\n")  # same inode, shorter
    assert f.check().truncated
    other = tmp_path / "new"
    other.write_bytes(b"zzzzzz\n")
    os.replace(other, path)
    assert f.check().replaced


async def test_wait_for_change_wakes_on_append(tmp_path: Path) -> None:
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"")

    async def append_later() -> None:
        await asyncio.sleep(0.3)
        with path.open("ab") as fh:
            fh.write(b"line\n")

    task = asyncio.create_task(append_later())
    start = time.perf_counter()
    await wait_for_change(str(path), timeout=10)
    waited = time.perf_counter() - start
    await task
    assert waited < 5, waited  # woken by the write, long before the timeout


async def test_a_read_is_one_hop_to_the_loops_pool(tmp_path: Path) -> None:
    """A follower reads ten chunks a second at a steady rate: the open, read and close are
    one worker-thread hop (aiofiles.os.wrap; its file object made four, each a wake-up of the event loop)."""
    path = tmp_path / "x.dagman.out"
    lines = [f"line {n}" for n in range(1000)]
    path.write_text("".join(line + "\n" for line in lines))
    loop = asyncio.get_running_loop()
    hops: list[object] = []
    run_in_executor = loop.run_in_executor

    def counted(executor: object, func: object, *args: object) -> object:
        hops.append(func)
        return run_in_executor(executor, func, *args)  # type: ignore[arg-type]

    loop.run_in_executor = counted  # type: ignore[method-assign,assignment]
    try:
        f = LineFollower(str(path))
        assert await f.read_lines() == lines
        assert await f.read_lines() == []  # nothing new: a stat, no hop
    finally:
        del loop.run_in_executor
    assert len(hops) == 1, hops
    assert f.offset == path.stat().st_size


async def test_a_steady_writer_wakes_the_watch_about_ten_times_a_second(tmp_path: Path) -> None:
    """A dagman.out written every few ms (DAGMan at 5,000 lines/s) wakes its watch about
    every tail.DEBOUNCE_MS (100 ms), not every 20: a follower reads on its own clock meanwhile,
    and each report is a thread hop and an event-loop wake-up (~50 a second at 10/20 ms)."""
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"")
    watch = ChangeWatch(str(path), polling=False, initial=False)
    reports: list[float] = []
    changed_set = watch._changed.set

    def counted() -> None:
        reports.append(time.monotonic())
        changed_set()

    watch._changed.set = counted  # type: ignore[method-assign]
    async with watch:
        await asyncio.sleep(0.2)  # the watcher is up
        reports.clear()
        began = time.monotonic()
        with path.open("ab") as fh:
            for n in range(200):  # ~1 s
                fh.write(b"line %d\n" % n)
                fh.flush()
                await asyncio.sleep(0.005)
        seconds = time.monotonic() - began + 0.2  # the sleeps stretch on a loaded machine
    assert reports, "a steady writer is still seen"
    assert len(reports) <= seconds * 10 * 1.5 + 2, (len(reports), seconds)


async def test_a_watch_nobody_waits_on_rests_and_the_next_wait_sees_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower behind a steady writer reads on its own clock and never waits: its watch
    closes its watcher (tail.REST_AFTER) instead of stepping and reporting for nobody; the
    changes stay noted, the next wait returns at once and starts the watcher again, and a
    change after that wakes a wait as before (no lost wake-up)."""
    monkeypatch.setattr(tail, "REST_AFTER", 0.2)
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"")
    async with ChangeWatch(str(path), polling=False, initial=False) as watch:
        await watch.wait(0.01)
        with path.open("ab") as fh:
            for n in range(1000):  # up to ~10 s on a loaded machine
                fh.write(b"line %d\n" % n)
                fh.flush()
                await asyncio.sleep(0.01)
                if watch.resting:
                    break
            assert watch.resting, "a watch nobody waited on kept watching"
            assert await watch.wait(10)  # what changed meanwhile is noted
            assert not watch.resting
            assert not await watch.wait(0.01)  # nothing new
            fh.write(b"after\n")
            fh.flush()
            assert await watch.wait(10)


async def test_a_watch_that_is_waited_on_does_not_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower of a slow writer waits between its lines: its watch never rests."""
    monkeypatch.setattr(tail, "REST_AFTER", 0.2)
    path = tmp_path / "x.dagman.out"
    path.write_bytes(b"")
    async with ChangeWatch(str(path), polling=False, initial=False) as watch:
        with path.open("ab") as fh:
            for n in range(60):
                fh.write(b"line %d\n" % n)
                fh.flush()
                await watch.wait(0.05)
                assert not watch.resting, n
