"""One HTTP(S) connection to an OTLP endpoint, kept alive between exports.

The sink composes an :class:`Exporter`: its own in the per-workflow daemon, the service's
shared one per endpoint (``Capabilities.shares_connection``), so a thousand workflows tracing
to one Collector hold one connection.  It is not thread-safe and need not be: its users share
one thread (the daemon's sink thread, or the service's lane for that endpoint).  Headers
(tokens) go with each request, so workflows with their own tokens still share it.
"""

from __future__ import annotations

import http.client
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from sinks.otlp.config import OTLPConfig


@dataclass(frozen=True)
class Answer:
    """A receiver's answer to one POST."""

    status: int
    reason: str
    body: bytes


def exporter_key(config: OTLPConfig) -> tuple[object, ...]:
    """What makes two sinks' connections interchangeable: endpoint, TLS and timeout (not
    the headers, which are per request)."""
    return ("otlp", config.url, config.tls_verify, config.tls_ca_file, config.timeout)


class Exporter:
    """POSTs request bodies to one endpoint over one kept-alive connection."""

    def __init__(self, config: OTLPConfig) -> None:
        self.config = config
        parts = urlsplit(config.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._conn: http.client.HTTPConnection | None = None
        self.connections = 0  # opened so far (reconnects included)
        self.requests = 0  # answered

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is not None:
            return self._conn
        if self._https:
            context = ssl.create_default_context(cafile=self.config.tls_ca_file)
            if not self.config.tls_verify:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            self._conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.config.timeout, context=context
            )
        else:
            self._conn = http.client.HTTPConnection(
                self._host, self._port, timeout=self.config.timeout
            )
        self.connections += 1
        return self._conn

    def drop(self) -> None:
        """Forget the connection (after an error: the next POST opens a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    close = drop

    def post(self, body: bytes, headers: dict[str, str]) -> Answer:
        """One POST (OSError, HTTPException when there was no answer; the connection is
        dropped then).  A kept-alive connection the receiver closed while idle is opened anew
        once, at once: that is no outage (no retry, no "sink down" line)."""
        reused = self._conn is not None
        try:
            try:
                answer = self._once(body, headers)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                if not reused:
                    raise
                self.drop()
                answer = self._once(body, headers)
        except (OSError, http.client.HTTPException):
            self.drop()
            raise
        self.requests += 1
        return answer

    def _once(self, body: bytes, headers: dict[str, str]) -> Answer:
        conn = self._connect()
        conn.request("POST", self._path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        if response.getheader("Connection", "").lower() == "close":
            self.drop()
        return Answer(response.status, response.reason, data)
