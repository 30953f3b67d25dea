"""The OTLP/HTTP trace sink: each batch's finished spans POSTed to ``/v1/traces``.

It runs in its sink thread like every sink (its exporter: http.client, blocking), on the one delivery
runtime: the runtime retries a batch whose export failed with a retryable error (no
connection, 429, 502, 503, 504), spools the batches behind it while the receiver is down and
reports the same ``SinkHealth``.  A retried batch must not advance the trace model twice: the
spans a failed batch completed stay *pending* and are sent, as they are, before any new one.

It resumes from a daemon's crash snapshot exactly once (``keeps_marks``, ``resumes``): after
every export it writes its model, its pending spans and the delivery marks of the events it
has taken in to its state file (sinks/otlp/state.py); a resumed daemon's re-fed events up to
those marks are skipped, by the runtime (exported) or by the sink (taken in, not yet
exported).  A crash between a POST and that write sends the same spans (same ids) again
(docs/traces.md, "Crash and restart").
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import os
import ssl
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

import structlog

from monitord.core.events import StampedeEvent
from sinks.otlp.capabilities import OTLP_CAPABILITIES
from sinks.otlp.config import OTLPConfig
from sinks.otlp.encode import encode_request, rejected_spans
from sinks.otlp.exporter import Exporter, exporter_key
from sinks.otlp.model import TraceModel
from sinks.otlp.spans import Span
from sinks.otlp.state import Kept, read_kept, state_file_name, write_kept
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import SharedResources
from sinks.runtime.clients import SharedClients
from sinks.runtime.marks import Marks, advance, numbers, workflow_of

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
        # where the state is kept for the next start (None: nowhere)
        self.state_path = (
            os.path.join(run_dir, state_file_name(config.safe_url)) if run_dir else None
        )
        self.name = f"otlp:{config.safe_url}"
        self._kept = Kept()  # model, pending spans, delivery marks
        self._dirty = False  # the state changed since it was last written
        self.spans_exported = 0
        self.requests = 0  # answered
        self.exporter = Exporter(config)  # the HTTP connection (sinks/otlp/exporter.py)
        self._clients: SharedClients | None = None  # the service's, once ``use_shared``
        self._scope_version = _scope_version()

    @property
    def destination(self) -> str:
        return self.config.safe_url

    @property
    def lane_key(self) -> str:
        """The endpoint many workflows share (``Capabilities.shared``): one lane for all."""
        return self.name

    def use_shared(self, shared: SharedResources) -> None:
        """The service's exporter for this endpoint, one for every workflow
        (``shares_connection``); the last sink to close it closes the connection."""
        if shared.clients is None:
            return
        config = self.config
        self._clients = shared.clients
        self.exporter = shared.clients.acquire(exporter_key(config), lambda: Exporter(config))

    @property
    def model(self) -> TraceModel:
        return self._kept.model

    def open(self) -> None:
        """Take up the state the last daemon left (not on a restart: the events come again
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
            self._kept = read_kept(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning(
                "OTLP: cannot read the state the last daemon left; its open spans start anew",
                path=path,
                error=str(exc),
            )
            return
        log.info(
            "OTLP: state of the last daemon taken up",
            path=path,
            open=self.model.open_spans,
            pending=len(self._kept.pending),
        )

    # ------------------------------------------------------------------ writing
    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        """An unmarked batch (a replay, a daemon without crash resume)."""
        kept = self._kept
        batch = list(events)
        if kept.pending_batch is None or kept.pending_batch != batch:
            kept.pending_batch = batch  # not fed again when it is retried
            kept.pending += self.model.feed(batch)
            self._dirty = True
        self._send()
        kept.pending_batch = None

    def write_marked(self, events: Sequence[StampedeEvent], marks: Marks) -> None:
        """A numbered batch: the events the model has not taken in yet are fed; once the
        spans are exported the state, with its marks, is written at once."""
        kept = self._kept
        if marks.stream != kept.stream:  # a new count (a start after an orderly end)
            kept.stream, kept.exported, kept.consumed = marks.stream, {}, {}
        new = [
            event
            for event, number in zip(events, numbers(events, marks), strict=True)
            if number > kept.consumed.get(workflow_of(event), 0)
        ]
        if new:
            kept.pending += self.model.feed(new)
            advance(kept.consumed, marks)
            self._dirty = True
        try:
            sent = self._send()
        except SinkError:
            # the state covers what the model took in before the runtime spools the batch
            self._keep("OTLP: cannot write the trace state")
            raise
        kept.exported = dict(kept.consumed)
        if sent:  # at once: a resumed daemon must not send these spans again
            self._save()  # (no span sent: the next flush writes it, before any snapshot)

    def read_marks(self, stream: str) -> dict[str, int]:
        """Per workflow, the events of ``stream`` whose spans the receiver has."""
        kept = self._kept
        return dict(kept.exported) if stream == kept.stream else {}

    def forget_marks(self, root_uuid: str) -> None:
        """The workflow ended in order: no resumed daemon re-feeds its events any more.  The
        model stays (a rescue DAG's next run goes on with it)."""
        kept = self._kept
        kept.stream, kept.exported, kept.consumed = None, {}, {}
        self._keep("cannot write the trace state")

    def _send(self) -> bool:
        """Export the pending spans (SinkError when the receiver did not take them)."""
        kept = self._kept
        if not kept.pending:
            return False
        self._export(kept.pending)
        kept.pending = []
        return True

    def _save(self) -> None:
        """Write the state file now (a retryable SinkError when it cannot: the runtime
        retries, and its health shows it)."""
        if self.state_path is None:
            self._dirty = False
            return
        try:
            write_kept(self.state_path, self._kept)
        except OSError as exc:
            raise SinkError(f"OTLP: cannot write the trace state: {exc}", retryable=True) from None
        self._dirty = False

    def _export(self, spans: list[Span]) -> None:
        body = encode_request(spans, self.config.resource, self._scope_version)
        headers = {"Content-Type": "application/x-protobuf", **self.config.headers}
        if self.config.compression == "gzip":
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        try:
            answer = self.exporter.post(body, headers)
        except ssl.SSLCertVerificationError as exc:
            raise SinkError(self._masked(f"OTLP receiver's certificate refused: {exc}")) from None
        except (OSError, http.client.HTTPException) as exc:
            raise SinkError(
                self._masked(f"OTLP receiver unreachable: {exc or type(exc).__name__}"),
                retryable=True,
            ) from None
        self.requests += 1
        status = answer.status
        if 200 <= status < 300:
            rejected, why = rejected_spans(answer.body)
            if rejected:
                log.warning(
                    "OTLP receiver rejected spans",
                    sink=self.name,
                    spans=rejected,
                    reason=self._masked(why),
                )
            self.spans_exported += len(spans) - rejected
            return
        text = answer.body[:BODY_SHOWN].decode("utf-8", "replace").strip()
        raise SinkError(
            self._masked(f"OTLP receiver answered {status} {answer.reason}: {text}".rstrip(": ")),
            retryable=status in RETRYABLE_STATUS,
        )

    def _masked(self, text: str) -> str:
        return self.config.mask(text)

    def flush(self) -> None:
        """Pending spans exported, and the state written with the marks of every event the
        sink was given: a crash snapshot the daemon writes next covers no more than that."""
        kept = self._kept
        if kept.stream is None:
            return  # unmarked: nothing resumes from the state but a start after close
        if self._dirty:
            self._save()
        if self._send():  # spans a failed export left, when no batch came since
            kept.exported = dict(kept.consumed)
            self._save()

    def close(self) -> None:
        """Keep the state for the next start (a daemon that goes on where this one stopped)."""
        clients, self._clients = self._clients, None
        if clients is not None:
            clients.release(exporter_key(self.config))
        else:
            self.exporter.close()
        if not self._keep("OTLP: cannot keep the open spans"):
            return
        if self.model.open_spans:
            log.info(
                "OTLP: open spans kept for the next start (not ended yet)",
                sink=self.name,
                open=self.model.open_spans,
            )

    def _keep(self, failure: str) -> bool:
        """Write the state, or say in one line why not (close, forget_marks)."""
        if self.state_path is None:
            return False
        try:
            self._save()
        except SinkError as exc:
            log.warning(failure, sink=self.name, error=str(exc))
            return False
        return True
