"""The read-ahead worker's outbox (issue 30, ``monitord/daemon/outbox.py``): the worker goes on
making its messages while the parser asks for none (the workflow open), up to a bound in
bytes; the parser receives the same messages in the same order, one per ``next``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from multiprocessing import Pipe
from typing import Any

import pytest

from monitord.daemon import outbox, readahead
from monitord.daemon.readahead import Plan, serve_read_ahead

COUNT = 40  # messages the fake stream makes: well over WINDOW


def _serve(monkeypatch: pytest.MonkeyPatch, made: list[int]) -> tuple[Any, threading.Thread]:
    """A worker on a fake stream of COUNT messages (``made`` counts those made), in a thread
    at the other end of a pipe; the parser's end, its ``("ok", start)`` read."""

    def messages(plan: Plan) -> Iterator[Any]:
        for i in range(COUNT):
            made.append(i)
            yield [(("out", f"job{i}.out"), None, "x" * 100)]

    monkeypatch.setattr(readahead, "_messages", messages)
    parser, worker = Pipe()
    thread = threading.Thread(target=_worker, args=(worker,), daemon=True)
    thread.start()
    assert parser.recv()[0] == "ok"
    return parser, thread


def _worker(conn: Any) -> None:
    try:
        serve_read_ahead(conn, Plan("/nonexistent.dagman.out", store_stdout=True))
    except (EOFError, OSError):
        pass  # the parser's end closed: the worker ends


def _wait_for(made: list[int], count: int) -> None:
    """Until ``count`` messages were made, or 30 s."""
    for _ in range(3000):
        if len(made) >= count:
            return
        threading.Event().wait(0.01)


def _next(parser: Any) -> Any:
    parser.send(("next",))
    assert parser.poll(30), "no answer"
    return parser.recv()


def _receive_the_rest(parser: Any, thread: threading.Thread, received: list[Any]) -> None:
    """The messages after those ``received`` (the first WINDOW), one credit each: all COUNT
    arrive in the stream's order, then the end; then the worker ends with the pipe."""
    received = received + [_next(parser) for _ in range(COUNT - outbox.WINDOW)]
    assert [batch[0][0][1] for batch in received] == [f"job{i}.out" for i in range(COUNT)]
    assert _next(parser)[0] == "end"
    parser.close()
    thread.join(30)


def test_the_worker_makes_its_messages_ahead_of_the_parsers_asking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No ``next`` sent: every message is made all the same (without the outbox: WINDOW + 1,
    the worker waiting on the pipe); then each ``next`` gets the next one, in order, then the
    end."""
    made: list[int] = []
    parser, thread = _serve(monkeypatch, made)
    in_flight = [parser.recv() for _ in range(outbox.WINDOW)]
    _wait_for(made, COUNT)
    assert len(made) == COUNT, f"made {len(made)} of {COUNT} with no credit"
    received = in_flight + [_next(parser) for _ in range(COUNT - outbox.WINDOW)]
    assert [batch[0][0][1] for batch in received] == [f"job{i}.out" for i in range(COUNT)]
    end = _next(parser)
    assert end[0] == "end"
    parser.close()
    thread.join(30)
    assert not thread.is_alive()


def test_the_worker_holds_no_more_than_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds below a message's size: the worker holds one message, then waits for a credit
    before making the next (what it holds does not grow with the job count)."""
    monkeypatch.setattr(outbox, "BANK", 1)
    monkeypatch.setattr(outbox, "SPILL", 1)
    made: list[int] = []
    parser, thread = _serve(monkeypatch, made)
    in_flight = [parser.recv() for _ in range(outbox.WINDOW)]
    _wait_for(made, outbox.WINDOW + 1)
    threading.Event().wait(0.2)  # time for a sixth, were it made
    assert len(made) == outbox.WINDOW + 1  # the fifth made and held; no sixth
    _receive_the_rest(parser, thread, in_flight)


MESSAGE = 150  # bytes of one fake message, pickled (about)


@pytest.mark.parametrize("bank", [1, 3 * MESSAGE])
def test_beyond_its_memory_the_worker_holds_its_messages_in_a_file(
    monkeypatch: pytest.MonkeyPatch, bank: int
) -> None:
    """Memory for no message, or for three: every message is made all the same, the rest
    held in the spill file (on a 100,000-job replay the open outlasts the memory's bound),
    and the parser gets them all in order (those in memory first), then the end."""
    monkeypatch.setattr(outbox, "BANK", bank)
    made: list[int] = []
    parser, thread = _serve(monkeypatch, made)
    in_flight = [parser.recv() for _ in range(outbox.WINDOW)]
    _wait_for(made, COUNT)
    assert len(made) == COUNT, f"made {len(made)} of {COUNT} with no credit"
    _receive_the_rest(parser, thread, in_flight)


def test_a_spill_file_that_cannot_be_written_makes_the_worker_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No temporary file (a full or read-only TMPDIR): the worker holds what memory takes
    and waits for credits, as without the file; nothing is lost or reordered."""

    def refuse() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outbox, "BANK", 3 * MESSAGE)
    monkeypatch.setattr(outbox.tempfile, "TemporaryFile", refuse)
    made: list[int] = []
    parser, thread = _serve(monkeypatch, made)
    in_flight = [parser.recv() for _ in range(outbox.WINDOW)]
    threading.Event().wait(0.3)  # time for more, were they made
    assert len(made) < COUNT
    _receive_the_rest(parser, thread, in_flight)


def test_a_file_that_fails_mid_way_keeps_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file takes some messages, then refuses: those in it are sent before any newer
    one is held in memory (the order the parser gets stays the stream's)."""
    writes: list[int] = []
    real = outbox.os.pwrite

    def pwrite(fd: int, data: Any, at: int) -> int:
        writes.append(at)
        if len(writes) > 5:
            raise OSError(28, "No space left on device")
        return real(fd, data, at)

    monkeypatch.setattr(outbox, "BANK", 3 * MESSAGE)
    monkeypatch.setattr(outbox.os, "pwrite", pwrite)
    made: list[int] = []
    parser, thread = _serve(monkeypatch, made)
    received = [parser.recv() for _ in range(outbox.WINDOW)]
    _wait_for(made, outbox.WINDOW + 3 + 6)  # three in memory, five in the file, one refused
    assert len(writes) == 6
    _receive_the_rest(parser, thread, received)


def test_the_spill_file_does_not_grow_beyond_its_bound_while_the_parser_lags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """review30l: a parser that stays a few messages behind the worker for the whole replay (a
    slow sink) never lets the spill file empty; what was read back stays in it until it is, so
    the file's length (not only what is held) is what SPILL bounds, and every message still
    arrives once, in order."""
    import os

    monkeypatch.setattr(outbox, "BANK", 1)  # every held message goes to the file
    monkeypatch.setattr(outbox, "SPILL", 50_000)
    parser, worker = Pipe()
    box = outbox.Outbox(worker)
    lengths: list[int] = []
    write = outbox.Spill.write

    def measured(spill: outbox.Spill, data: bytes) -> bool:
        done = write(spill, data)
        lengths.append(os.fstat(spill.file.fileno()).st_size)
        return done

    monkeypatch.setattr(outbox.Spill, "write", measured)
    count = 2000

    def make() -> None:
        for i in range(count):
            box.put([i, "x" * 1000])
        box.flush()

    thread = threading.Thread(target=make, daemon=True)
    thread.start()
    got = []
    for _ in range(count):  # one credit per message read: the worker stays ahead all along
        assert parser.poll(30), "no message"
        got.append(parser.recv()[0])
        parser.send(("next",))
    thread.join(30)
    assert got == list(range(count))
    assert lengths, "nothing went by the file"
    assert max(lengths) <= outbox.SPILL, f"the file reached {max(lengths)} bytes"


def test_a_spill_file_that_cannot_be_read_back_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """review30l: a read of the spill file that fails (EIO) ends the worker as a closed pipe
    does (``serve_read_ahead`` re-raises OSError, ``sinks/runtime/child.py`` swallows it): the
    parser falls back, but no line says why; the worker's own reason should be logged."""
    import errno

    import structlog

    def pread(fd: int, n: int, at: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(outbox, "BANK", 1)
    monkeypatch.setattr(outbox.os, "pread", pread)
    made: list[int] = []
    with structlog.testing.capture_logs() as logs:
        parser, thread = _serve(monkeypatch, made)  # the first message goes by the file
        thread.join(30)
        parser.close()
    assert not thread.is_alive()
    said = [e for e in logs if e["log_level"] in ("error", "warning")]
    assert said, f"the worker ended on a failed spill read without a line: {logs}"


def test_the_held_messages_are_one_queue_memory_first_then_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mend30m: ``Held`` is one ordered queue over its two stores: memory takes the first
    (up to BANK), the file the rest, even once memory has room again; they come back in the
    order added; the file at its bound refuses more until it was read back to empty."""
    monkeypatch.setattr(outbox, "BANK", 250)
    monkeypatch.setattr(outbox, "SPILL", 450)
    held = outbox.Held()
    messages = [bytes([i]) * 100 for i in range(7)]
    added = [held.add(data) for data in messages]
    assert added == [True] * 6 + [False]  # two in memory, four in the file, the file full
    assert (len(held.memory), len(held.spill.lengths)) == (2, 4)
    got = [held.take()]
    assert not held.add(messages[6])  # memory has room, but the newer go after the file's
    while held.spilled():
        got.append(held.take())
    assert held.add(messages[6]) and held.take() == messages[6]
    assert got == messages[:6] and not held
