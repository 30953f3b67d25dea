"""``monitord ingest`` across restarts of the shared servers: SERIAL (they stop RabbitMQ or
PostgreSQL; scripts/test.sh runs them alone, after the parallel part).  Rows compared after."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sinks.runtime.policy import RECONNECT
from tests.ingest_harness import (
    Broker,
    IngestProcess,
    acked,
    assert_rows_match,
    finish,
    ingest_workflows,
    start_ingests,
    start_producers,
    wait_marks,
    wait_quiet,
)
from tests.servers import service
from tests.test_sql_servers import Generated

pytestmark = pytest.mark.serial
pytest_plugins = ("tests.ingest_harness",)  # the fixtures broker and central

BACKOFF_CAP = RECONNECT.cap  # the ingest's retry policy: the outage outlasts every backoff


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    return ingest_workflows(tmp_path_factory.mktemp("ingest-faults"), 4, 150, 3000)


def _wait_acked(procs: list[IngestProcess], n: int) -> None:
    deadline = time.monotonic() + 120
    while acked(procs) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_rabbitmq_restart_mid_run(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    procs = start_ingests(broker, central, tmp_path, 2, batch=50)
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
    procs = start_ingests(broker, central, tmp_path, 2, batch=50)
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
