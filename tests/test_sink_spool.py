"""The on-disk spool around every sink: an outage never blocks the daemon or loses an event.

Unit tests drive fake sinks that fail retryably while a switch is on (threads and a child
process); the real tests stop the PostgreSQL test server under a replaying daemon and
compare the database, once the server is back, with the reference's ``stampede.db``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url
from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent, make_event
from sinks.runtime.base import SinkError
from sinks.runtime.runner import SinkWorker
from sinks.runtime.sinkset import SinkSet
from sinks.runtime.spool import BatchSpool, SpoolSettings, sink_key
from tests.conftest import CORPUS, CORPUS_TZ, STAMPEDE_DIFF, copy_submit_dir, require_corpus
from tests.dbcopy import copy_to_sqlite
from tests.event_check import wire
from tests.servers import create_database, drop_database, require_server, service


def ev(i: int) -> StampedeEvent:
    return make_event(
        "xwf.start", {"xwf.id": "w", "ts": float(i), "reason": None, "restart_count": 0}
    )


def batch(n: int, size: int = 3) -> list[StampedeEvent]:
    return [ev(n * size + k) for k in range(size)]


def stamps(events: Sequence[StampedeEvent]) -> list[float]:
    return [float(wire(e)["ts"]) for e in events]


class FakeSink:
    """Records what it is given; fails retryably while ``down`` is set (writes, or opens)."""

    def __init__(
        self,
        name: str,
        down: threading.Event | None = None,
        *,
        fail_open: bool = False,
        permanent: bool = False,
    ) -> None:
        self.name = name
        self.display_url = f"fake://{name}"
        self.down = down or threading.Event()
        self.fail_open = fail_open
        self.permanent = permanent
        self.events: list[StampedeEvent] = []
        self.opened = 0
        self.calls_while_down = 0

    def open(self) -> None:
        if self.fail_open and self.down.is_set():
            self.calls_while_down += 1
            raise SinkError("connection refused", retryable=True)
        self.opened += 1

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        if self.permanent:
            raise SinkError("no such table")
        if self.down.is_set():
            self.calls_while_down += 1
            raise SinkError("server closed the connection", retryable=True)
        self.events.extend(events)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def settings(tmp_path: Path, **kw: float | bool) -> SpoolSettings:
    base: dict[str, float | bool] = {"first_backoff": 0.05, "max_backoff": 0.2}
    return SpoolSettings(str(tmp_path / "monitord.spool"), **{**base, **kw})  # type: ignore[arg-type]


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def publish_all(sinks: SinkSet, batches: range) -> list[float]:
    """Publish from another thread; fails if publishing does not finish (it blocked)."""
    durations: list[float] = []

    def produce() -> None:
        for n in batches:
            started = time.perf_counter()
            sinks.publish(batch(n))
            durations.append(time.perf_counter() - started)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    producer.join(30)
    assert not producer.is_alive(), "publish blocked on a down sink"
    return durations


def frames_on_disk(spool_dir: Path) -> int:
    from sinks.runtime.spool.segments import decode_frames

    return sum(
        len(decode_frames(seg.read_bytes(), 0)[0]) for seg in sorted(spool_dir.glob("*.seg"))
    )


# --------------------------------------------------------------------------- the spool itself


def test_batch_spool_keeps_batches_across_reopen_and_discards(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    spool = BatchSpool(path)
    spool.open()
    for n in range(3):
        spool.append(n + 1, f"batch{n}".encode())
    spool.sync()
    assert (spool.batches, spool.events) == (3, 6)
    spool.close()
    again = BatchSpool(path)
    again.open()
    assert (again.batches, again.events) == (3, 6)  # counted from the frames on disk
    assert again.head() == (1, b"batch0")
    again.commit()
    assert again.head() == (2, b"batch1")
    again.close()  # not empty: kept
    third = BatchSpool(path)
    third.open()
    assert (third.batches, third.events) == (2, 5)
    assert third.discard() == 5
    assert third.head() is None
    third.close()  # empty: removed with its (empty) parent
    assert not os.path.exists(path)


def test_sink_key_is_stable_and_password_free() -> None:
    a, b = FakeSink("a"), FakeSink("a")
    assert sink_key(a) == sink_key(b) and sink_key(a) != sink_key(FakeSink("b"))


def test_spool_settings_from_properties(tmp_path: Path) -> None:
    default = str(tmp_path / "run" / "monitord.spool")
    plain = SpoolSettings.from_properties(default, restart=True, workflow="wf1")
    assert plain.root == default and plain.restart and plain.drain_timeout == 10.0
    props = {
        "pegasus.monitord.spool.dir": "spools",  # relative to the run dir; one dir per workflow
        "pegasus.monitord.spool.drain_timeout": "2.5",
        "pegasus.monitord.spool.max_backoff": "soon",  # bad: the default stays
    }
    tuned = SpoolSettings.from_properties(default, restart=False, workflow="wf1", properties=props)
    assert tuned.root == str(tmp_path / "run" / "spools" / "wf1")
    assert (tuned.drain_timeout, tuned.max_backoff) == (2.5, 5.0)


# --------------------------------------------------------------------------- thread workers


def test_outage_spools_without_blocking_and_drains_in_order(tmp_path: Path) -> None:
    down = threading.Event()
    down.set()
    flaky, other = FakeSink("flaky", down), FakeSink("other")
    sinks = SinkSet([flaky, other], spool=settings(tmp_path))
    sinks.start()
    worker = sinks.workers[0]
    assert isinstance(worker, SinkWorker)
    durations = publish_all(sinks, range(60))
    sinks.flush()  # returns while the sink is down: the spool holds its share durably
    expected = stamps([e for n in range(60) for e in batch(n)])
    assert stamps(other.events) == expected  # the other sink is complete during the outage
    assert flaky.events == [] and down.is_set()
    assert worker.spooled == len(expected) and worker.down and worker.queued == 0
    spool_dir = Path(settings(tmp_path).path_for(flaky))
    assert frames_on_disk(spool_dir) == 60  # flushed: every batch is in the segment files
    outage_started = time.perf_counter()
    down.clear()
    publish_all(sinks, range(60, 70))  # new batches queue behind the spool, not ahead of it
    wait_for(lambda: worker.spooled == 0 and not worker.down)
    drained = time.perf_counter() - outage_started
    sinks.close()
    expected += stamps([e for n in range(60, 70) for e in batch(n)])
    assert stamps(flaky.events) == expected
    assert stamps(other.events) == expected
    assert not worker.failed and worker.failures >= 1 and worker.policy.outages == 1
    assert worker.drained_events >= 180
    assert not spool_dir.exists()  # an empty spool is removed
    print(
        f"\n{len(expected)} events; slowest publish while down {max(durations) * 1000:.1f} ms; "
        f"{worker.failures} failed attempts; drained {worker.drained_events} events in "
        f"{drained:.2f} s"
    )


def test_open_failing_at_start_then_recovering(tmp_path: Path) -> None:
    down = threading.Event()
    down.set()
    sink = FakeSink("late", down, fail_open=True)
    worker = SinkWorker(sink, spool=settings(tmp_path, drain_timeout=30.0))
    with capture_logs() as logs:
        worker.start()
        for n in range(10):
            worker.put(batch(n))
        worker.flush()
        wait_for(lambda: sink.calls_while_down >= 3)
    assert sink.opened == 0 and worker.spooled == 30
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1 and errors[0]["event"].startswith("cannot create events output")
    down.clear()
    worker.stop()  # keeps trying within drain_timeout: the sink opens and takes the spool
    assert sink.opened == 1
    assert stamps(sink.events) == [float(i) for i in range(30)]
    assert worker.spooled == 0 and not worker.failed


def test_permanent_error_disables_only_that_sink(tmp_path: Path) -> None:
    broken, other = FakeSink("broken", permanent=True), FakeSink("other")
    sinks = SinkSet([broken, other], spool=settings(tmp_path))
    with capture_logs() as logs:
        sinks.start()
        publish_all(sinks, range(20))
        sinks.flush()
        sinks.close()
    failed = [e for e in logs if e["event"].startswith("sink failed")]
    assert len(failed) == 1 and failed[0]["sink"] == "broken"
    assert [w.failed for w in sinks.workers] == [True, False]
    assert len(other.events) == 60 and broken.events == []
    assert not (tmp_path / "monitord.spool").exists()  # permanent errors are not spooled


class FailsTwice(FakeSink):
    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        self.calls_while_down += 1
        if self.calls_while_down <= 2:
            raise SinkError("deadlock detected", retryable=True)
        super().write_batch(events)


def test_unwritable_spool_falls_back_to_retrying_in_memory(tmp_path: Path) -> None:
    (tmp_path / "monitord.spool").write_text("a file where the spool directory should be")
    sink = FailsTwice("locked")
    worker = SinkWorker(sink, spool=settings(tmp_path))
    with capture_logs() as logs:
        worker.start()
        for n in range(6):
            worker.put(batch(n))
        worker.stop()
    assert stamps(sink.events) == [float(i) for i in range(18)] and not worker.failed
    assert any(e["event"].startswith("cannot write the sink's spool") for e in logs)


def _run_down(tmp_path: Path, name: str, batches: range) -> list[MutableMapping[str, Any]]:
    """A daemon whose sink stays down: stops cleanly, leaving the batches spooled."""
    down = threading.Event()
    down.set()
    worker = SinkWorker(FakeSink(name, down), spool=settings(tmp_path, drain_timeout=0.2))
    worker.start()
    with capture_logs() as logs:
        for n in batches:
            worker.put(batch(n))
        worker.flush()
        worker.stop()
    return logs


def test_spool_left_at_clean_stop_is_delivered_first_by_the_next_daemon(tmp_path: Path) -> None:
    logs = _run_down(tmp_path, "db", range(5))
    left = [e for e in logs if e["event"] == "events left undelivered in the spool"]
    assert len(left) == 1 and left[0]["events"] == 15
    sink = FakeSink("db")  # the same output, working again
    worker = SinkWorker(sink, spool=settings(tmp_path, restart=False))
    worker.start()
    for n in range(5, 8):
        worker.put(batch(n))
    worker.stop()
    assert stamps(sink.events) == [float(i) for i in range(24)]
    assert not (tmp_path / "monitord.spool").exists()


def test_recovery_start_discards_the_stale_spool(tmp_path: Path) -> None:
    _run_down(tmp_path, "db", range(5))
    sink = FakeSink("db")
    worker = SinkWorker(sink, spool=settings(tmp_path, restart=True))
    with capture_logs() as logs:
        worker.start()
        for n in range(5, 8):
            worker.put(batch(n))
        worker.stop()
    assert stamps(sink.events) == [float(i) for i in range(15, 24)]
    dropped = [e for e in logs if e["event"].startswith("outputs start over")]
    assert len(dropped) == 1 and dropped[0]["events"] == 15


# --------------------------------------------------------------------------- real PostgreSQL

SAMPLE = "hierarchical_wf_success"
BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"
OUTAGE = 20.0


def _diff(expected: Path, actual: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args, str(expected), str(actual)],
        capture_output=True,
        text=True,
        check=False,
    )


def _daemon(run: Path, home: Path, *args: str) -> list[str]:
    dagman_out = next(run.glob("*.dag.dagman.out"))
    return [sys.executable, "-m", "monitord.cli", *args, "--no-dashboard", dagman_out.name]


def _env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}


def _run(run: Path, home: Path, *args: str, status: int = 0) -> str:
    """One daemon; ``status`` 1 where its only destination is down (the events stay spooled)."""
    proc = subprocess.run(
        _daemon(run, home, *args), cwd=run, env=_env(home), capture_output=True, text=True
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == status, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    return output


@pytest.fixture
def pg_db() -> Iterator[str]:
    base = require_server("postgres")
    require_corpus()
    name = f"{make_url(base).database}_spool"
    url = create_database(base, name)
    try:
        yield url
    finally:
        service("start", "postgres")  # whatever happened, leave the server up
        drop_database(base, name)


def _assert_db_is_reference(url: str, tmp_path: Path, label: str) -> dict[str, int]:
    expected = CORPUS / SAMPLE / "expected" / "stampede.db"
    copy = tmp_path / f"{label}.db"
    counts = copy_to_sqlite(url, copy, expected)
    result = _diff(expected, copy)
    assert result.returncode == 0, result.stdout[-6000:]
    return counts


@pytest.mark.serial  # stops a shared test server
def test_postgres_down_when_the_replay_starts(pg_db: str, tmp_path: Path) -> None:
    """PG is down at start and for 20 s: the .bp sink completes meanwhile, the DB after."""
    run, home = tmp_path / "run", tmp_path / "home"
    copy_submit_dir(CORPUS / SAMPLE / "input", run)
    expected_bp = CORPUS / SAMPLE / "expected" / "events.bp"
    bp = tmp_path / "events.bp"
    service("stop", "postgres")
    started = time.monotonic()
    args = (
        "-Dpegasus.monitord.spool.drain_timeout=120",
        f"-Dpegasus.catalog.workflow.bp.url=file://{bp}",
        "-d",
        pg_db,
        "-r",
    )
    proc = subprocess.Popen(
        _daemon(run, home, *args), cwd=run, env=_env(home), stderr=subprocess.PIPE, text=True
    )
    try:
        want = expected_bp.read_bytes().count(b"\n")
        wait_for(lambda: bp.exists() and bp.read_bytes().count(b"\n") >= want, OUTAGE - 2)
        bp_done = time.monotonic() - started
        assert proc.poll() is None, "the daemon ended without waiting for the database"
        spool_root = run / "monitord.spool"

        def spooled() -> int:
            return sum(p.stat().st_size for p in spool_root.rglob("*.seg"))

        wait_for(lambda: spooled() > 0, 10)  # the SQL sink's process spools what it gets
        spooled_bytes = spooled()
        assert proc.poll() is None
        result = _diff(expected_bp, bp, "--bp", "--ignore", BP_IGNORE)
        assert result.returncode == 0, result.stdout[-4000:]
        time.sleep(max(0.0, OUTAGE - (time.monotonic() - started)))
        service("start", "postgres")
        back = time.monotonic()
        _, err = proc.communicate(timeout=300)
        drain = time.monotonic() - back
    finally:
        if proc.poll() is None:
            proc.kill()
    (tmp_path / "daemon.log").write_text(err)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "events left undelivered" not in err, err[-3000:]
    assert "sink is back" in err
    assert not spool_root.exists()
    counts = _assert_db_is_reference(pg_db, tmp_path, "server")
    print(
        f"\nPG down {OUTAGE:.0f} s from the start: .bp complete after {bp_done:.1f} s, "
        f"{spooled_bytes} spooled bytes; DB complete {drain:.1f} s after PG was back "
        f"({sum(counts.values())} rows)"
    )


@pytest.mark.serial  # stops a shared test server
def test_spool_survives_a_clean_stop_and_a_recovery_start_drops_it(
    pg_db: str, tmp_path: Path
) -> None:
    """PG down for a whole replay: the next daemon (resume) fills the DB from the spool;
    a daemon in recovery mode discards such a spool and replays everything instead."""
    run, home = tmp_path / "run", tmp_path / "home"
    copy_submit_dir(CORPUS / SAMPLE / "input", run)
    quick = "-Dpegasus.monitord.spool.drain_timeout=1"
    service("stop", "postgres")
    out = _run(run, home, quick, "-d", pg_db, "-r", status=1)
    left = [line for line in out.splitlines() if "events left undelivered in the spool" in line]
    assert len(left) == 1, out[-3000:]
    service("start", "postgres")
    out = _run(run, home, "-d", pg_db)  # resume: the spool goes first
    assert "delivering first the events an earlier daemon left spooled" in out, out[-3000:]
    assert not (run / "monitord.spool").exists()
    _assert_db_is_reference(pg_db, tmp_path, "resumed")

    service("stop", "postgres")
    _run(run, home, quick, "-d", pg_db, "-r", status=1)
    service("start", "postgres")
    (run / "monitord.recover").write_text("")  # as a crashed daemon leaves it
    out = _run(run, home, "-d", pg_db)
    assert "outputs start over: discarding events" in out, out[-3000:]
    assert not (run / "monitord.spool").exists()
    _assert_db_is_reference(pg_db, tmp_path, "recovered")
