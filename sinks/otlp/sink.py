"""The OTLP/HTTP trace sink: each batch's finished spans POSTed to ``/v1/traces``.

It runs in its sink thread like every sink (http.client, blocking), on the one delivery
runtime: the runtime retries a batch whose export failed with a retryable error (no
connection, 429, 502, 503, 504), spools the batches behind it while the receiver is down and
reports the same ``SinkHealth``.  A retried batch must not advance the trace model twice: the
spans a failed batch completed are kept with the batch (the *outbox*) and sent again, as they
are, when that same batch comes back.

The sink cannot resume from a daemon's snapshot (``resumes=False``: its open job instances are
in memory), so after a crash the daemon recovers from line 1; span ids are deterministic, so
what is sent again is the very same spans (docs/traces.md, "Crash and restart").
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import os
import ssl
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

import structlog

from monitord.core.events import StampedeEvent
from sinks.otlp.capabilities import OTLP_CAPABILITIES
from sinks.otlp.config import OTLPConfig
from sinks.otlp.encode import encode_request, rejected_spans
from sinks.otlp.model import TraceModel
from sinks.otlp.spans import Span
from sinks.otlp.state import Kept, read_kept, state_file_name, write_kept
from sinks.runtime.base import SinkError

log = structlog.get_logger(__name__)


RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
BODY_SHOWN = 200  # characters of a receiver's error answer put in the error


def _scope_version() -> str:
    try:
        return version("monitord")
    except PackageNotFoundError:
        return "0"


class OTLPSink:
    """Exports the spans each batch completes; keeps the open ones between batches."""

    capabilities = OTLP_CAPABILITIES

    def __init__(
        self, config: OTLPConfig, *, run_dir: str | None = None, restart: bool = True
    ) -> None:
        self.config = config
        self.restart = restart
        # where a clean stop keeps the open spans for the next start (None: nowhere)
        self.state_path = (
            os.path.join(run_dir, state_file_name(config.safe_url)) if run_dir else None
        )
        self.name = f"otlp:{config.safe_url}"
        self.model = TraceModel()
        self.spans_exported = 0
        self.requests = 0
        self._conn: http.client.HTTPConnection | None = None
        self._outbox: tuple[list[StampedeEvent], list[Span]] | None = None
        self._scope_version = _scope_version()
        parts = urlsplit(config.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")

    @property
    def destination(self) -> str:
        return self.config.safe_url

    # ------------------------------------------------------------------ connection
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
        return self._conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def open(self) -> None:
        """Take up the open spans a clean stop left (not on a restart: the events come again
        from line 1); the first export connects (a receiver down is retried then)."""
        log.info("OTLP trace export", endpoint=self.config.safe_url)
        path = self.state_path
        if path is None or not os.path.exists(path):
            return
        if self.restart:  # from line 1: what the last one kept is stale
            with contextlib.suppress(OSError):
                os.unlink(path)
            return
        try:
            kept = read_kept(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning(
                "OTLP: cannot read the open spans of the last stop; they start anew",
                path=path,
                error=str(exc),
            )
            return
        self.model, self._outbox = kept.model, kept.outbox
        log.info("OTLP: open spans taken up", path=path, open=self.model.open_spans)

    # ------------------------------------------------------------------ writing
    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        batch = list(events)
        if self._outbox is not None and self._outbox[0] == batch:
            spans = self._outbox[1]  # the same batch again, after a failed export
        else:
            spans = (self._outbox[1] if self._outbox else []) + self.model.feed(batch)
        self._outbox = (batch, spans)
        if spans:
            self._export(spans)
        self._outbox = None

    def _export(self, spans: list[Span]) -> None:
        body = encode_request(spans, self.config.resource, self._scope_version)
        headers = {"Content-Type": "application/x-protobuf", **self.config.headers}
        if self.config.compression == "gzip":
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        try:
            response, answer = self._post(body, headers)
        except ssl.SSLCertVerificationError as exc:
            self._drop_connection()
            raise SinkError(self._masked(f"OTLP receiver's certificate refused: {exc}")) from None
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection()
            raise SinkError(
                self._masked(f"OTLP receiver unreachable: {exc or type(exc).__name__}"),
                retryable=True,
            ) from None
        self.requests += 1
        status = response.status
        if response.getheader("Connection", "").lower() == "close":
            self._drop_connection()
        if 200 <= status < 300:
            rejected, why = rejected_spans(answer)
            if rejected:
                log.warning(
                    "OTLP receiver rejected spans",
                    sink=self.name,
                    spans=rejected,
                    reason=self._masked(why),
                )
            self.spans_exported += len(spans) - rejected
            return
        text = answer[:BODY_SHOWN].decode("utf-8", "replace").strip()
        raise SinkError(
            self._masked(f"OTLP receiver answered {status} {response.reason}: {text}".rstrip(": ")),
            retryable=status in RETRYABLE_STATUS,
        )

    def _post(self, body: bytes, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
        """One POST; a kept-alive connection the receiver closed while idle is opened anew
        once, at once (that is no outage: no retry, no "sink down" line)."""
        reused = self._conn is not None
        try:
            conn = self._connect()
            conn.request("POST", self._path, body=body, headers=headers)
            response = conn.getresponse()
            return response, response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            if not reused:
                raise
            self._drop_connection()
            conn = self._connect()
            conn.request("POST", self._path, body=body, headers=headers)
            response = conn.getresponse()
            return response, response.read()

    def _masked(self, text: str) -> str:
        return self.config.mask(text)

    def flush(self) -> None:
        """Each batch was exported when written: nothing is buffered here."""

    def close(self) -> None:
        """Keep the open spans for the next start (a daemon that goes on where it stopped)."""
        self._drop_connection()
        if self.state_path is None:
            return
        try:
            write_kept(self.state_path, Kept(self.model, self._outbox))
        except OSError as exc:
            log.warning("OTLP: cannot keep the open spans", path=self.state_path, error=str(exc))
            return
        if self.model.open_spans:
            log.info(
                "OTLP: open spans kept for the next start (not ended yet)",
                sink=self.name,
                open=self.model.open_spans,
            )
