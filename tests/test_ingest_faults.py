"""``monitord ingest`` across restarts of the shared servers: SERIAL (they stop RabbitMQ or
PostgreSQL; scripts/test.sh runs them alone, after the parallel part).  Rows compared after."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ingest_harness import (
    Broker,
    IngestProcess,
    acked,
    assert_rows_match,
    finish,
    start_producers,
    wait_marks,
    wait_quiet,
)
from tests.servers import require_server, service
from tests.test_sql_servers import Generated, _generate_and_replay, drop, fresh_db

pytestmark = pytest.mark.serial

BACKOFF_CAP = 15.0  # sinks.amqp.broker.Backoff's cap: the outage outlasts every backoff


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    require_server("amqp")
    require_server("postgres")
    return _generate_and_replay(tmp_path_factory.mktemp("ingest-faults"), 4, 150, 3000)


@pytest.fixture
def broker() -> Iterator[Broker]:
    made = Broker(require_server("amqp"))
    made.declare_tap()
    yield made
    made.delete()


@pytest.fixture
def central() -> Iterator[str]:
    url = fresh_db("postgres", "ingest_faults")
    yield url
    drop("postgres", url)


def _ingests(broker: Broker, url: str, tmp: Path) -> list[IngestProcess]:
    procs = [IngestProcess(broker, url, tmp, f"{i + 1}/2", batch=50) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.wait_healthy()
    return procs


def _wait_acked(procs: list[IngestProcess], n: int) -> None:
    deadline = time.monotonic() + 120
    while acked(procs) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_rabbitmq_restart_mid_run(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    procs = _ingests(broker, central, tmp_path)
    try:
        producers = start_producers(workflows, broker, tmp_path)
        _wait_acked(procs, 300)
        service("restart", "amqp")
        finish(producers)
        for p in procs:
            p.wait_healthy(timeout=120)
        wait_marks(central, broker.drain(broker.tap))
        wait_quiet(broker, procs)
        assert_rows_match(central, workflows, tmp_path)
    finally:
        for p in procs:
            p.stop()


def test_postgresql_stopped_longer_than_every_backoff(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    procs = _ingests(broker, central, tmp_path)
    try:
        producers = start_producers(workflows, broker, tmp_path)
        _wait_acked(procs, 300)
        service("stop", "postgres")
        try:
            time.sleep(BACKOFF_CAP * 1.5)
            assert any(p.get("/healthz")[0] == 503 for p in procs)
        finally:
            service("start", "postgres")
        finish(producers)
        wait_marks(central, broker.drain(broker.tap))
        wait_quiet(broker, procs)
        assert_rows_match(central, workflows, tmp_path)
    finally:
        for p in procs:
            p.stop()
