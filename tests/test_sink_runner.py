"""Sink isolation: every sink gets every batch; a failing sink is retried or disabled alone."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from monitord.core.events import StampedeEvent, make_event
from sinks.runtime.base import SinkError
from sinks.runtime.codec import decode_batch, encode_batch
from sinks.runtime.runner import SinkWorker
from sinks.runtime.sinkset import SinkSet
from sinks.sql import SQLSink
from tests.event_check import wire


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.events: list[StampedeEvent] = []
        self.closed = False

    def open(self) -> None:
        pass

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self.events.extend(events)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class Broken(Recorder):
    name = "broken"

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        raise RuntimeError("disk on fire")


class Flaky(Recorder):
    name = "flaky"

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if self.failures:
            self.failures -= 1
            raise SinkError("database is locked", retryable=True)
        super().write_batch(events)


def ev(i: int) -> StampedeEvent:
    return make_event(
        "xwf.start", {"xwf.id": "w", "ts": float(i), "reason": None, "restart_count": 0}
    )


def test_a_broken_sink_does_not_stop_the_others() -> None:
    good, bad = Recorder(), Broken()
    sinks = SinkSet([good, bad])
    sinks.start()
    for i in range(5):
        sinks.publish([ev(i), ev(i + 100)])
    sinks.close()
    assert len(good.events) == 10 and good.closed
    assert [w.failed for w in sinks.workers] == [False, True]


def test_retryable_errors_are_retried_until_the_batch_lands(monkeypatch) -> None:
    monkeypatch.setattr("sinks.runtime.delivery.time.sleep", lambda s: None)
    flaky = Flaky(failures=3)
    worker = SinkWorker(flaky)
    worker.start()
    worker.put([ev(1), ev(2)])
    worker.flush()
    worker.stop()
    assert [wire(e)["ts"] for e in flaky.events] == [1.0, 2.0]
    assert not worker.failed and worker.events_written == 2


def test_batch_encoding_round_trip_keeps_types_and_order() -> None:
    batch = [
        ev(1),
        make_event(
            "inv.end",
            {
                "xwf.id": "w",
                "job.id": "j",
                "job_inst.id": 1,
                "inv.id": -2,
                "exitcode": "0",
                "dur": 0.5,
                "argv": "a 'b' \\c",
                "invocations": [{"x": 1}],
            },
        ),
    ]
    back = decode_batch(encode_batch(batch))
    assert back == batch
    assert [[k for k, _ in e.wire_items()] for e in back] == [
        [k for k, _ in e.wire_items()] for e in batch
    ]


def test_sql_sink_writes_its_database(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sinks = SinkSet([SQLSink(f"sqlite:///{db}")])
    sinks.start()
    plan = make_event(
        "wf.plan", {"xwf.id": "w", "ts": 1, "dag.file.name": "x.dag", "root.xwf.id": "w"}
    )
    sinks.publish([plan])
    sinks.publish([ev(5)])
    sinks.flush()
    sinks.close()
    assert os.path.exists(db)
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from workflow").fetchone()[0] == 1
    assert con.execute("select count(*) from workflowstate").fetchone()[0] == 1


def test_sql_sink_that_cannot_open_is_disabled(tmp_path: Path) -> None:
    sinks = SinkSet([SQLSink(f"sqlite:///{tmp_path}/missing-dir/w.db")])
    sinks.start()
    sinks.publish([ev(1)])
    sinks.flush()
    sinks.close()
    assert sinks.workers[0].failed
