"""File sink: append vs overwrite, one write per batch, JSON lines, stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitord.core.events import GenericEvent
from sinks.file_sink import FileSink
from sinks.runtime.base import Sink, SinkError


def _events(n: int) -> list[GenericEvent]:
    return [
        GenericEvent("xwf.meta", {"ts": 1677911023 + i, "xwf.id": "u", "key": f"k{i}"})
        for i in range(n)
    ]


def test_is_a_sink() -> None:
    assert isinstance(FileSink("x"), Sink)


def test_append_then_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "events.bp"
    path.write_text("old line\n")
    sink = FileSink(str(path), overwrite=False)
    sink.open()
    sink.write_batch(_events(2))
    sink.close()
    lines = path.read_text().splitlines()
    assert lines[0] == "old line" and len(lines) == 3
    assert lines[1].startswith("ts=2023-03-04T06:23:43.000000Z event=stampede.xwf.meta level=Info")

    sink = FileSink(str(path), overwrite=True)
    sink.open()
    sink.write_batch(_events(1))
    sink.flush()
    assert path.read_text().count("\n") == 1
    sink.close()


def test_json_one_object_per_line(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    sink = FileSink(str(path), encoding="json", overwrite=True)
    sink.open()
    sink.write_batch(_events(3))
    sink.close()
    objs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [o["key"] for o in objs] == ["k0", "k1", "k2"]
    assert all(list(o)[-1] == "event" and "xwf_id" in o for o in objs)


def test_dash_means_stdout(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    sink = FileSink("-")
    sink.open()
    sink.write_batch(_events(1))
    sink.close()
    assert capfdbinary.readouterr().out.startswith(b"ts=2023-03-04T06:23:43.000000Z event=")
    assert not Path("-").exists()


def test_errors_are_sink_errors(tmp_path: Path) -> None:
    with pytest.raises(SinkError):
        FileSink(str(tmp_path), overwrite=True).open()  # a directory
    with pytest.raises(SinkError):
        FileSink("x", encoding="bson")
