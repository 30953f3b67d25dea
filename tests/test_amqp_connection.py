"""The AMQP sink's broker connection (sinks/amqp/connection.py), shared by many sinks.

With a real broker (``MONITORD_TEST_AMQP_URL``): twenty sinks of twenty "workflows" sharing
the service's client registry open exactly one TCP connection (counted from /proc, not from
the link's own counter) and every workflow's events arrive complete and in order; a
channel-level failure of one exchange fails that sink's batches only; a connection cut under
two sinks on the delivery runtime is opened again and loses nothing.  Without a broker: sinks
of one broker share a link, other credentials get another one, and the last sink to close
ends the link's thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aio_pika
import pytest

from monitord.core.events import make_event
from sinks.amqp.broker import link_key
from sinks.amqp.config import parse_amqp_url
from sinks.amqp.connection import BrokerLink
from sinks.amqp.sink import AMQPSink
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.clients import SharedClients
from sinks.runtime.codec import encode_batch
from sinks.runtime.factory import SinkRequest
from sinks.runtime.lanes import LaneHandle, SinkLane
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import BatchSpool, SpoolSettings
from tests.proxies import Proxy, free_port
from tests.servers import require_server
from tests.test_amqp_broker import Endpoint, _run, new_endpoint

PROPS = {"pegasus.catalog.workflow.events": "*"}


def tcp_connections(pid: int, port: int) -> set[int]:
    """Local ports of the established TCP connections of process ``pid`` to ``port``."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port and inode in inodes:
                found.add(int(local.rsplit(":", 1)[1], 16))
    return found


class ConnectionSampler:
    """Samples this process's connections to the broker every 20 ms in a thread."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.most = 0
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = tcp_connections(os.getpid(), self.port)
            self.most = max(self.most, len(now))
            self.seen |= now
            time.sleep(0.02)

    def __enter__(self) -> ConnectionSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def events_of(wf: str, start: int, count: int) -> list:
    return [
        make_event("xwf.start", {"xwf.id": wf, "ts": n, "restart_count": 0})
        for n in range(start, start + count)
    ]


def amqp_sink(url: str, run_dir: Path, props: dict[str, str]) -> AMQPSink:
    """The sink the registry builds for ``url`` (unopened)."""
    return AMQPSink.from_request(
        SinkRequest(url, run_dir=str(run_dir), restart=False, properties=props)
    )


def open_sinks(urls: list[str], root: Path, clients: SharedClients) -> list[AMQPSink]:
    """One sink per URL (workflow ``wfNN``), taking its connection from ``clients`` as the
    service's sinks do (``shares_connection``)."""
    sinks = []
    for i, url in enumerate(urls):
        sink = amqp_sink(url, root / f"wf{i:02d}", PROPS)
        sink.use_shared(SharedResources(clients=clients))
        (root / f"wf{i:02d}").mkdir(parents=True, exist_ok=True)
        sinks.append(sink)
    return sinks


def link_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("amqp-") and t.is_alive()]


def by_workflow(messages: list[tuple[str, str, bytes]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for _key, _mid, body in messages:
        obj = json.loads(body)
        out[obj["xwf_id"]].append(obj["ts"])
    return out


def consume(ep: Endpoint, count: int, timeout: float = 60.0, quiet: float = 0.3) -> list:
    """Everything in ``ep``'s queue, pushed by the broker (faster than the broker tests'
    basic.get loop): at least ``count`` messages, then until ``quiet`` s pass without one."""

    async def run() -> list:
        out: list[tuple[str, str, bytes]] = []
        conn = await aio_pika.connect(ep.base)
        async with conn:
            ch = await conn.channel()
            await ch.set_qos(prefetch_count=1000)
            q = await ch.get_queue(ep.queue)
            last = [time.monotonic()]

            async def on_message(msg: aio_pika.abc.AbstractIncomingMessage) -> None:
                out.append((msg.routing_key or "", msg.message_id or "", msg.body))
                last[0] = time.monotonic()

            tag = await q.consume(on_message, no_ack=True)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if len(out) >= count and time.monotonic() - last[0] > quiet:
                    break
                await asyncio.sleep(0.05)
            await q.cancel(tag)
        return out

    return list(_run(run()))


def queue_length(ep: Endpoint) -> int:
    async def count() -> int:
        conn = await aio_pika.connect(ep.base)
        async with conn:
            ch = await conn.channel()
            q = await ch.declare_queue(ep.queue, durable=True, passive=True)
            return int(q.declaration_result.message_count or 0)

    return int(_run(count()))


@pytest.fixture
def amqp_base() -> str:
    return require_server("amqp")


@pytest.fixture
def endpoints(amqp_base: str):  # type: ignore[no-untyped-def]
    made: list[Endpoint] = []
    yield made
    for ep in made:
        ep.delete()


# ---------------------------------------------------------------- with a broker


def test_twenty_workflows_share_one_connection_and_arrive_in_order(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """20 sinks (two exchanges) written from four threads at once: 1 connection, all in order."""
    port = urlsplit(amqp_base).port or 5672
    exchanges = [new_endpoint(endpoints, amqp_base, f"hub{n}") for n in range(2)]
    clients = SharedClients()
    sinks = open_sinks([exchanges[i % 2].url for i in range(20)], tmp_path, clients)
    per_batch, batches = 50, 8
    assert not tcp_connections(os.getpid(), port)
    with ConnectionSampler(port) as sampler:
        for sink in sinks:
            sink.open()
        links = {id(sink.link) for sink in sinks}

        def writer(mine: list[tuple[int, AMQPSink]]) -> None:
            for b in range(batches):
                for i, sink in mine:
                    sink.write_batch(events_of(f"wf{i:02d}", b * per_batch, per_batch))

        numbered = list(enumerate(sinks))
        threads = [threading.Thread(target=writer, args=(numbered[i::4],)) for i in range(4)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        connections = sinks[0].link.connections if sinks[0].link else -1
        for sink in sinks:
            sink.close()
        elapsed = time.monotonic() - t0
    total = per_batch * batches
    assert len(links) == 1 and clients.made == 1, "one connection per broker"
    assert connections == 1
    assert sampler.most == 1, f"{sampler.most} connections at once"
    assert len(sampler.seen) == 1, f"{len(sampler.seen)} connections opened"
    assert clients.count() == 0 and not link_threads(), "the last sink to close ends the link"
    assert not tcp_connections(os.getpid(), port), "the connection is closed at the end"
    got: dict[str, list[int]] = {}
    for ep in exchanges:
        got.update(by_workflow(consume(ep, 10 * total)))
    assert sorted(got) == [f"wf{i:02d}" for i in range(20)]
    for wf, seq in got.items():
        assert seq == list(range(total)), f"{wf}: {len(seq)} events, in order: {seq == sorted(seq)}"
    print(
        f"\n[amqp link] 20 sinks, 2 exchanges: {sampler.most} TCP connection to the broker "
        f"(distinct seen: {len(sampler.seen)}); {20 * total} events delivered, each "
        f"workflow's {total} complete and in order; {elapsed:.2f} s"
    )


def test_a_huge_backlog_does_not_starve_the_others_on_the_broker_lane(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """Five workflows' AMQP deliveries on the service's one lane for the broker, one of them
    with 10,000 events an earlier daemon left spooled: the lane's round-robin (one batch per
    delivery per turn, the runtime's, not the sink's) lets the four small ones through
    long before the backlog is gone."""
    ep = new_endpoint(endpoints, amqp_base, "fair")
    clients = SharedClients()
    sinks = open_sinks([ep.url] * 5, tmp_path, clients)
    settings = SpoolSettings(root=str(tmp_path / "spool"), drain_timeout=0.0)
    backlog, batch = 10_000, 500
    left = BatchSpool(settings.path_for(sinks[0]))
    left.open()
    for n in range(0, backlog, batch):
        left.append(batch, encode_batch(events_of("wf00", n, batch)))
    left.sync()
    left.close()
    lane = SinkLane(f"amqp:{sinks[0].broker_url}")
    handles = [LaneHandle(sink, lane, f"wf{i:02d}", settings) for i, sink in enumerate(sinks)]
    for handle in handles:
        handle.start()
    for i, handle in enumerate(handles[1:], start=1):
        handle.put(events_of(f"wf{i:02d}", 0, 20))
    small = handles[1:]
    deadline = time.monotonic() + 120
    while any(h.health().events_written < 20 for h in small) and time.monotonic() < deadline:
        time.sleep(0.005)
    left_when_small_done = handles[0].health().spooled
    assert all(h.health().events_written == 20 for h in small)
    for handle in handles:
        handle.request_stop(0.0, abort=True)
    for handle in handles:
        handle.join()
    lane.stop()
    assert left_when_small_done > backlog // 2, left_when_small_done
    delivered = backlog - handles[0].health().left_behind
    assert queue_length(ep) == delivered + 80
    print(
        f"\n[amqp lane] fairness: 4 small workflows delivered while the {backlog}-event "
        f"backlog still had {left_when_small_done} to go"
    )


def test_a_broken_exchange_fails_its_own_batches_only(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """An exchange that exists with another type fails its channel only: that sink's batch is
    a retryable error (the runtime keeps it spooled), the other sink on the same connection
    publishes before and after."""
    good = new_endpoint(endpoints, amqp_base, "good")
    bad = Endpoint(amqp_base, "bad")

    async def fanout() -> None:
        conn = await aio_pika.connect(amqp_base)
        async with conn:
            ch = await conn.channel()
            await ch.declare_exchange(bad.exchange, aio_pika.ExchangeType.FANOUT, durable=True)

    _run(fanout())
    try:
        clients = SharedClients()
        broken, working = open_sinks([bad.url, good.url], tmp_path, clients)
        for sink in (broken, working):
            sink.open()
        working.write_batch(events_of("wf1", 0, 50))
        for attempt in range(2):  # the runtime's retry meets the same refusal
            with pytest.raises(SinkError) as refused:
                broken.write_batch(events_of("wf0", 0, 100))
            assert refused.value.retryable, attempt
            working.write_batch(events_of("wf1", 50 + 25 * attempt, 25))
        assert working.link is broken.link and clients.made == 1
        assert working.link is not None and working.link.connections == 1
        for sink in (broken, working):
            sink.close()
        assert by_workflow(consume(good, 100)) == {"wf1": list(range(100))}
    finally:
        bad.delete()


def test_a_lost_connection_is_noticed_and_nothing_is_lost(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """Connections cut under two sinks on the delivery runtime mid-stream: the runtime retries
    the batch in hand, the next publish opens one new connection, both streams complete."""
    ep = new_endpoint(endpoints, amqp_base, "cut")
    parts = urlsplit(ep.url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5672)
    via_proxy = proxy.url(ep.url)
    clients = SharedClients()
    settings = SpoolSettings(root=str(tmp_path / "spool"), drain_timeout=60, first_backoff=0.05)
    try:
        sinks = open_sinks([via_proxy, via_proxy], tmp_path, clients)
        workers = [SinkWorker(sink, spool=settings) for sink in sinks]
        for worker in workers:
            worker.start()
        for n in range(0, 300, 30):
            for i, worker in enumerate(workers):
                worker.put(events_of(f"wf{i:02d}", n, 30))
            if n == 120:  # cut while publishing: some confirmed, some not yet
                deadline = time.monotonic() + 30
                while not all(s.events_published for s in sinks) and time.monotonic() < deadline:
                    time.sleep(0.001)
                published_at_cut = sum(s.events_published for s in sinks)
                proxy.cut()
            time.sleep(0.02)
        for worker in workers:
            worker.request_stop(60.0)
        for worker in workers:
            worker.join()
        link = sinks[0].link
        health = [w.health() for w in workers]
    finally:
        proxy.close()
    assert link is None and clients.count() == 0  # closed with the last sink
    assert proxy.accepted == 2, proxy.accepted  # the cut noticed: one new connection
    assert [h.left_behind for h in health] == [0, 0]
    messages = consume(ep, 600)
    unique: dict[bytes, tuple[str, str, bytes]] = {}
    for key, mid, body in messages:
        unique.setdefault(body, (key, mid, body))  # at least once: each event's body is unique
    got = by_workflow(list(unique.values()))
    assert got == {"wf00": list(range(300)), "wf01": list(range(300))}
    print(
        f"\n[amqp link] connection cut after {published_at_cut} events confirmed: reconnected "
        f"once, {len(unique)} events delivered in order ({len(messages) - len(unique)} resent)"
    )


# ---------------------------------------------------------------- without a broker


def test_sinks_of_one_broker_share_a_link_and_the_last_one_ends_it(tmp_path: Path) -> None:
    port = free_port()
    clients = SharedClients()
    urls = [
        f"amqp://u:p@127.0.0.1:{port}/vh/ex1",
        f"amqp://u:p@127.0.0.1:{port}/vh/ex2",  # another exchange: same connection
        f"amqp://u:other@127.0.0.1:{port}/vh/ex1",  # other credentials: another one
        f"amqp://u:p@127.0.0.1:{port}/vh2/ex1",  # another vhost: another one
    ]
    keys = [link_key(parse_amqp_url(u)) for u in urls]
    assert keys[0] == keys[1] and len({keys[0], keys[2], keys[3]}) == 3
    assert not link_threads()
    sinks = []
    for i, url in enumerate(urls):
        sink = amqp_sink(url, tmp_path / f"wf{i}", PROPS)
        sink.use_shared(SharedResources(clients=clients))
        sink.open()
        with pytest.raises(SinkError, match="AMQP broker unavailable") as refused:
            sink.write_batch(events_of(f"wf{i}", 0, 3))
        assert refused.value.retryable and "p@" not in str(refused.value)
        sinks.append(sink)
    assert sinks[0].broker_url == sinks[1].broker_url == f"amqp://u@127.0.0.1:{port}/vh"
    assert "p@" not in sinks[0].broker_url
    assert sinks[0].link is sinks[1].link and isinstance(sinks[0].link, BrokerLink)
    assert len({id(s.link) for s in sinks}) == 3 and clients.count() == 3
    assert len(link_threads()) == 3
    sinks[0].close()
    assert clients.count() == 3, "ex2's sink still uses the first link"
    for sink in sinks[1:]:
        sink.close()
    assert clients.count() == 0
    assert not link_threads()


# ---------------------------------------------------------------- the service


def test_service_uses_one_connection_for_twenty_workflows(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """20 live corpus workflows attached to ``monitord serve``, each with its own exchange on
    one broker: the service process holds exactly one connection to it, and every workflow's
    events arrive complete and in order."""
    from sinks.amqp.event_filter import EventFilter
    from tests.conftest import CORPUS, copy_submit_dir, require_corpus
    from tests.test_amqp_broker import assert_messages_match, expected_events
    from tests.test_service import (
        attach,
        finished,
        service_env,
        start_service,
        stop_service,
        wait_until,
        write_config,
    )

    require_corpus()
    sample, count = "process_wf_success", 20
    port = urlsplit(amqp_base).port or 5672
    cfg = write_config(tmp_path)
    env = service_env(tmp_path, cfg)
    log = tmp_path / "service.log"
    runs = []
    for i in range(count):
        ep = new_endpoint(endpoints, amqp_base, f"svc{i:02d}")
        run = tmp_path / "runs" / f"run{i:02d}"
        dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
        lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
        dagman_out.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
        runs.append((run, dagman_out, lines[len(lines) // 2 :], ep))
    service = start_service(cfg, env, log)
    try:
        with ServiceSampler(service.pid, port) as sampler:
            results: list[Any] = [None] * count

            def attach_one(i: int) -> None:
                _run_dir, dagman_out, _rest, ep = runs[i]
                results[i] = attach(
                    dagman_out,
                    env,
                    f"-Dpegasus.catalog.workflow.amqp.url={ep.url}",
                    "-Dpegasus.catalog.workflow.amqp.events=*",
                    "--no-dashboard",
                )

            # A few attaches at a time: 20 interpreters starting at once on a loaded 2-core
            # machine each took longer than attach's own timeout; the service still holds all
            # 20 workflows at once, which is what is measured.
            with ThreadPoolExecutor(max_workers=4) as pool:
                list(pool.map(attach_one, range(count)))
            for done in results:
                assert done is not None and done.returncode == 0, done and done.stderr[-2000:]
            wait_until(
                lambda: all(any((r / "monitord.amqp-producer").glob("*/id")) for r, *_ in runs),
                60,
                "every workflow's AMQP sink to open",
                log,
            )
            for _run_dir, dagman_out, rest, _ep in runs:
                with dagman_out.open("a", encoding="utf-8") as fh:
                    fh.write("".join(rest))
            for run, *_ in runs:
                wait_until(lambda r=run: finished(r), 120, f"{run.name} to end", log)
            wait_until(lambda: not tcp_connections(service.pid, port), 30, "the link to close", log)
    finally:
        assert stop_service(service) == 0
    text = log.read_text()
    assert sampler.most == 1, f"{sampler.most} connections at once"
    assert len(sampler.seen) == 1, f"{len(sampler.seen)} connections opened"
    assert text.count('"AMQP connected"') == 1
    expected = expected_events(sample, EventFilter.from_property("*"))
    delivered = 0
    for _run_dir, _dagman_out, _rest, ep in runs:
        got = consume(ep, len(expected))
        assert_messages_match(got, expected)
        delivered += len(got)
    print(
        f"\n[amqp link] service, {count} live workflows on one broker: {sampler.most} TCP "
        f"connection (distinct seen: {len(sampler.seen)}); {delivered} events delivered, "
        f"{len(expected)} per workflow, each complete and in order"
    )


class ServiceSampler(ConnectionSampler):
    """:class:`ConnectionSampler` for another process."""

    def __init__(self, pid: int, port: int) -> None:
        super().__init__(port)
        self.pid = pid

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                now = tcp_connections(self.pid, self.port)
            except OSError:
                now = set()
            self.most = max(self.most, len(now))
            self.seen |= now
            time.sleep(0.02)
