"""The OTLP sink's state file, ``monitord.otlp.<key>.json`` beside the workflow's monitord.*
files: what the sink holds between two starts, written atomically after every export.

- ``model``: the trace model's open workflow runs and job instances;
- ``pending``: spans the model made whose export has not succeeded yet (sent first next time),
  and ``pending_batch``, the unmarked batch that made them (a replay's retry of it feeds nothing);
- the delivery marks (:mod:`sinks.runtime.marks`) of one stream: ``consumed``, per workflow, the
  events the model has taken in, and ``exported``, those whose every span the receiver has.
  ``exported`` is what the sink reports to the runtime, which skips the re-fed events a
  resumed daemon sends again up to there; the sink itself skips feeding those up to ``consumed``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from monitord.core.events import StampedeEvent, make_event
from monitord.system.atomic import replace_file
from monitord.system.ownership import chown_new
from sinks.otlp.model import TraceModel
from sinks.otlp.spans import Span, canonical, from_canonical

VERSION = 2  # 1: model and outbox, without marks (a start from it starts anew)


@dataclass
class Kept:
    """The sink's state between two batches (and two starts)."""

    model: TraceModel = field(default_factory=TraceModel)
    pending: list[Span] = field(default_factory=list)
    pending_batch: list[StampedeEvent] | None = None
    stream: str | None = None
    exported: dict[str, int] = field(default_factory=dict)
    consumed: dict[str, int] = field(default_factory=dict)


def state_file_name(url: str) -> str:
    """``monitord.otlp.<key>.json``: one per endpoint, beside the workflow's monitord.* files."""
    return f"monitord.otlp.{hashlib.sha256(url.encode('utf-8')).hexdigest()[:12]}.json"


def read_kept(path: str) -> Kept:
    """What :func:`write_kept` wrote; OSError, or ValueError (also KeyError, TypeError) when it
    is not such a file."""
    with open(path, "rb") as fh:
        state = json.loads(fh.read())
    if state.get("version") != VERSION:
        raise ValueError(f"state file version {state.get('version')!r}, not {VERSION}")
    batch = state["pending_batch"]
    marks = state["marks"]
    return Kept(
        model=TraceModel.from_state(state["model"]),
        pending=[from_canonical(span) for span in state["pending"]],
        pending_batch=None if batch is None else [make_event(n, a) for n, a in batch],
        stream=None if marks is None else str(marks["stream"]),
        exported={} if marks is None else _counts(marks["exported"]),
        consumed={} if marks is None else _counts(marks["consumed"]),
    )


def write_kept(path: str, kept: Kept) -> None:
    """Atomically (a crash leaves the old file or the new one); OSError when it cannot."""
    batch = kept.pending_batch
    state: dict[str, Any] = {
        "version": VERSION,
        "model": kept.model.to_state(),
        "pending": [canonical(s) for s in kept.pending],
        "pending_batch": None if batch is None else [[e.name, dict(e.wire_items())] for e in batch],
        "marks": None
        if kept.stream is None
        else {"stream": kept.stream, "exported": kept.exported, "consumed": kept.consumed},
    }
    replace_file(path, json.dumps(state).encode("utf-8"))
    chown_new(path)  # the service as root: the workflow's owner's


def _counts(doc: dict[str, Any]) -> dict[str, int]:
    return {str(wf): int(n) for wf, n in doc.items()}
