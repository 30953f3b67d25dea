"""The status endpoint over real sockets, fed by real workflows (corpus dagman.out lines)."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from monitord.service.http import ListenError, parse_listen, render_metrics, start_http
from monitord.service.jobcounts import job_counts
from monitord.service.status import (
    JOB_COLUMNS,
    ServiceSnapshot,
    StatusFormatError,
    WorkflowStatus,
    from_json,
    to_json,
)
from sinks.runtime.health import SinkHealth, merge_health
from tests.status_fixtures import (
    CorpusStatusSource,
    corpus_dagman_outs,
    fed_workflow,
    need_corpus,
)

SINKS = [
    SinkHealth(name="sqlite:///run/wf.stampede.db", queued=3),
    SinkHealth(
        name='amqp "broker"\nnext',
        spooled=7,
        state="draining",
        spooled_bytes=900,
        oldest=12.5,
        retries=4,
    ),
]


@pytest.fixture
def source(corpus_tz) -> CorpusStatusSource:
    need_corpus()
    fed = []
    for i, path in enumerate(corpus_dagman_outs()):
        # Every other workflow stopped a third of the way in: some mid-run, some finished.
        total = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        fed.append(fed_workflow(path, lines=total // 3 if i % 2 else None))
    return CorpusStatusSource(fed, SINKS)


@pytest.fixture
async def server(source):
    srv = await start_http(source, "127.0.0.1:0")
    yield srv
    srv.close()
    await srv.wait_closed()


def port_of(srv) -> int:
    return srv.sockets[0].getsockname()[1]


async def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return status, headers, body


async def get(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    return await exchange(port, f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


async def test_healthz(server, source):
    status, headers, body = await get(port_of(server), "/healthz")
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    doc = orjson.loads(body)
    assert doc["status"] == "ok"
    assert doc["workflows"] == len(source.fed)
    assert 12 <= doc["uptime_seconds"] < 120


async def test_healthz_names_the_sinks_down_or_disabled(source):
    source.sinks = [
        *SINKS,
        SinkHealth("postgresql://u@db/x", spooled=120, state="down", since=1.7e9, retries=31,
                   workflows=5, workflows_not_up=("w1", "w2"), last_error="connection refused"),
        SinkHealth("mysql://u@db/y", state="disabled", since=1.8e9,
                   permanent_failures=1, last_error="Access denied"),
    ]  # fmt: skip
    srv = await start_http(source, "127.0.0.1:0")
    try:
        status, _, body = await get(port_of(srv), "/healthz")
        doc = orjson.loads(body)
        assert status == 503 and doc["status"] == "failing", doc
        assert [(s["name"], s["state"], s["since"]) for s in doc["sinks"]] == [
            ("postgresql://u@db/x", "down", 1.7e9),
            ("mysql://u@db/y", "disabled", 1.8e9),
        ]
        assert doc["sinks"][0]["spooled"] == 120 and doc["sinks"][0]["workflows"] == ["w1", "w2"]
        _, _, metrics = await get(port_of(srv), "/metrics")
        assert b'monitord_sink_up{sink="postgresql://u@db/x"} 0.0' in metrics
        assert b'monitord_sink_disabled{sink="mysql://u@db/y"} 1.0' in metrics
    finally:
        srv.close()
        await srv.wait_closed()


async def test_metrics_parse_with_prometheus_client(server, source):
    status, headers, body = await get(port_of(server), "/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: dict[tuple[str, frozenset], float] = {}
    types = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            types[s.name] = family.type
            key = (s.name, frozenset(s.labels.items()))
            assert key not in samples, f"duplicate series {key}"
            samples[key] = s.value

    def value(name: str, **labels: str) -> float:
        return samples[(name, frozenset(labels.items()))]

    assert value("process_start_time_seconds") == pytest.approx(source.started_at)
    assert value("monitord_workflows") == len(source.fed)
    assert types["monitord_workflow_events_total"] == "counter"
    assert types["monitord_sink_failures_total"] == "counter"
    for f in source.fed:
        uuid = f.wf.uuid
        counts = job_counts(f.wf)
        for column in JOB_COLUMNS:
            assert value("monitord_workflow_jobs", wf_uuid=uuid, state=column) == counts[column]
        assert value("monitord_workflow_lag_bytes", wf_uuid=uuid) == f.size - f.fed_bytes
        assert value("monitord_workflow_events_total", wf_uuid=uuid) == len(f.wf.events)
        assert value("monitord_workflow_events_per_second", wf_uuid=uuid) == pytest.approx(
            len(f.wf.events) / 10.0
        )
        expected_lag = 0.0 if f.size == f.fed_bytes else 3.5
        assert value("monitord_workflow_lag_seconds", wf_uuid=uuid) == expected_lag
    # Half the corpus stopped early: their lag is real, the others are caught up.
    assert any(f.size > f.fed_bytes for f in source.fed)
    assert any(f.size == f.fed_bytes for f in source.fed)
    for sink in SINKS:  # the second name needs quote and newline escaping
        assert value("monitord_sink_queued", sink=sink.name) == sink.queued
        assert value("monitord_sink_spooled_events", sink=sink.name) == sink.spooled
        assert value("monitord_sink_spooled_bytes", sink=sink.name) == sink.spooled_bytes
        assert value("monitord_sink_oldest_undelivered_seconds", sink=sink.name) == (sink.oldest)
        assert value("monitord_sink_failures_total", sink=sink.name) == sink.failures
        assert value("monitord_sink_retries_total", sink=sink.name) == sink.retries
        assert value("monitord_sink_permanent_failures_total", sink=sink.name) == 0
        assert value("monitord_sink_up", sink=sink.name) == 1  # draining a backlog is up
    assert value("monitord_notifications_running") == 1
    assert value("monitord_notifications_queued") == 2


def test_metrics_special_values():
    snap = ServiceSnapshot(
        started_at=1.5,
        workflows=[
            WorkflowStatus(
                "u\\1", "/x.dagman.out", "/", "running", {}, 0.0, 0, float("inf"), float("nan"), 0
            )
        ],
    )
    text = render_metrics(snap)
    assert 'monitord_workflow_lag_seconds{wf_uuid="u\\\\1"} +Inf' in text
    assert 'monitord_workflow_events_per_second{wf_uuid="u\\\\1"} NaN' in text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    (sample,) = families["monitord_workflow_lag_seconds"].samples
    assert sample.labels == {"wf_uuid": "u\\1"}


async def test_status_json_round_trip(server, source):
    status, headers, body = await get(port_of(server), "/status.json")
    assert status == 200 and headers["content-type"] == "application/json"
    snap = from_json(body)
    assert snap == source.snapshot()
    assert {w.wf_uuid for w in snap.workflows} == {f.wf.uuid for f in source.fed}
    assert from_json(to_json(snap)) == snap


# /status.json of two sinks as the service wrote it when it copied SinkHealth into a status
# record of its own (commit 329b197): the format monitord status and scrapers read
SINK_HEALTH = [
    SinkHealth(
        "sql:postgresql://u@db/x",
        state="down",
        since=1.7e9,
        spooled=120,
        spooled_bytes=9000,
        oldest=12.346,
        queued=2,
        retries=30,
        permanent_failures=1,
        attempts=3,
        outages=2,
        outage_seconds=4.5,
        down_seconds=1.0,
        last_error="connection refused (postgresql://u:secret@db/x)",
        events_written=77,
        row_by_row_batches=3,
        rows_rejected=7,
        workflows=5,
        workflows_not_up=("w1", "w2"),
    ),
    SinkHealth("sql: per-workflow files"),
]
SINKS_JSON = (
    b'{"started_at":1.5,"workflows":[],"sinks":[{"name":"sql:postgresql://u@db/x","queued":2,'
    b'"spooled":120,"failures":31,"state":"down","since":1700000000.0,"spooled_bytes":9000,'
    b'"oldest_age":12.346,"retries":30,"permanent_failures":1,"workflows":5,'
    b'"workflows_not_up":["w1","w2"],"last_error":"connection refused '
    b'(postgresql://u:***@db/x)","row_by_row_batches":3,"rows_rejected":7},'
    b'{"name":"sql: per-workflow files","queued":0,"spooled":0,"failures":0,"state":"up",'
    b'"since":null,"spooled_bytes":0,"oldest_age":0.0,"retries":0,"permanent_failures":0,'
    b'"workflows":1,"workflows_not_up":[],"last_error":null,"row_by_row_batches":0,'
    b'"rows_rejected":0}],"notifications_running":0,"notifications_queued":0,"plugins":[],'
    b'"finished":[],"roots":[]}'
)


def test_status_json_shows_a_sinks_health_as_it_always_did():
    """The sinks of /status.json are SinkHealth records: the same keys, values and order as
    before; what it does not show (attempts, outages, events written) stays out."""
    snap = ServiceSnapshot(started_at=1.5, sinks=SINK_HEALTH)
    assert to_json(snap) == SINKS_JSON
    back = from_json(SINKS_JSON)
    assert to_json(back) == SINKS_JSON
    assert [s.failures for s in back.sinks] == [31, 0]
    assert back.sinks[0].oldest == 12.346 and back.sinks[0].attempts == 0


def test_a_destinations_oldest_undelivered_age_is_shown_to_the_millisecond():
    """As the status record the service once made of it rounded it (JSON and /metrics)."""
    merged = merge_health("d", [SinkHealth("a", oldest=1.23456), SinkHealth("b", oldest=0.5)])
    assert merged.oldest == 1.235


def test_from_json_rejects_bad_documents():
    for bad in (b"nope", b"[]", b'{"workflows": []}', b'{"started_at": 1, "workflows": [{}]}'):
        with pytest.raises(StatusFormatError):
            from_json(bad)


async def test_status_page_escapes_everything(source):
    source.fed[0].wf.run_dir = '/tmp/<b>"evil"&'
    evil = SinkHealth(name="<script>alert(1)</script>", queued=1, spooled=2, retries=3)
    source.sinks = [evil]
    srv = await start_http(source, "127.0.0.1:0")
    try:
        status, headers, body = await get(port_of(srv), "/status")
    finally:
        srv.close()
        await srv.wait_closed()
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'sha256-" in headers["content-security-policy"]
    page = body.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'title="/tmp/&lt;b&gt;&quot;evil&quot;&amp;"' in page
    for f in source.fed:
        assert f'data-wf-uuid="{f.wf.uuid}"' in page
    assert "http://" not in page and "https://" not in page  # no external assets


async def test_errors_and_the_server_survives(server):
    port = port_of(server)
    status, _, _ = await get(port, "/nope")
    assert status == 404
    status, headers, _ = await get(port, "/metrics", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    status, headers, body = await get(port, "/healthz", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0
    status, headers, _ = await get(port, "/")
    assert status == 302 and headers["location"] == "/status"
    status, _, _ = await get(port, "/healthz?x=1")
    assert status == 200
    for raw, expected in [
        (b"garbage\r\n\r\n", 400),
        (b"GET /healthz\r\n\r\n", 400),
        (b"GET /healthz HTTP/2.0\r\n\r\n", 505),
        (b"GET healthz HTTP/1.1\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"GET /\xff\xfe HTTP/1.1\r\n\r\n", 400),
        (b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n", 431),
    ]:
        status, _, _ = await exchange(port, raw)
        assert status == expected, raw[:40]
    # A client that disconnects mid-request, or never finishes its head.
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /heal")
    writer.close()
    status, _, body = await get(port, "/healthz")
    assert status == 200 and orjson.loads(body)["status"] == "ok"


async def test_snapshot_failure_is_an_error_page_not_a_crash():
    class Broken:
        def snapshot(self) -> ServiceSnapshot:
            raise RuntimeError("workflow table locked")

    srv = await start_http(Broken(), "127.0.0.1:0")
    try:
        status, _, body = await get(port_of(srv), "/healthz")
        assert status == 503 and b"workflow table locked" in body
        status, _, _ = await get(port_of(srv), "/metrics")
        assert status == 500
    finally:
        srv.close()
        await srv.wait_closed()


def test_parse_listen():
    assert parse_listen("127.0.0.1:9175") == ("127.0.0.1", 9175)
    assert parse_listen("9175") == ("127.0.0.1", 9175)
    assert parse_listen(":9175") == ("127.0.0.1", 9175)
    assert parse_listen("[::1]:80") == ("::1", 80)
    assert parse_listen("localhost:0") == ("localhost", 0)
    for bad in ("::1:80", "host:port", "1.2.3.4:70000", ""):
        with pytest.raises(ListenError):
            parse_listen(bad)
