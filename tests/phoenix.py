"""Arize Phoenix, a real tracing backend for the OTLP tests (scripts/phoenix-venv.sh).

Only ever run as a black box: ``phoenix serve`` in a process of its own, on free loopback
ports, with a temporary working dir (its SQLite database); the spans it stored are read back
through its REST API.  Outside CI a venv that cannot be created skips the test; in CI it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import PROJECT
from tests.processes import terminate
from tests.proxies import free_port
from tests.servers import missing, side_venv

PHOENIX_SCRIPT = PROJECT / "scripts" / "phoenix-venv.sh"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: a loaded machine (six engineers on two cores) took 100 s to import and migrate; CI takes ~10
START_TIMEOUT = 300.0


def find_phoenix() -> Path:
    """The ``phoenix`` command of the side venv (scripts/phoenix-venv.sh: a no-op when ready)."""
    exe = side_venv(PHOENIX_SCRIPT, "the Arize Phoenix venv") / "bin" / "phoenix"
    if not exe.exists():
        missing(f"the Arize Phoenix venv is incomplete: no {exe}")
    return exe


def iso_ns(text: str) -> int:
    """Nanoseconds since the epoch of one of Phoenix's ISO 8601 times (it keeps microseconds)."""
    return (datetime.fromisoformat(text) - EPOCH) // timedelta(microseconds=1) * 1000


def canonical(span: dict[str, Any]) -> dict[str, Any]:
    """A span of Phoenix's REST API in the golden traces' form, less what Phoenix has not:
    the OTLP kind (its ``span_kind`` is OpenInference's) and the links."""
    return {
        "trace_id": span["context"]["trace_id"],
        "span_id": span["context"]["span_id"],
        "parent_span_id": span["parent_id"],
        "name": span["name"],
        "start_ns": iso_ns(span["start_time"]),
        "end_ns": iso_ns(span["end_time"]),
        "status": {"code": span["status_code"], "message": span["status_message"]},
        "attributes": span["attributes"],
        "events": [
            {"name": e["name"], "time_ns": iso_ns(e["timestamp"]), "attributes": e["attributes"]}
            for e in span["events"]
        ],
    }


class Phoenix:
    """``phoenix serve`` on 127.0.0.1 (UI, REST and OTLP/HTTP on one port, gRPC on another)."""

    def __init__(self, exe: Path, workdir: Path) -> None:
        self.exe = exe
        self.workdir = workdir
        self.log = workdir / "phoenix.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def otlp_url(self) -> str:
        return f"otlp+http://127.0.0.1:{self.port}"

    def start(self, attempts: int = 3) -> None:
        """Start it and wait for ``/healthz``; new ports when another process took ours."""
        for _ in range(attempts):
            if self._start_once():
                return
        raise RuntimeError(f"phoenix could not bind a port: {self.log_tail()}")

    def _start_once(self) -> bool:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port, grpc = free_port(), free_port()
        env = {
            **os.environ,
            "HOME": str(self.workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(grpc),
            "PHOENIX_WORKING_DIR": str(self.workdir),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no fonts fetched from the Internet
        }
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(self.exe), "serve"], cwd=self.workdir, env=env, stdout=log, stderr=log
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                if "PORT_BINDING_FAILED" in self.log_tail() or "address already" in self.log_tail():
                    return False
                raise RuntimeError(f"phoenix exited: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        return True
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"phoenix did not answer /healthz in {START_TIMEOUT:.0f} s")

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        terminate(proc, 30)

    def get(self, path: str, **query: str | int) -> Any:
        url = f"{self.url}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        with urllib.request.urlopen(url, timeout=60) as answer:
            return json.load(answer)

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span of ``project``, through ``GET /v1/projects/{project}/spans`` page by
        page, in the golden traces' form and order."""
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            query: dict[str, str | int] = {"limit": 100}
            if cursor:
                query["cursor"] = cursor
            page = self.get(f"/v1/projects/{urllib.parse.quote(project)}/spans", **query)
            out.extend(canonical(span) for span in page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
        return sorted(out, key=lambda s: (s["trace_id"], s["start_ns"], s["span_id"]))
