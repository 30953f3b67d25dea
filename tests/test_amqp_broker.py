"""AMQP sink against a real RabbitMQ (``scripts/services.sh``, ``MONITORD_TEST_AMQP_URL``).

Every test declares its own topic exchange and a durable queue bound with ``#``, points the
daemon at ``<server URL>/<exchange>``, and compares what the queue received with the
reference's ``events.bp`` of the corpus sample: same events in the same order, routing key
= event name, JSON body equal attribute by attribute (rendered back the way BP renders them).

The outage tests stop and restart the broker with ``scripts/services.sh`` (same SVC_DIR as
the caller), so they restart it in a ``finally`` whatever happens.  Figures (delivery
counts, outage and drain times) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aio_pika
import pytest

from monitord.core.readers.bp import parse_bp_line
from sinks.amqp.event_filter import EventFilter
from sinks.encoding import bp_timestamp, bp_value
from sinks.runtime.spool import BatchSpool
from tests.conftest import (
    CORPUS,
    CORPUS_TZ,
    STAMPEDE_DIFF,
    copy_submit_dir,
    corpus_samples,
    require_corpus,
)
from tests.servers import require_server, service

# Wall-clock values of the replay, never reproducible (corpus README).
WALL_CLOCK_TS = {"stampede.static.start", "stampede.static.end", "stampede.rc.pfn"}

Message = tuple[str, str, bytes]  # routing key, message id, body


# ---------------------------------------------------------------- broker helpers


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _declare(base: str, exchange: str, queue: str) -> None:
    conn = await aio_pika.connect(base)
    async with conn:
        ch = await conn.channel()
        ex = await ch.declare_exchange(exchange, aio_pika.ExchangeType.TOPIC, durable=True)
        q = await ch.declare_queue(queue, durable=True)
        await q.bind(ex, "#")


async def _delete(base: str, exchange: str, queue: str) -> None:
    conn = await aio_pika.connect(base)
    async with conn:
        ch = await conn.channel()
        await ch.queue_delete(queue)
        await ch.exchange_delete(exchange)


async def _consume(
    base: str, queue: str, count: int, timeout: float, quiet: float
) -> list[Message]:
    """Everything in ``queue``: at least ``count`` messages (or until ``timeout``), then until
    nothing more arrives for ``quiet`` seconds (so duplicates would show)."""
    out: list[Message] = []
    conn = await aio_pika.connect(base)
    async with conn:
        ch = await conn.channel()
        q = await ch.get_queue(queue)
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() < deadline:
            msg = await q.get(fail=False, no_ack=True)
            if msg is None:
                if len(out) >= count and time.monotonic() - last > quiet:
                    break
                await asyncio.sleep(0.05)
                continue
            last = time.monotonic()
            out.append((msg.routing_key or "", msg.message_id or "", msg.body))
    return out


class Endpoint:
    """One exchange + queue of a test, and the sink URL that targets it."""

    def __init__(self, base: str, tag: str) -> None:
        self.base = base.rstrip("/")
        suffix = uuid.uuid4().hex[:8]
        self.exchange = f"monitord.test.{tag}.{suffix}"
        self.queue = f"monitord.test.{tag}.{suffix}.q"
        self.url = f"{self.base}/{self.exchange}"

    def declare(self) -> None:
        _run(_declare(self.base, self.exchange, self.queue))

    def delete(self) -> None:
        try:
            _run(_delete(self.base, self.exchange, self.queue))
        except Exception:  # best effort cleanup
            pass

    def consume(self, count: int, timeout: float = 60.0, quiet: float = 1.0) -> list[Message]:
        return _run(_consume(self.base, self.queue, count, timeout, quiet))


@pytest.fixture
def amqp_base() -> str:
    base = require_server("amqp")
    # The server URL ends with the vhost; the sink URL appends the exchange to it.
    assert base.count("/") >= 3, "MONITORD_TEST_AMQP_URL must name a vhost"
    return base


@pytest.fixture
def endpoints(amqp_base: str) -> Iterator[list[Endpoint]]:
    made: list[Endpoint] = []
    yield made
    for ep in made:
        ep.delete()


def new_endpoint(endpoints: list[Endpoint], base: str, tag: str) -> Endpoint:
    ep = Endpoint(base, tag)
    ep.declare()
    endpoints.append(ep)
    return ep


# ---------------------------------------------------------------- expected events


def expected_events(sample: str, selected: EventFilter) -> list[tuple[str, dict[str, str]]]:
    """The reference's events of ``sample`` that ``selected`` passes, as (name, BP fields)."""
    out = []
    with open(CORPUS / sample / "expected" / "events.bp", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = parse_bp_line(line.rstrip("\n"))
                if selected.accepts(record["event"]):
                    out.append((record["event"], record))
    return out


def body_as_bp(body: bytes) -> tuple[str, dict[str, str]]:
    """A JSON body rendered back into BP fields (keys as JSON has them, values as BP text)."""
    obj = json.loads(body)
    keys = list(obj)
    assert keys[-1] == "event", f"'event' is not the last key: {keys}"
    name = obj.pop("event")
    fields = {"level": obj.pop("level", "Info")}
    if "ts" in obj:
        fields["ts"] = bp_timestamp(obj.pop("ts"))
    fields.update((k, _bp_text(v)) for k, v in obj.items())
    return name, fields


def _bp_text(value: Any) -> str:
    """What the BP reader gives back for ``value`` (BP's quoting removed)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict | tuple):
        return repr(value)
    return bp_value(value)


def assert_messages_match(
    messages: list[Message], expected: list[tuple[str, dict[str, str]]]
) -> None:
    names = [m[0] for m in messages]
    assert len(messages) == len(expected), (
        f"{len(messages)} messages for {len(expected)} expected events; "
        f"ids {[m[1] for m in messages][:5]}..."
    )
    assert names == [name for name, _ in expected], "routing keys differ from the event order"
    ids = [m[1] for m in messages]
    assert len(set(ids)) == len(ids), "a message arrived twice"
    for index, ((key, _mid, body), (name, record)) in enumerate(
        zip(messages, expected, strict=True)
    ):
        got_name, got = body_as_bp(body)
        assert got_name == key == name, (index, got_name, key, name)
        want = {k.replace(".", "_"): v for k, v in record.items() if k != "event"}
        if name in WALL_CLOCK_TS:
            want.pop("ts", None)
            got.pop("ts", None)
        assert "ts" in got or "ts" not in want, (index, name, "ts missing")
        assert list(got) == [k for k in ["level", "ts"] if k in want] + [
            k for k in want if k not in ("level", "ts")
        ], (index, name, list(got), list(want))
        assert got == want, (
            index,
            name,
            {k: (got.get(k), want.get(k)) for k in want if got.get(k) != want.get(k)},
        )


def message_ids_increase(messages: list[Message]) -> bool:
    positions = [tuple(int(x) for x in m[1].split(":")[1:]) for m in messages]
    return positions == sorted(positions)


# ---------------------------------------------------------------- daemon helpers


def daemon_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "monitord.cli", *args]


def daemon_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}


def replay(
    run: Path, tmp_path: Path, *args: str, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    dagman_out = next(run.glob("*.dag.dagman.out"))
    proc = subprocess.run(
        daemon_cmd(*args, "--no-dashboard", "-r", dagman_out.name),
        cwd=run,
        env=daemon_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return proc


def spool_pending(run: Path) -> int:
    """Events the delivery runtime left spooled in ``run`` (the AMQP sink's, in these tests)."""
    total = 0
    root = run / "monitord.spool"
    for path in root.iterdir() if root.is_dir() else ():
        spool = BatchSpool(str(path))
        spool.open()
        total += spool.events
        spool.close()
    return total


def stampede_diff(sample: str, run: Path) -> None:
    db = next(run.glob("*.stampede.db"))
    diff = subprocess.run(
        [
            sys.executable,
            str(STAMPEDE_DIFF),
            str(CORPUS / sample / "expected" / "stampede.db"),
            str(db),
        ],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0, diff.stdout[-3000:]


def log_value(stderr: str, event: str, key: str, *, having: str = "") -> str | None:
    """``key``'s value in the last log line of ``event`` (that contains ``having``)."""
    found = None
    for line in stderr.splitlines():
        if event in line and having in line:
            m = re.search(rf"\b{key}=(\S+)", line)
            if m:
                found = m.group(1)
    return found


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("sample", corpus_samples() or ["process_wf_success"])
def test_replay_delivers_every_event(
    sample: str, tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """``-d`` endpoint with the default filter + a property endpoint with ``*``, one replay."""
    require_corpus()
    default = new_endpoint(endpoints, amqp_base, "default")
    everything = new_endpoint(endpoints, amqp_base, "all")
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    replay(
        run,
        tmp_path,
        f"-Dpegasus.catalog.workflow.all.url={everything.url}",
        "-Dpegasus.catalog.workflow.all.events=*",
        "-d",
        default.url,
    )
    all_expected = expected_events(sample, EventFilter.from_property("*"))
    dash_expected = expected_events(sample, EventFilter.from_property(None))
    got_all = everything.consume(len(all_expected))
    got_dash = default.consume(len(dash_expected))
    assert_messages_match(got_all, all_expected)
    assert_messages_match(got_dash, dash_expected)
    assert message_ids_increase(got_all)
    assert spool_pending(run) == 0
    print(
        f"\n[amqp] {sample}: {len(got_all)} events (filter '*'), "
        f"{len(got_dash)} events (default filter)"
    )


def test_wrong_password_is_never_shown(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    require_corpus()
    ep = new_endpoint(endpoints, amqp_base, "badpw")
    password = "Wr0ngPassw0rd" + uuid.uuid4().hex[:6]
    bad = re.sub(r"^(amqp://[^:/@]+):[^@]*@", rf"\1:{password}@", ep.url)
    assert password in bad
    conf = tmp_path / "monitord.properties"
    conf.write_text(f"pegasus.catalog.workflow.url={bad}\npegasus.monitord.spool.drain_timeout=2\n")
    run = tmp_path / "run"
    dagman_out = copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
    out_path, err_path = tmp_path / "stdout", tmp_path / "stderr"
    titles = []
    with out_path.open("w") as out_fh, err_path.open("w") as err_fh:
        daemon = subprocess.Popen(
            daemon_cmd("--conf", str(conf), "-vv", "--no-dashboard", "-r", dagman_out.name),
            cwd=run,
            env=daemon_env(tmp_path),
            stdout=out_fh,
            stderr=err_fh,
        )
        try:
            deadline = time.monotonic() + 120
            while daemon.poll() is None and time.monotonic() < deadline:
                try:
                    titles.append(Path(f"/proc/{daemon.pid}/cmdline").read_bytes())
                    for task in Path(f"/proc/{daemon.pid}/task").iterdir():
                        titles.append((task / "comm").read_bytes())
                except OSError:
                    pass
                time.sleep(0.05)
            daemon.wait(timeout=10)
        finally:
            if daemon.poll() is None:
                daemon.kill()
    out, err = out_path.read_text(), err_path.read_text()
    # its only destination holds nothing: an honest non-zero exit, naming the spool (issue 22)
    assert daemon.returncode == 1, err[-3000:]
    assert "ACCESS_REFUSED" in err or "authentication" in err.lower(), err[-3000:]
    assert "events left undelivered in the spool" in err
    assert re.search(r"\d+ events not delivered to amqp://", err) and "monitord.spool" in err
    assert password not in err and password not in out
    assert titles and not any(password.encode() in t for t in titles)
    assert not any((run / "monitord.amqp-producer").rglob("*.tmp"))
    for path in [
        *(run / "monitord.amqp-producer").rglob("*"),
        *(run / "monitord.spool").rglob("*"),
    ]:
        assert password not in path.name
        if path.is_file() and path.suffix != ".seg":
            assert password.encode() not in path.read_bytes()


def _play(
    lines: list[str], dagman_out: Path, back: threading.Event, stopped: threading.Event
) -> None:
    """Before the outage: 30 % of the lines in ~5 s; during it: one line per 0.3 s (keeping
    at least 25 % for later); after the broker is back: the rest, briskly."""
    n = len(lines)
    first, reserve = int(n * 0.3), int(n * 0.25)
    with dagman_out.open("a", encoding="utf-8") as fh:

        def put(line: str, pause: float) -> None:
            fh.write(line)
            fh.flush()
            time.sleep(pause)

        i = 0
        while i < first:
            put(lines[i], 5.0 / first)
            i += 1
        stopped.wait(60)
        while not back.is_set() and i < n - reserve:
            put(lines[i], 0.3)
            i += 1
        back.wait(180)
        time.sleep(1.0)
        while i < n:
            put(lines[i], 0.02)
            i += 1


@pytest.mark.serial  # stops a shared test server
def test_broker_outage_mid_run_loses_nothing(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """Live follow; RabbitMQ stopped for 30 s mid-run, restarted: every event exactly once, in order."""
    require_corpus()
    sample = "process_wf_success"
    ep = new_endpoint(endpoints, amqp_base, "outage")
    run = tmp_path / "run"
    dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
    # DAGMan's pid is this process's: a broker slow to come back (the player waits for it) must
    # not look like a DAGMan that died (the daemon's liveness check after 10 idle passes)
    text = dagman_out.read_text(encoding="utf-8").replace("132896", str(os.getpid()))
    lines = text.splitlines(keepends=True)
    dagman_out.write_text("", encoding="utf-8")
    daemon = subprocess.Popen(
        daemon_cmd(
            f"-Dpegasus.catalog.workflow.amqp.url={ep.url}",
            "-Dpegasus.catalog.workflow.amqp.events=*",
            "-Dpegasus.monitord.spool.drain_timeout=60",
            "--no-dashboard",
            dagman_out.name,
        ),
        cwd=run,
        env=daemon_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    back, stopped = threading.Event(), threading.Event()
    player = threading.Thread(target=_play, args=(lines, dagman_out, back, stopped), daemon=True)
    player.start()
    timings: dict[str, float] = {}
    try:
        time.sleep(5.5)
        assert daemon.poll() is None
        t0 = time.monotonic()
        service("stop", "amqp")
        stopped.set()
        timings["stop"] = time.monotonic() - t0
        time.sleep(30)
        assert daemon.poll() is None, "the daemon died while the broker was down"
        t1 = time.monotonic()
        service("start", "amqp")
        timings["start"] = time.monotonic() - t1
        timings["outage"] = time.monotonic() - t0
    finally:
        stopped.set()
        if not back.is_set():
            try:
                service("start", "amqp")
            finally:
                back.set()
    try:
        player.join(120)
        _, err = daemon.communicate(timeout=180)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err[-4000:]
    assert "AMQP broker unavailable" in err, "the outage was not noticed: it did not span the run"
    expected = expected_events(sample, EventFilter.from_property("*"))
    got = ep.consume(len(expected), quiet=2.0)
    assert_messages_match(got, expected)
    assert message_ids_increase(got)
    assert spool_pending(run) == 0
    stampede_diff(sample, run)
    backlog = log_value(err, "sink is back", "drained_events")
    assert backlog is not None and int(backlog) > 0, "no event was produced during the outage"
    drained = log_value(err, "sink is back", "drain_seconds")
    print(
        f"\n[amqp] outage: broker down {timings['outage']:.1f} s (stop {timings['stop']:.1f} s, "
        f"start {timings['start']:.1f} s); {len(got)}/{len(expected)} events delivered once, "
        f"in order; spooled at reconnect: {backlog}; drained in {drained} s"
    )


@pytest.mark.serial  # stops a shared test server
def test_broker_down_for_a_whole_run(
    tmp_path: Path, amqp_base: str, endpoints: list[Endpoint]
) -> None:
    """The database is complete without the broker, the events wait in the runtime's spool;
    the next replay starts the outputs over (its spool is stale) and delivers every event."""
    require_corpus()
    sample = "hierarchical_wf_success"
    ep = new_endpoint(endpoints, amqp_base, "down")
    run = tmp_path / "run"
    copy_submit_dir(CORPUS / sample / "input", run)
    args = (
        f"-Dpegasus.catalog.workflow.amqp.url={ep.url}",
        "-Dpegasus.catalog.workflow.amqp.events=*",
        "-Dpegasus.monitord.spool.drain_timeout=1",
    )
    expected = expected_events(sample, EventFilter.from_property("*"))
    service("stop", "amqp")
    try:
        t0 = time.monotonic()
        first = replay(run, tmp_path, *args)
        down_run = time.monotonic() - t0
    finally:
        service("start", "amqp")
    assert "AMQP broker unavailable" in first.stderr
    stampede_diff(sample, run)
    assert spool_pending(run) == len(expected)

    t1 = time.monotonic()
    second = replay(run, tmp_path, *args[:-1], "-Dpegasus.monitord.spool.drain_timeout=60")
    up_run = time.monotonic() - t1
    assert log_value(second.stderr, "discarding events an earlier daemon left", "events") == str(
        len(expected)
    )
    got = ep.consume(len(expected), quiet=2.0)
    assert_messages_match(got, expected)  # each once: the stale spool was not sent
    assert message_ids_increase(got)
    assert spool_pending(run) == 0
    stampede_diff(sample, run)
    print(
        f"\n[amqp] broker down for a whole run: replay {down_run:.1f} s, "
        f"{len(expected)} events spooled; next replay {up_run:.1f} s, delivered {len(got)}"
    )
