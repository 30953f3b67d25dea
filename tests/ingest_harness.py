"""Helpers of the ``monitord ingest`` tests: a scratch topology on the test broker, ingest
processes, producers (replays publishing to the exchange), and the row comparison.

Also a pytest plugin: a test module with ``pytest_plugins = ("tests.ingest_harness",)`` gets
the fixtures ``broker`` (a scratch topology) and ``central`` (a fresh database on the
``kind`` server, PostgreSQL unless a test parametrizes ``kind``).  Those modules import it
before pytest loads it as a plugin, too late for assertion rewriting: PYTEST_DONT_REWRITE
(plain asserts, as in any helper module) instead of a warning."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aio_pika
import pytest
from sqlalchemy import create_engine, text

from sinks.amqp.stream import read_identity
from sinks.sql.database import parse_url
from tests.conftest import copy_submit_dir
from tests.dbcopy import copy_to_sqlite
from tests.proxies import Proxy, free_port
from tests.servers import require_server
from tests.test_sql_servers import (
    GLOBAL_TABLES,
    Generated,
    _generate_and_replay,
    _global_rows,
    _only_workflow,
    assert_same,
    drop,
    fresh_db,
    replay_cmd,
    replay_env,
    row_counts,
)

MASTER_TABLES = ("master_workflow", "master_workflowstate")
TapMessage = tuple[str, dict[str, Any], bytes, str | None]  # key, headers, body, user_id


@dataclass
class Broker:
    """A scratch exchange and ingest prefix on the test vhost; a tap queue sees every message."""

    base: str
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    partitions: int = 4

    @property
    def exchange(self) -> str:
        return f"monitord.test.ingest.{self.tag}"

    @property
    def prefix(self) -> str:
        return f"monitord-test-ingest-{self.tag}"

    @property
    def url(self) -> str:
        return f"{self.base.rstrip('/')}/{self.exchange}"

    @property
    def tap(self) -> str:
        return f"{self.prefix}.tap"

    def producer_properties(self) -> list[str]:
        """``-D`` options of a producer for this ingest (every event; its topology)."""
        props = {
            "ingest": "true",
            "ingest_prefix": self.prefix,
            "ingest_partitions": str(self.partitions),
        }
        # a loaded test machine: a broker slow to confirm is retried for up to 600 s at exit
        return [
            *(f"-Dpegasus.catalog.workflow.{k}={v}" for k, v in props.items()),
            "-Dpegasus.monitord.spool.drain_timeout=600",
        ]

    def queues(self) -> list[str]:
        names = [f"{self.prefix}.p{i}" for i in range(self.partitions)]
        return [*names, f"{self.prefix}.dead", self.tap]

    async def _declare_tap(self) -> None:
        async with await aio_pika.connect(self.base) as conn:
            ch = await conn.channel()
            ex = await ch.declare_exchange(self.exchange, aio_pika.ExchangeType.TOPIC, durable=True)
            q = await ch.declare_queue(self.tap, durable=True)
            await q.bind(ex, "#")

    def declare_tap(self) -> None:
        asyncio.run(self._declare_tap())

    async def _ready(self) -> dict[str, int]:
        out = {}
        async with await aio_pika.connect(self.base) as conn:
            ch = await conn.channel()
            for name in self.queues()[:-2]:
                q = await ch.declare_queue(name, passive=True)
                out[name] = q.declaration_result.message_count or 0
        return out

    async def _count(self, queue: str) -> int:
        async with await aio_pika.connect(self.base) as conn:
            q = await (await conn.channel()).declare_queue(queue, passive=True)
            return q.declaration_result.message_count or 0

    def count(self, queue: str) -> int:
        return asyncio.run(self._count(queue))

    def ready(self) -> dict[str, int]:
        """Messages waiting (not delivered) in each partition queue."""
        return asyncio.run(self._ready())

    async def _drain(self, queue: str) -> list[TapMessage]:
        out: list[TapMessage] = []
        async with await aio_pika.connect(self.base) as conn:
            ch = await conn.channel()
            q = await ch.declare_queue(queue, passive=True)
            while (msg := await q.get(fail=False, no_ack=True)) is not None:
                out.append((msg.routing_key or "", dict(msg.headers or {}), msg.body, msg.user_id))
        return out

    def drain(self, queue: str) -> list[TapMessage]:
        return asyncio.run(self._drain(queue))

    async def _publish(self, messages: list[TapMessage]) -> None:
        async with await aio_pika.connect(self.base) as conn:
            ch = await conn.channel(publisher_confirms=True)
            ex = await ch.get_exchange(self.exchange)
            for key, headers, body, user in messages:
                await ex.publish(aio_pika.Message(body, headers=headers, user_id=user), key)

    def publish(self, messages: list[TapMessage]) -> None:
        asyncio.run(self._publish(messages))

    async def _delete(self) -> None:
        async with await aio_pika.connect(self.base) as conn:
            ch = await conn.channel()
            for name in self.queues():
                await ch.queue_delete(name)
            for name in (f"{self.prefix}.route", f"{self.prefix}.legacy", self.exchange):
                await ch.exchange_delete(name)

    def delete(self) -> None:
        try:
            asyncio.run(self._delete())
        except Exception:  # best effort cleanup
            pass


FORCED = "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"


def connection_close_frame(code: int = 320, text: str = FORCED) -> bytes:
    """The AMQP 0-9-1 ``Connection.Close`` frame a broker sends every client when it stops
    (class 10, method 50, on channel 0)."""
    reason = text.encode()
    payload = struct.pack(">HHH", 10, 50, code) + bytes([len(reason)]) + reason
    payload += struct.pack(">HH", 0, 0)
    return struct.pack(">BHI", 1, 0, len(payload)) + payload + b"\xce"


def amqp_frames(buffer: bytes) -> int:
    """How many leading bytes of ``buffer`` are whole AMQP frames (type, channel, size,
    payload, end octet)."""
    whole = 0
    while len(buffer) - whole >= 7:
        size = struct.unpack_from(">I", buffer, whole + 3)[0]
        if len(buffer) - whole < size + 8:
            break
        whole += size + 8
    return whole


def closing_proxy(host: str, port: int) -> Proxy:
    """A proxy to the broker that can do to its clients what a broker restart does, without
    restarting the shared broker: ``force_close`` sends each client the broker's
    ``Connection.Close`` (320 ``CONNECTION_FORCED``), drops what the client sends then (its
    ``CloseOk``) and hangs up once the client did, as RabbitMQ does; ``cut`` drops the
    connections with no word (a broker killed)."""
    return Proxy(host, port, frames=amqp_frames, last_words=connection_close_frame())


class IngestProcess:
    def __init__(self, broker: Broker, db_url: str, tmp: Path, member: str, **ingest: Any) -> None:
        self.port = free_port()
        self.member = member
        self.config = tmp / f"ingest-{member.replace('/', 'of')}.toml"
        settings = {"batch": 200, "batch_wait": 0.1, "standby_delay": 1.0, **ingest}
        lines = ["[ingest]", f'database = "{db_url}"', 'log_format = "console"']
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in settings.items()]
        lines += ["[amqp]", f'url = "{broker.url}"', f'prefix = "{broker.prefix}"']
        lines += [
            f"partitions = {broker.partitions}",
            "[http]",
            f'listen = "127.0.0.1:{self.port}"',
        ]
        self.config.write_text("\n".join(lines) + "\n")
        self.log = tmp / f"ingest-{member.replace('/', 'of')}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "monitord.cli", "ingest", "--config", str(self.config)]
                + ["--member", self.member],
                stdout=log,
                stderr=log,
            )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.log.read_text()[-3000:]
            if self.get("/healthz")[0] == 200:
                return
            time.sleep(0.2)
        raise AssertionError(f"ingest {self.member} not healthy: {self.log.read_text()[-3000:]}")

    def metric(self, name: str, **labels: str) -> float:
        """One sample of /metrics (0 when absent)."""
        want = name + (
            "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else ""
        )
        for line in self.get("/metrics")[1].splitlines():
            if line.startswith(want + " "):
                return float(line.split()[-1])
        return 0.0

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()


def start_ingests(
    broker: Broker, db_url: str, tmp: Path, n: int = 1, **settings: Any
) -> list[IngestProcess]:
    """Members ``1/n`` .. ``n/n``, each healthy: the topology exists before a producer publishes."""
    procs = [IngestProcess(broker, db_url, tmp, f"{i + 1}/{n}", **settings) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.wait_healthy()
    return procs


def acked(procs: list[IngestProcess]) -> float:
    return sum(
        p.metric("monitord_ingest_messages_total", outcome=o)
        for p in procs
        for o in ("loaded", "duplicate", "dead")
    )


def wait_quiet(
    broker: Broker, procs: list[IngestProcess], quiet: float = 3.0, timeout: float = 300
) -> None:
    """Until no partition queue has a message waiting and no process acked one for ``quiet`` s."""
    deadline = time.monotonic() + timeout
    last, since = -1.0, time.monotonic()
    while time.monotonic() < deadline:
        now = acked(procs)
        if now != last:
            last, since = now, time.monotonic()
        elif not any(broker.ready().values()) and time.monotonic() - since >= quiet:
            return
        time.sleep(0.5)
    raise AssertionError(f"ingest never went quiet: {broker.ready()}")


def wait_acked(procs: list[IngestProcess], count: float, timeout: float = 600) -> None:
    """Until the processes (none restarted meanwhile) acknowledged ``count`` messages."""
    deadline = time.monotonic() + timeout
    while acked(procs) < count:
        assert time.monotonic() < deadline, f"{acked(procs)} of {count} messages acknowledged"
        time.sleep(0.2)


def wait_marks(db_url: str, sent: list[TapMessage], timeout: float = 600) -> None:
    """Until every monitord producer's mark in the central database reached the last position
    it published: then every one of its messages is committed (a partition applies them in
    order).  Exact whatever restarts happened, unlike counters or queue depths."""
    want: dict[str, int] = {}
    for _, headers, _, _ in sent:
        p, seq, _, _ = read_identity(headers)
        if p is not None and seq is not None:
            want[p] = max(seq, want.get(p, -1))
    engine = create_engine(parse_url(db_url))
    deadline = time.monotonic() + timeout
    try:
        while True:
            with engine.connect() as conn:
                rows = conn.execute(text("SELECT producer, seq FROM monitord_ingest_producers"))
                have = {str(p): int(s) for p, s in rows}
            if all(have.get(p, -1) >= seq for p, seq in want.items()):
                return
            assert time.monotonic() < deadline, f"marks {have}, want {want}"
            time.sleep(0.2)
    finally:
        engine.dispose()


def ingest_workflows(where: Path, count: int, jobs: int, seed: int) -> list[Generated]:
    """``count`` generated workflows of ``jobs`` jobs, each replayed into its own SQLite
    database (the rows expected); skipped without the test broker and PostgreSQL."""
    require_server("amqp")
    require_server("postgres")
    return _generate_and_replay(where, count, jobs, seed)


@pytest.fixture
def broker() -> Iterator[Broker]:
    """A scratch exchange and ingest prefix with its tap queue, deleted after the test."""
    made = Broker(require_server("amqp"))
    made.declare_tap()
    yield made
    made.delete()


@pytest.fixture
def kind() -> str:
    """The server of ``central`` (a test parametrizes it to run on another)."""
    return "postgres"


@pytest.fixture
def central(request: pytest.FixtureRequest, kind: str) -> Iterator[str]:
    """A fresh database on the ``kind`` server, named after the test and this session (two
    sessions running one test on one server must not share rows), dropped after it."""
    url = fresh_db(kind, f"ingest_{request.node.originalname[5:25].lower()}_{os.getpid()}")
    yield url
    drop(kind, url)


def start_producers(
    made: list[Generated], broker: Broker, tmp: Path
) -> list[subprocess.Popen[str]]:
    """Replays of each workflow (a copy: its own run dir and spool) publishing every event."""
    procs = []
    for i, g in enumerate(made):
        run = tmp / f"producer{i}"
        dagman_out = copy_submit_dir(g.dagman_out.parent, run) / g.dagman_out.name
        procs.append(
            subprocess.Popen(
                # -D first, as pegasus-monitord takes it
                [
                    sys.executable,
                    "-m",
                    "monitord.cli",
                    *broker.producer_properties(),
                    *replay_cmd(dagman_out, "-d", broker.url)[3:],
                ],
                cwd=run,
                env=replay_env(tmp / "home"),
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    return procs


def finish(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        assert "events left in the spool" not in err, err[-3000:]


def assert_rows_match(db_url: str, made: list[Generated], tmp: Path) -> dict[str, int]:
    """Every workflow's rows in the central database equal its own SQLite replay; the shared
    tables hold the union; the master tables list every workflow, started and ended."""
    copy = tmp / "central.db"
    counts = copy_to_sqlite(db_url, copy, made[0].expected)
    skip = set(GLOBAL_TABLES) | set(MASTER_TABLES)
    tables = ",".join(t for t in row_counts(copy) if t not in skip)
    union: dict[str, set[tuple[object, ...]]] = {t: set() for t in GLOBAL_TABLES}
    for i, g in enumerate(made):
        mine = _only_workflow(copy, g.wf_uuid, tmp / f"only{i}.db")
        assert_same(g.expected, mine, "--tables", tables)
        for name, rows in _global_rows(g.expected).items():
            union[name] |= rows
    assert _global_rows(copy) == union
    with sqlite3.connect(copy) as con:
        masters = dict(con.execute("SELECT wf_uuid, wf_id FROM master_workflow"))
        assert set(masters) == {g.wf_uuid for g in made}
        got = {
            uuid: con.execute(
                "SELECT state, timestamp, restart_count, status FROM master_workflowstate "
                "WHERE wf_id = ? ORDER BY timestamp, state",
                (wf_id,),
            ).fetchall()
            for uuid, wf_id in masters.items()
        }
    for g in made:  # the dashboard's states of a root workflow are its workflowstate rows
        with sqlite3.connect(g.expected) as con:
            want = con.execute(
                "SELECT s.state, s.timestamp, s.restart_count, s.status FROM workflowstate s "
                "JOIN workflow w USING (wf_id) WHERE w.wf_uuid = ? ORDER BY s.timestamp, s.state",
                (g.wf_uuid,),
            ).fetchall()
        assert got[g.wf_uuid] == want and want
    return counts


def env_ok() -> bool:
    return bool(
        os.environ.get("MONITORD_TEST_AMQP_URL") and os.environ.get("MONITORD_TEST_POSTGRES_URL")
    )
