"""Helpers of the trace tests: the receiver process, golden traces, a corpus replay's events."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from monitord.core.events import StampedeEvent
from sinks.encoding import decode_json
from sinks.otlp.model import TraceModel
from sinks.otlp.spans import canonical_trace
from tests.processes import terminate
from tests.proxies import free_port

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "traces"


class Receiver:
    """``tests/otlp_receiver.py`` in a process of its own; ``stop`` and ``start`` again at will
    (same port, same store: an outage)."""

    def __init__(self, store: Path, port: int | None = None) -> None:
        self.store = store
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"otlp+http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.otlp_receiver", str(self.port), str(self.store)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"receiver exited: {self.proc.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("receiver did not listen in time")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        terminate(proc, 15)
        if proc.stderr is not None:
            proc.stderr.close()

    def received(self) -> list[dict[str, Any]]:
        """Every span line received, in order (duplicates kept)."""
        if not self.store.exists():
            return []
        return [json.loads(line) for line in self.store.read_text().splitlines() if line]

    def connections(self) -> int:
        """Connections requests came on, since the store was made (every start)."""
        conns = self.store.with_name(self.store.name + ".conns")
        return len(conns.read_text().splitlines()) if conns.exists() else 0

    def spans(self) -> list[dict[str, Any]]:
        """The received spans in the golden traces' order."""
        return sorted(
            (line["span"] for line in self.received()),
            key=lambda s: (s["trace_id"], s["start_ns"], s["span_id"]),
        )


def events_of(json_lines: Path) -> list[StampedeEvent]:
    """The events of a ``-e json`` events file."""
    return [decode_json(line) for line in json_lines.read_text().splitlines() if line.strip()]


def trace_of(events: list[StampedeEvent], *, batch: int | None = None) -> list[dict[str, Any]]:
    """The canonical trace of ``events``, fed in batches of ``batch`` (all at once: None)."""
    model = TraceModel()
    spans = []
    step = batch or max(1, len(events))
    for i in range(0, len(events), step):
        spans.extend(model.feed(events[i : i + step]))
    return canonical_trace(spans)


def golden(name: str) -> list[dict[str, Any]]:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def write_golden(name: str, trace: list[dict[str, Any]]) -> None:
    """Only with MONITORD_WRITE_GOLDEN=1 (a reviewed change of the model)."""
    if os.environ.get("MONITORD_WRITE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / f"{name}.json").write_text(json.dumps(trace, indent=1, sort_keys=True) + "\n")
