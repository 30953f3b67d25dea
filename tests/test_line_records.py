"""The read-ahead worker's records of dagman.out lines (issue 30, classify30i).

A machine fed a chunk's records does what one classifying each line does: the same events,
jobstate.log lines and line count, across the list of log files and a recovery (whose lines
go line by line), whatever the chunks' size.  The parser takes a chunk's records only where
the worker's chunk is its own, and classifies itself otherwise.
"""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from monitord.core import dagman as D
from monitord.core.jobreader import ParsingReader
from monitord.core.linerecords import records_of
from monitord.daemon import readahead
from monitord.daemon.jobfiles import read_text
from monitord.daemon.readahead import Plan, ReadAhead
from sinks.runtime.child import ChildGone
from tests.event_check import wire
from tests.status_fixtures import corpus_dagman_outs, open_workflow

CASES = Path(__file__).resolve().parent / "data" / "cases"


def _dagman_outs() -> list[Path]:
    return sorted(CASES.glob("*/input/*.dag.dagman.out")) + corpus_dagman_outs()


def _fed(out: Path, chunk: int, *, with_records: bool) -> tuple[Any, ...]:
    wf = open_workflow(out)
    lines = out.read_bytes().decode("utf-8", errors="replace").split("\n")
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        wf.feed_lines(part, records_of(part, 0.0) if with_records else None)
    return [wire(e) for e in wf.events], wf.jobstate_lines, wf.line_no, wf.in_recovery


def test_a_record_is_the_classified_line_as_a_tuple() -> None:
    """``record_line`` (the worker's) gives each line's ``classify_line`` fields, its kind
    and time included, behind the line's position: every line of the cases and corpus, and
    with an ``adjust``."""
    seen: set[str] = set()
    shared: dict[str | None, str | None] = {}
    share = shared.setdefault
    for out in _dagman_outs():
        lines = out.read_bytes().decode("utf-8", errors="replace").split("\n")
        for adjust in (0.0, -3600.0):
            for pos, line in enumerate(lines):
                line = line.rstrip()
                rec = D.classify_line(line, adjust)
                want = None if rec is None else (pos, *astuple(rec))
                assert D.record_line(line, adjust, pos, share) == want, line
                if rec is not None:
                    seen.add(rec.kind)
    assert len(seen) >= 12, seen


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_a_machine_fed_records_does_what_one_classifying_each_line_does(chunk: int) -> None:
    outs = _dagman_outs()
    assert any("RECOVERY mode" in out.read_text(errors="replace") for out in outs)
    for out in outs:
        expected = _fed(out, chunk, with_records=False)
        assert _fed(out, chunk, with_records=True) == expected, out
        assert expected[0] and expected[2] > 0, out


class _Worker:
    """The worker's side of the pipe, scripted: its messages in order; ``late``: none waits."""

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages
        self.late = False

    def ready(self, timeout: float = 0.0) -> bool:
        return not self.late  # an end of the pipe too: the call says so

    def call(self, message: Any, timeout: float | None = None) -> Any:
        if not self.messages:
            raise ChildGone("gone")
        return self.messages.pop(0)

    def close(self) -> None:
        pass

    def kill(self) -> None:
        pass


def _reader(messages: list[Any]) -> tuple[ReadAhead, _Worker]:
    ahead = ReadAhead(Plan("/run/w.dag.dagman.out", True, zone=()), ParsingReader(read_text))
    worker = _Worker(messages)
    ahead._child = worker
    return ahead, worker


def _block(first: int, count: int, size: int) -> tuple[Any, ...]:
    records = [(0, "ulog", 1.0, f"job{first}", "SUBMIT", "1.0", None, None)]
    return ("lines", (7, first, count, size), records)


def test_the_parser_takes_a_chunks_records_only_where_the_chunk_is_its_own() -> None:
    files = [(("out", "/run/a.out"), None, None)]
    ahead, worker = _reader([_block(0, 10, 300), files, _block(10, 5, 150), _block(15, 5, 90)])
    path = "/run/w.dag.dagman.out"
    assert ahead.records("/run/sub/w.dag.dagman.out", (7, 0, 10, 300)) is None  # another file
    (rec,) = ahead.records(path, (7, 0, 10, 300)) or []
    assert rec[3] == "job0"
    worker.late = True  # the worker LAG late: classified here, its block dropped when it comes
    assert ahead.records(path, (7, 10, 5, 150)) is None
    worker.late = False
    assert ahead.records(path, (7, 15, 5, 91)) is None  # cut otherwise: never again
    assert ahead._ready  # the job files pulled on the way are kept for their questions
    assert ahead.records(path, (7, 20, 5, 90)) is None
    assert ahead.chunks == {"classified": 1, "here": 3, "dropped": 2}


def test_chunks_dropped_while_the_parser_waited_leave_the_later_ones_used() -> None:
    """Past BLOCKS held (pulled while the parser looked for a job file), the oldest chunks go:
    the parser classifies those itself and takes the worker's records again after them."""
    blocks = [_block(first, 10, 300) for first in range(0, 10 * (readahead.BLOCKS + 2), 10)]
    ahead, _ = _reader(blocks)
    while ahead._pull():  # (the parser behind, waiting on a job file)
        pass
    path = "/run/w.dag.dagman.out"
    assert ahead.records(path, (7, 0, 10, 300)) is None
    assert ahead.records(path, (7, 10, 10, 300)) is None
    (rec,) = ahead.records(path, (7, 20, 10, 300)) or []
    assert rec[3] == "job20" and ahead._lines
    assert ahead.chunks == {"classified": 1, "here": 2, "dropped": 2}


def test_a_worker_sending_no_records_says_so_and_the_parser_stops_waiting() -> None:
    files = [(("out", "/run/a.out"), None, None)]
    ahead, worker = _reader([("lines-off",), files])
    path = "/run/w.dag.dagman.out"
    assert ahead.records(path, (7, 0, 10, 300)) is None
    assert not ahead._lines and worker.messages == [files]  # no job files pulled for it
    assert ahead.records(path, (7, 10, 10, 300)) is None
    assert ahead.chunks == {"classified": 0, "here": 2, "dropped": 0}


def test_the_worker_in_another_zone_says_so_first(monkeypatch: pytest.MonkeyPatch) -> None:
    out = str(_dagman_outs()[0])
    monkeypatch.setenv("TZ", "UTC")  # (the worker's zone check sets TZ: undone after)
    readahead.time.tzset()
    try:
        other = ("UTC", ("XYZ", "XYZ"), 1, 1, 0)
        assert next(readahead._messages(Plan(out, True, zone=other))) == ("lines-off",)
        first = next(readahead._messages(Plan(out, True, zone=readahead.zone())))
        assert first[0] == "lines"
    finally:
        monkeypatch.undo()
        readahead.time.tzset()


def test_a_worker_gone_leaves_the_parser_classifying() -> None:
    ahead, _ = _reader([_block(0, 10, 300)])
    path = "/run/w.dag.dagman.out"
    assert ahead.records(path, (7, 0, 10, 300)) is not None
    assert ahead.records(path, (7, 10, 10, 300)) is None
    assert ahead._child is None and ahead.counts["worker_lost"] == 1


def test_a_worker_in_another_zone_sends_no_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    readahead.time.tzset()
    try:
        assert readahead._same_zone(readahead.zone())
        assert not readahead._same_zone(("UTC", ("XYZ", "XYZ"), 1, 1, 0))
        assert not readahead._same_zone(None)
    finally:
        monkeypatch.undo()
        readahead.time.tzset()
