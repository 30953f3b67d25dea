"""``monitord ingest`` end to end on the test RabbitMQ and PostgreSQL (scripts/services.sh).

Producers are monitord replays publishing every event (``ingest = true``) of generated
workflows to one exchange; ingest processes load one PostgreSQL database; every workflow's
rows are compared with its own SQLite replay (stampede-diff), the shared tables with the union,
the master tables with each root workflow's states.  A tap queue bound to the exchange keeps a
copy of every message, to publish streams again.  Nothing here stops a shared server.
"""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path
from urllib.parse import urlsplit

import aio_pika  # noqa: F401  (the harness needs it: skip cleanly without)
import pytest

from sinks.amqp.stream import read_identity
from tests.ingest_harness import (
    Broker,
    TapMessage,
    acked,
    assert_rows_match,
    closing_proxy,
    finish,
    ingest_workflows,
    start_ingests,
    start_producers,
    wait_acked,
    wait_marks,
    wait_quiet,
)
from tests.proxies import Proxy
from tests.test_sql_servers import Generated

pytest_plugins = ("tests.ingest_harness",)  # the fixtures broker, kind and central

WORKFLOWS = 4
JOBS = 40


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    return ingest_workflows(tmp_path_factory.mktemp("ingest"), WORKFLOWS, JOBS, 2000)


@pytest.mark.parametrize("kind", ["postgres", "mysql"])
def test_producers_into_one_database_exactly_once(
    kind: str, workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """4 producers, 2 ingest processes, 1 database: every workflow as its own replay; then every
    stream published again (as by producers resent from their spools): nothing loaded twice."""
    # standby only after 10 s: both members own their partitions, even on a slow start
    procs = start_ingests(broker, central, tmp_path, 2, standby_delay=10.0)
    try:
        finish(start_producers(workflows, broker, tmp_path))
        sent = broker.drain(broker.tap)
        wait_marks(central, sent)
        wait_acked(procs, len(sent))
        counts = assert_rows_match(central, workflows, tmp_path)
        loaded = [p.metric("monitord_ingest_messages_total", outcome="loaded") for p in procs]
        # member m owns partitions p with p mod 2 = m - 1; a producer's slot picks its partition
        used = {int(h["monitord-slot"]) % broker.partitions for _, h, _, _ in sent}
        owners = {p % 2 for p in used}
        assert [n > 0 for n in loaded] == [m in owners for m in (0, 1)], (loaded, used)
        assert all(read_identity(h).producer for _, h, _, _ in sent)
        assert {u for *_, u in sent} == {urlsplit(broker.base).username}  # the broker's check
        before = acked(procs)
        broker.publish(sent)
        wait_acked(procs, before + len(sent))
        dupes = sum(p.metric("monitord_ingest_messages_total", outcome="duplicate") for p in procs)
        assert dupes == len(sent) and acked(procs) - before == len(sent)
        assert assert_rows_match(central, workflows, tmp_path) == counts
        password = urlsplit(broker.base).password or ""
        for p in procs:
            log = p.log.read_text()
            assert password not in log and "Traceback" not in log, log[-3000:]
        print(f"\n[ingest] {len(sent)} messages, {sum(counts.values())} rows, loaded by {loaded}")
    finally:
        for p in procs:
            p.stop()


def test_kill9_of_an_ingest_process_loses_nothing_doubles_nothing(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """Member 1 is killed with SIGKILL at 5 seeded moments while the producers publish and the
    stream is republished, and restarted each time; the rows are compared at the end."""
    rng = random.Random(20)
    procs = start_ingests(broker, central, tmp_path, 2, batch=50)
    victim = procs[0]
    try:
        producers = start_producers(workflows, broker, tmp_path)
        for _ in range(4):
            time.sleep(rng.uniform(0.5, 2.5))
            victim.kill9()
            victim.start()
            victim.wait_healthy()
        finish(producers)
        sent = broker.drain(broker.tap)
        broker.publish(sent[: len(sent) // 2])  # half of every stream again, mid-kill
        time.sleep(rng.uniform(0.2, 1.0))
        victim.kill9()
        victim.start()
        victim.wait_healthy()
        wait_marks(central, sent)
        wait_quiet(broker, procs)  # (the resent half: duplicates, whoever acknowledges them)
        assert_rows_match(central, workflows, tmp_path)
        assert victim.starts == 6  # 5 kills
    finally:
        for p in procs:
            p.stop()


def test_poison_messages_go_to_the_dead_letter_queue_with_their_reason(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """One partition: poison of every kind published in the middle of the producers' streams;
    each lands in the dead-letter queue with its reason, the workflows load completely."""
    broker.partitions = 1
    procs = start_ingests(broker, central, tmp_path, 1, max_body=64 * 1024)
    try:
        producers = start_producers(workflows, broker, tmp_path)
        ok_event = b'{"xwf_id": "%s", "ts": 1.0, "restart_count": 0, "event": "stampede.xwf.start"}'
        poison: list[TapMessage] = [
            ("stampede.xwf.start", {}, b"{this is not json", None),
            ("stampede.no.such", {}, b'{"xwf_id": "x", "event": "stampede.no.such"}', None),
            ("stampede.xwf.start", {}, ok_event % b"never-planned-workflow", None),
            ("stampede.xwf.start", {}, b" " * (65 * 1024) + b"{}", None),
        ]
        broker.publish(poison)
        finish(producers)
        sent = broker.drain(broker.tap)
        wait_acked(procs, len(sent))
        # a stream that claims an existing producer without being its broker user
        # (in an earlier monitord's separate headers: they are read as the one header)
        some = next(read_identity(h).producer for _, h, _, _ in sent if h)
        forged = {"monitord-producer": some, "monitord-seq": 1 << 60, "monitord-slot": "0"}
        broker.publish(
            [("stampede.xwf.start", forged, ok_event % workflows[0].wf_uuid.encode(), None)]
        )
        wait_acked(procs, len(sent) + 1)
        dead = broker.drain(f"{broker.prefix}.dead")
        reasons = sorted(h["monitord-dead-reason"] for _, h, _, _ in dead)
        assert reasons == sorted(
            ["malformed", "unknown-event", "unknown-workflow", "oversized", "user-mismatch"]
        )
        assert [b for _, h, b, _ in dead if h["monitord-dead-reason"] == "malformed"] == [
            poison[0][2]
        ]
        for reason in reasons:
            assert procs[0].metric("monitord_ingest_dead_letters_total", reason=reason) == 1
        assert_rows_match(central, workflows, tmp_path)
    finally:
        for p in procs:
            p.stop()


def test_a_database_outage_pauses_consumption_and_loses_nothing(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """The database goes away mid-stream (longer than the first backoffs): /healthz says so,
    nothing is acknowledged meanwhile, and once it is back every row is there once."""
    parts = urlsplit(central)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    via_proxy = proxy.url(central)
    procs = start_ingests(broker, via_proxy, tmp_path, 1, batch=50, prefetch=100)
    ingest = procs[0]
    try:
        producers = start_producers(workflows, broker, tmp_path)
        deadline = time.monotonic() + 120
        while acked(procs) < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        proxy.down = True
        proxy.cut()
        while ingest.get("/healthz")[0] != 503 and time.monotonic() < deadline:
            time.sleep(0.1)
        status, body = ingest.get("/healthz")
        assert status == 503 and "database down" in body
        assert ingest.metric("monitord_ingest_database_up") == 0
        frozen = acked(procs)
        finish(producers)  # the broker keeps the stream meanwhile
        time.sleep(5)
        assert acked(procs) == frozen, "acknowledged while the database was away"
        # beyond the prefetch window (what the ingest holds unacknowledged) the broker keeps it
        held = broker.partitions * 100
        assert sum(broker.ready().values()) >= broker.count(broker.tap) - frozen - held > 0
        proxy.down = False
        sent = broker.drain(broker.tap)
        wait_acked(procs, len(sent))
        assert ingest.get("/healthz")[0] == 200
        assert_rows_match(central, workflows, tmp_path)
    finally:
        for p in procs:
            p.stop()
        proxy.close()
    log = ingest.log.read_text()
    assert log.count("ingest: database unavailable") == 1 and "Traceback" not in log, log[-3000:]
    assert log.count("ingest: database back") == 1, log[-3000:]  # (never mid-outage)


def test_a_broker_dropping_the_connection_is_one_warning_and_loses_nothing(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """What a broker restart does to the ingest's connection (``Connection.Close`` 320
    CONNECTION_FORCED, then the socket dropped) and what a killed broker does (the socket
    dropped), twice each while the producers publish, through a proxy (the shared broker keeps
    running): one warning line per drop, no traceback, every row once."""
    parts = urlsplit(broker.base)
    proxy = closing_proxy(parts.hostname or "127.0.0.1", parts.port or 5672)
    via_proxy = dataclasses.replace(broker, base=proxy.url(broker.base))
    procs = start_ingests(via_proxy, central, tmp_path, 1, batch=50)
    ingest = procs[0]
    drops = [proxy.force_close, proxy.cut, proxy.force_close, proxy.cut]
    try:
        producers = start_producers(workflows, broker, tmp_path)
        for n, drop in enumerate(drops):
            deadline = time.monotonic() + 120
            while acked(procs) < 150 * (n + 1) and time.monotonic() < deadline:
                time.sleep(0.05)
            before = proxy.accepted
            assert drop() >= 1
            while time.monotonic() < deadline and not (
                proxy.accepted > before and ingest.get("/healthz")[0] == 200
            ):
                time.sleep(0.1)
            assert proxy.accepted > before, "the ingest never reconnected"
        finish(producers)
        sent = broker.drain(broker.tap)
        wait_marks(central, sent)
        wait_quiet(broker, procs)
        assert_rows_match(central, workflows, tmp_path)
        assert ingest.metric("monitord_ingest_broker_outages_total") == len(drops)
    finally:
        for p in procs:
            p.stop()
        proxy.close()
    log = ingest.log.read_text()
    assert "Traceback" not in log and "exited abnormally" not in log, log[-4000:]
    warnings = [line for line in log.splitlines() if "[warning" in line or "[error" in line]
    assert len(warnings) == len(drops), "\n".join(warnings)
    assert all("ingest: broker connection lost, reconnecting" in w for w in warnings), warnings
    for drop, line in zip(drops, warnings, strict=True):  # a restart's reason is said
        assert ('error="CONNECTION_FORCED' in line) == (drop == proxy.force_close), line
