"""The child process and the crossing spare the cyclic collector work that finds no garbage
(issue 30, bench/README.md "Issue 30, ninth session: cpu30f").

A decoded batch is thousands of new containers (the unpickled tuples, the events), none of
them garbage: decoding it sets off no collection, and leaves the collector as it found it.
The child (``sinks/runtime/child.py``) freezes its start-up state before it serves, and the
SQL child what opening its sink made.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from monitord.core.eventbase import Fixed
from monitord.core.events import InvStart, StampedeEvent
from sinks.runtime.base import SinkError
from sinks.runtime.crossing import decode_events, encode_events
from sinks.runtime.process_sink import ProcessSink


def _batch(n: int) -> list[StampedeEvent]:
    fixed = Fixed(xwf_id="u", root_xwf_id="r", wf_ts=7, submit_dir="/s")
    return [
        InvStart(xwf_id="u", job_id=f"j{i}", job_inst_id=i, inv_id=1, ts=i, fixed=fixed)
        for i in range(n)
    ]


@pytest.mark.quick
def test_decoding_a_batch_sets_off_no_collection(collections: list[int]) -> None:
    data = encode_events(_batch(3000))
    gc.collect()
    collections.clear()
    back = decode_events(data)
    assert len(back) == 3000
    assert collections == []  # on the old crossing: one young collection every 700 containers
    assert gc.isenabled()


@pytest.mark.quick
def test_decoding_leaves_a_paused_collector_paused() -> None:
    data = encode_events(_batch(10))
    gc.disable()
    try:
        decode_events(data)
        assert not gc.isenabled()
    finally:
        gc.enable()


class Probe:
    """A sink (picklable: it crosses into the child) that reports the child's frozen objects
    in its error."""

    name = "probe"
    destination = "probe://x"

    def open(self) -> None:
        pass

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        collections = sum(generation["collections"] for generation in gc.get_stats())
        frozen = gc.get_freeze_count()
        enabled = int(gc.isenabled())
        raise SinkError(
            f"collections={collections} frozen={frozen} enabled={enabled}", retryable=False
        )

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _probed(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """What the probe reports from its child: its collections so far, its frozen objects."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the child imports tests.*
    sink = ProcessSink(Probe())  # type: ignore[arg-type]
    sink.open()
    try:
        with pytest.raises(SinkError) as exc:
            sink.write_batch(_batch(1))
    finally:
        sink.close()
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", str(exc.value))}


def test_the_child_serves_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _probed(monkeypatch)["frozen"] > 10_000  # the child's modules (old child: 0)


def test_the_child_loads_its_payload_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The payload's modules (here this module and pytest, SQLAlchemy for the SQL sink) make
    no garbage: loading them sets off no collection (as the daemon's, ``monitord/cli``).  The
    collections left are the interpreter's start and ``sinks.runtime.child``'s own imports
    (28 here; 81 while the payload loaded with the collector on)."""
    assert _probed(monkeypatch)["collections"] < 40


def test_the_child_writes_a_batch_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch's write (the SQL loader's rows and cache entries) makes no cycles: the child
    writes it with the collector paused, as it decodes it (on again once answered)."""
    assert _probed(monkeypatch)["enabled"] == 0
