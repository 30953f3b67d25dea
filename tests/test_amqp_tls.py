"""amqps:// verifies the broker's certificate unless the endpoint explicitly opts out."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sinks.amqp.broker import link_key, tls_context
from sinks.amqp.config import AMQPConfig, parse_amqp_url
from sinks.runtime.base import SinkError
from tests.processes import self_signed_cert

pytestmark = pytest.mark.quick

URL = "amqps://u:secret@localhost:5671/vh/ex"


def test_verification_is_the_default() -> None:
    cfg = parse_amqp_url(URL)
    assert cfg.tls_verify is True
    ctx = tls_context(cfg)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname is True


def test_explicit_opt_out_and_bad_values() -> None:
    cfg = parse_amqp_url(URL, {"tls_verify": "false"})
    ctx = tls_context(cfg)
    assert ctx.verify_mode == ssl.CERT_NONE
    assert ctx.check_hostname is False
    with pytest.raises(SinkError, match="tls_verify"):
        parse_amqp_url(URL, {"tls_verify": "maybe"})
    with pytest.raises(SinkError, match="tls_ca_file") as err:
        parse_amqp_url(URL, {"tls_ca_file": "/nonexistent/ca.pem"})
    assert "secret" not in str(err.value)


def test_verify_settings_never_share_a_connection() -> None:
    assert link_key(parse_amqp_url(URL)) != link_key(parse_amqp_url(URL, {"tls_verify": "no"}))


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A TLS listener on loopback with a self-signed certificate for ``localhost``."""
    cert, key = self_signed_cert(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"AMQP")
            except (ssl.SSLError, OSError):
                pass  # the client refused our certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], cert
    finally:
        stop.set()
        listener.close()
        thread.join(5)


def _handshake(cfg: AMQPConfig, port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with tls_context(cfg).wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.recv(4)


def test_an_unknown_certificate_is_refused_unless_trusted_or_opted_out(
    tls_server: tuple[int, Path],
) -> None:
    port, cert = tls_server
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(parse_amqp_url(URL), port)
    assert _handshake(parse_amqp_url(URL, {"tls_ca_file": str(cert)}), port) == b"AMQP"
    assert _handshake(parse_amqp_url(URL, {"tls_verify": "false"}), port) == b"AMQP"
