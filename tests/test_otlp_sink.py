"""The OTLP sink's configuration, wire format and HTTP behaviour (sinks/otlp/).

The HTTP tests run a small receiver in a thread of the test that answers what each test asks
(503, 400, ...) and decodes what it got with opentelemetry-proto."""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sinks import registry
from sinks.otlp import factory as otlp_factory
from sinks.otlp.config import OTLPConfig, parse_otlp
from sinks.otlp.encode import decode_request, encode_request, response_body
from sinks.otlp.model import TraceModel
from sinks.otlp.sink import OTLPSink
from sinks.otlp.spans import canonical_trace
from sinks.otlp.state import read_kept
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities, SharedResources, capabilities_of
from sinks.runtime.clients import SharedClients
from sinks.runtime.delivery import Delivery
from sinks.runtime.factory import SinkRequest
from sinks.runtime.marks import HeldMarks, MarkedBatch, Marks, count_batch
from tests.processes import self_signed_cert
from tests.test_otlp_model import end, one_job, start

TOKEN = "s3cr3t-t0ken-xyz"


# --- configuration ---------------------------------------------------------------------------
def test_urls_name_the_traces_endpoint() -> None:
    assert parse_otlp("otlp+http://h:4318", env={}).url == "http://h:4318/v1/traces"
    assert parse_otlp("otlp+https://h:4318/", env={}).url == "https://h:4318/v1/traces"
    assert parse_otlp("otlp+http://h:9/custom/path", env={}).url == "http://h:9/custom/path"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}
    assert parse_otlp("otlp://", env=env).url == "http://c:4318/v1/traces"
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "https://t:1/x"
    assert parse_otlp("otlp://", env=env).url == "https://t:1/x"


@pytest.mark.parametrize(
    ("dest", "env", "message"),
    [
        ("otlp://", {}, "neither is set"),
        ("otlp+ftp://h", {}, "not an OTLP URL"),
        ("otlp+http://", {}, "no host"),
        ("otlp+http://h:notaport", {}, "malformed"),
        ("otlp+http://h", {"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, "key=value"),
        ("otlp+http://h", {"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "compression"),
    ],
)
def test_bad_settings_are_one_line_errors(dest: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(SinkError, match=message):
        parse_otlp(dest, env=env)


def test_environment_and_properties() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{TOKEN},x-org=42",
        "OTEL_SERVICE_NAME": "svc",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,site=isi%20west",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
    }
    cfg = parse_otlp("otlp+https://h:4318", env=env)
    assert cfg.headers == {"authorization": f"Bearer {TOKEN}", "x-org": "42"}
    assert cfg.resource == {
        "deployment.environment": "prod",
        "site": "isi west",
        "service.name": "svc",
    }
    assert (cfg.timeout, cfg.compression, cfg.tls_verify) == (2.5, "gzip", True)
    assert TOKEN not in repr(cfg)
    # a named endpoint's Pegasus properties win over the environment
    dest = "otlp+http://tempo:4318"
    props = {
        "pegasus.catalog.workflow.traces.url": dest,
        "pegasus.catalog.workflow.traces.service_name": "pegasus-site",
        "pegasus.catalog.workflow.traces.headers": "x-scope-orgid=tenant1",
        "pegasus.catalog.workflow.traces.timeout": "4",
    }
    cfg = parse_otlp(dest, props, env=env)
    assert cfg.resource["service.name"] == "pegasus-site"
    assert cfg.headers == {"x-scope-orgid": "tenant1"}
    assert cfg.timeout == 4.0


def test_url_credentials_become_basic_auth_never_shown() -> None:
    cfg = parse_otlp(f"otlp+https://user:{TOKEN}@h:4318", env={})
    assert TOKEN not in cfg.safe_url and cfg.safe_url == "https://h:4318/v1/traces"
    assert cfg.headers["Authorization"].startswith("Basic ")


def test_factory_is_registered_and_names_the_missing_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reg = registry.Registry.discover()
    assert reg.factory_for("otlp+http://h:4318").name == "otlp"
    assert reg.factory_for("otlp+https://h").name == "otlp"
    assert reg.by_name["otlp"].capabilities == Capabilities(
        shares_connection=True, keeps_marks=True, resumes=True
    )
    request = SinkRequest("otlp+http://h:4318", run_dir=".", restart=False)
    monkeypatch.setattr(otlp_factory, "find_spec", lambda name: None)
    with pytest.raises(SinkError, match=r"pip install 'monitord\[otlp\]'"):
        otlp_factory.OTLP.check(request)


# --- the wire ---------------------------------------------------------------------------------
def test_encoding_round_trips_to_the_canonical_trace() -> None:
    spans = TraceModel().feed([start(), *one_job(), *one_job("b", 2, status=1), end(status=1)])
    body = encode_request(spans, {"service.name": "pegasus"}, "0.1.0")
    resources, decoded = decode_request(body)
    assert resources == [{"service.name": "pegasus"}]
    assert canonical_trace(decoded) == canonical_trace(spans)


# --- HTTP -------------------------------------------------------------------------------------
class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as real receivers

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        srv = self.server
        status = srv.answers.pop(0) if srv.answers else 200
        srv.seen.append((status, dict(self.headers), body))
        srv.peers.add(self.client_address)  # one per connection
        payload = response_body() if status == 200 else f"no, {TOKEN}".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        if srv.drop_idle:  # as an idle timeout would: closed without a Connection header
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    drop_idle = False
    answers: list[int]
    seen: list[tuple[int, dict[str, str], bytes]]
    peers: set[tuple[str, int]]


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.answers, srv.seen, srv.peers = [], [], set()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _sink(
    srv: _Server,
    *,
    compression: str | None = None,
    run_dir: str | None = None,
    restart: bool = True,
) -> OTLPSink:
    port = srv.server_address[1]
    cfg = OTLPConfig(
        url=f"http://127.0.0.1:{port}/v1/traces",
        headers={"authorization": f"Bearer {TOKEN}"},
        resource={"service.name": "t"},
        compression=compression,
    )
    return OTLPSink(cfg, run_dir=run_dir, restart=restart)


def _received(srv: _Server) -> list[dict]:
    spans = []
    for status, _headers, body in srv.seen:
        if status == 200:
            spans.extend(decode_request(body)[1])
    return canonical_trace(spans)


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_a_busy_receiver_is_retried_with_the_same_spans(server: _Server, status: int) -> None:
    sink = _sink(server)
    batch = [start(), *one_job()]
    server.answers = [status]
    with pytest.raises(SinkError) as err:
        sink.write_batch(batch)
    assert err.value.retryable and str(status) in str(err.value)
    assert TOKEN not in str(err.value)  # the answer echoed the token: masked
    sink.write_batch(batch)  # the runtime's retry: same batch
    sink.write_batch([end()])
    expected = canonical_trace(TraceModel().feed([*batch, end()]))
    assert _received(server) == expected  # each span once, none lost
    assert server.seen[-1][1]["authorization"] == f"Bearer {TOKEN}"
    assert server.seen[-1][1]["Content-Type"] == "application/x-protobuf"


def test_a_refused_request_is_not_retried(server: _Server) -> None:
    server.answers = [400]
    with pytest.raises(SinkError) as err:
        _sink(server).write_batch([start(), *one_job()])
    assert not err.value.retryable


def test_gzip_compression(server: _Server) -> None:
    import gzip

    sink = _sink(server, compression="gzip")
    sink.write_batch([start(), *one_job()])
    status, headers, body = server.seen[0]
    assert headers["Content-Encoding"] == "gzip"
    assert len(decode_request(gzip.decompress(body))[1]) == 2


def test_no_receiver_is_retryable_and_health_masks_the_token(tmp_path: Path) -> None:
    cfg = OTLPConfig(url="http://127.0.0.1:9/v1/traces", headers={"authorization": TOKEN})
    sink = OTLPSink(cfg)
    with pytest.raises(SinkError) as err:
        sink.write_batch([start(), *one_job()])
    assert err.value.retryable
    delivery = Delivery(sink, retries=1)
    delivery.run(lambda: sink.write_batch([start(), *one_job()]))
    health = delivery.health()
    assert health.state == "down" and health.last_error
    assert TOKEN not in repr(health) and health.destination == "http://127.0.0.1:9/v1/traces"


# --- a clean stop and the next start -----------------------------------------------------------
def _stream() -> list:
    return [start(), *one_job(), *one_job("b", 2, status=1), *one_job("b", 3), end()]


def test_a_clean_stop_keeps_open_spans_for_the_next_start(server: _Server, tmp_path: Path) -> None:
    stream = _stream()
    cut = len(stream) // 2  # job b's first instance is open here
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    first.write_batch(stream[:cut])
    first.close()
    assert first.model.open_spans >= 2  # the workflow and a job instance were kept
    second = _sink(server, run_dir=str(tmp_path), restart=False)
    second.open()
    second.write_batch(stream[cut:])
    second.close()
    assert _received(server) == canonical_trace(TraceModel().feed(stream))


def test_a_restart_starts_anew(server: _Server, tmp_path: Path) -> None:
    stream = _stream()
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    first.write_batch(stream[:5])
    first.close()
    again = _sink(server, run_dir=str(tmp_path), restart=True)  # from line 1: all again
    again.open()
    assert again.model.open_spans == 0
    again.write_batch(stream)
    server.seen = server.seen[-1:]
    assert _received(server) == canonical_trace(TraceModel().feed(stream))


def test_a_failed_batch_kept_at_stop_is_sent_once_by_the_next_start(
    server: _Server, tmp_path: Path
) -> None:
    """The runtime spools the batch that failed; the next daemon hands it over again."""
    from sinks.runtime.codec import decode_batch, encode_batch

    stream = _stream()
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    first.write_batch(stream[:10])
    server.answers = [503]
    with pytest.raises(SinkError):
        first.write_batch(stream[10:])
    first.close()
    second = _sink(server, run_dir=str(tmp_path), restart=False)
    second.open()
    second.write_batch(decode_batch(encode_batch(stream[10:])))  # as the spool gives it back
    assert _received(server) == canonical_trace(TraceModel().feed(stream))


# --- a crash and a resumed daemon (delivery marks) --------------------------------------------
STREAM = "s" * 32


def _numbered(events: list, size: int) -> list[MarkedBatch]:
    """``events`` in batches of ``size``, numbered as a daemon with crash resume numbers them."""
    totals: dict[str, int] = {}
    return [
        MarkedBatch(events[i : i + size], Marks(STREAM, count_batch(events[i : i + size], totals)))
        for i in range(0, len(events), size)
    ]


def _deliver(sink: OTLPSink, batches: list[MarkedBatch]) -> None:
    """What the runtime does with each batch (sinks/runtime/delivery.py ``_write``)."""
    held = HeldMarks(sink.read_marks)
    for batch in batches:
        assert batch.marks is not None
        fresh = held.fresh(batch, batch.marks)
        if fresh:
            sink.write_marked(fresh, batch.marks)
        held.advance(batch.marks)


def _ids(srv: _Server) -> list[str]:
    return [s["span_id"] for s in _received(srv)]


@pytest.mark.parametrize(("snapshot", "kill"), [(2, 7), (4, 5), (5, 5), (3, 10)])
def test_a_resumed_sink_sends_no_span_twice(
    server: _Server, tmp_path: Path, snapshot: int, kill: int
) -> None:
    """A snapshot after batch ``snapshot`` (the daemon flushes its sinks first), a kill after
    batch ``kill`` (no close); the resumed daemon re-feeds every batch after the snapshot:
    the events the sink took in are skipped, the spans still open at the kill completed."""
    stream = _stream()
    batches = _numbered(stream, 3)
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    _deliver(first, batches[:snapshot])
    first.flush()
    _deliver(first, batches[snapshot:kill])  # then kill -9: no flush, no close
    second = _sink(server, run_dir=str(tmp_path), restart=False)
    second.open()
    _deliver(second, batches[snapshot:])
    ids = _ids(server)
    assert len(ids) == len(set(ids)), "a span was sent twice"
    assert _received(server) == canonical_trace(TraceModel().feed(stream))


def test_a_batch_whose_export_failed_before_the_kill_is_sent_once(
    server: _Server, tmp_path: Path
) -> None:
    """The receiver refused batch 4 (503) and the daemon was killed; the resumed one hands
    batch 4 again (spooled, or re-fed): its spans go once, none before it again."""
    stream = _stream()
    batches = _numbered(stream, 3)
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    _deliver(first, batches[:2])
    first.flush()  # a snapshot after batch 2
    _deliver(first, batches[2:3])
    server.answers = [503]
    with pytest.raises(SinkError):
        _deliver(first, batches[3:4])
    second = _sink(server, run_dir=str(tmp_path), restart=False)
    second.open()
    _deliver(second, batches[2:])  # the snapshot was one batch before the failed one
    assert _received(server) == canonical_trace(TraceModel().feed(stream))


def test_the_state_is_written_at_each_export_and_at_flush(server: _Server, tmp_path: Path) -> None:
    """Spans sent: the marks are on disk at once; none sent: by the flush (before a snapshot)."""
    batches = _numbered(_stream(), 3)
    sink = _sink(server, run_dir=str(tmp_path), restart=False)
    sink.open()
    assert sink.state_path is not None
    _deliver(sink, batches[:1])  # the workflow starts: no span ends
    assert not os.path.exists(sink.state_path)
    sink.flush()
    assert read_kept(sink.state_path).exported == batches[0].marks.counts  # type: ignore[union-attr]
    for sent in batches[1:]:  # up to the first batch that ends a span
        _deliver(sink, [sent])
        if server.seen:
            break
    assert read_kept(sink.state_path).exported == sent.marks.counts  # type: ignore[union-attr]
    sink.forget_marks("w")  # the workflow ended in order
    assert read_kept(sink.state_path).stream is None


def test_a_restart_from_line_1_sends_everything_again(server: _Server, tmp_path: Path) -> None:
    """No snapshot to resume from (the outputs start over): the state is dropped, and every
    span goes again, with the same ids (the only case the receiver sees a span twice)."""
    stream = _stream()
    batches = _numbered(stream, 3)
    first = _sink(server, run_dir=str(tmp_path), restart=False)
    first.open()
    _deliver(first, batches[:5])
    again = _sink(server, run_dir=str(tmp_path), restart=True)
    again.open()
    _deliver(again, batches)
    before = canonical_trace(TraceModel().feed([e for b in batches[:5] for e in b]))
    assert len(_ids(server)) == len(before) + len(canonical_trace(TraceModel().feed(stream)))


# --- TLS ----------------------------------------------------------------------------------------
@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[_Server, Path]]:
    """The test receiver behind TLS, with a self-signed certificate for ``localhost``."""
    import ssl

    cert, key = self_signed_cert(tmp_path)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.answers, srv.seen, srv.peers = [], [], set()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, cert
    srv.shutdown()
    srv.server_close()


def test_tls_is_verified_by_default(tls_server: tuple[_Server, Path]) -> None:
    srv, cert = tls_server
    url = f"https://localhost:{srv.server_address[1]}/v1/traces"
    batch = [start(), *one_job()]
    with pytest.raises(SinkError, match="certificate") as err:
        OTLPSink(OTLPConfig(url=url)).write_batch(batch)
    assert not err.value.retryable  # a wrong certificate does not fix itself
    OTLPSink(OTLPConfig(url=url, tls_ca_file=str(cert))).write_batch(batch)
    OTLPSink(OTLPConfig(url=url, tls_verify=False)).write_batch(batch)
    assert len(srv.seen) == 2


def test_a_kept_alive_connection_the_receiver_dropped_is_reopened_at_once(
    server: _Server,
) -> None:
    """Receivers close idle keep-alive connections; the next export must not fail for it."""
    sink = _sink(server)
    sink.write_batch([start(), *one_job("a", 1)])
    assert sink.exporter.connected  # kept for the next batch (HTTP/1.1 keep-alive)
    server.drop_idle = True  # the server closes it after this answer, without saying so
    sink.write_batch([*one_job("b", 2)])
    sink.write_batch([*one_job("c", 3)])  # on a connection the receiver has closed
    assert sink.requests == 3
    assert len(_received(server)) == 6


def test_sinks_of_one_endpoint_share_the_services_connection(server: _Server) -> None:
    """In the service (``shares_connection``) every workflow's sink to one endpoint takes the
    one exporter of its key: one connection, each sink its own trace model and requests; the last sink to close closes it."""
    shared = SharedResources(clients=SharedClients())
    sinks = [_sink(server), _sink(server)]
    for sink in sinks:
        assert capabilities_of(sink).shares_connection
        sink.use_shared(shared)
    assert sinks[0].lane_key == sinks[1].lane_key == sinks[0].name
    sinks[0].write_batch([start(), *one_job("a", 1)])
    sinks[1].write_batch([start(), *one_job("b", 1)])
    sinks[0].write_batch([*one_job("c", 2)])
    assert len(server.seen) == 3 and len(server.peers) == 1
    assert shared.clients.made == 1
    sinks[0].close()
    assert sinks[1].exporter.connected  # still the other's
    sinks[1].close()
    assert shared.clients.count() == 0 and not sinks[1].exporter.connected
