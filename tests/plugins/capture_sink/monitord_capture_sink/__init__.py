"""A sink from outside monitord: ``capture:///abs/path.jsonl`` gets one JSON object per event
(``{"event": name, "attrs": {...}}``), written with nothing of monitord but the runtime's
factory shape."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlsplit

from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities


class CaptureSink:
    def __init__(self, path: str) -> None:
        self.name = f"capture:{path}"
        self.path = path
        self._fh: Any = None

    def open(self) -> None:
        self._fh = open(self.path, "w", encoding="utf-8")

    def write_batch(self, events: Any) -> None:
        for event in events:
            attrs = dict(event.wire_items())
            self._fh.write(json.dumps({"event": event.name, "attrs": attrs}, default=str) + "\n")

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class CaptureFactory:
    name = "capture"
    schemes = ("capture",)
    capabilities = Capabilities()

    def check(self, request: Any) -> None:
        if not urlsplit(request.dest).path:
            raise SinkError(f"{request.dest}: capture needs a path")

    def build(self, request: Any) -> CaptureSink:
        return CaptureSink(unquote(urlsplit(request.dest).path))


FACTORY = CaptureFactory()
