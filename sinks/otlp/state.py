"""The OTLP sink's state file, ``monitord.otlp.<key>.json`` beside the workflow's monitord.*
files: what the sink holds between two starts (the open spans of its trace model, and a
batch whose export failed with the spans it produced)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from monitord.core.events import StampedeEvent, make_event
from monitord.system.atomic import replace_file
from monitord.system.ownership import chown_new
from sinks.otlp.model import TraceModel
from sinks.otlp.spans import Span, canonical, from_canonical


@dataclass
class Kept:
    """The sink's state: its model and its outbox (a failed batch, the spans it made)."""

    model: TraceModel
    outbox: tuple[list[StampedeEvent], list[Span]] | None = None


def state_file_name(url: str) -> str:
    """``monitord.otlp.<key>.json``: one per endpoint, beside the workflow's monitord.* files."""
    return f"monitord.otlp.{hashlib.sha256(url.encode('utf-8')).hexdigest()[:12]}.json"


def read_kept(path: str) -> Kept:
    """What :func:`write_kept` wrote; OSError, or ValueError (also KeyError, TypeError) when it
    is not such a file."""
    with open(path, "rb") as fh:
        state = json.loads(fh.read())
    kept = Kept(TraceModel.from_state(state["model"]))
    if state.get("outbox"):  # a batch whose export failed, spooled by the runtime
        batch, spans = state["outbox"]
        kept.outbox = (
            [make_event(name, attrs) for name, attrs in batch],
            [from_canonical(span) for span in spans],
        )
    return kept


def write_kept(path: str, kept: Kept) -> None:
    """Atomically (a crash leaves the old file or the new one); OSError when it cannot."""
    state: dict[str, Any] = {"model": kept.model.to_state(), "outbox": None}
    if kept.outbox is not None:
        batch, spans = kept.outbox
        state["outbox"] = [[e.name, e.attrs] for e in batch], [canonical(s) for s in spans]
    replace_file(path, json.dumps(state).encode("utf-8"))
    chown_new(path)  # the service as root: the workflow's owner's
