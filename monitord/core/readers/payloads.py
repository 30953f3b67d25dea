"""Monitoring payloads embedded in job output (spec 1.7, PM-1274).

A payload is JSON between ``@@@MONITORING_PAYLOAD - START@@@`` and
``@@@MONITORING_PAYLOAD - END@@@``. It is cut out of the stored text and
handed to the caller, which turns it into ``int.metric`` / ``task.monitoring``
events. A payload that is not a JSON object is logged and dropped; its text is
cut like any other. The stdlib
``json`` is used on purpose: payloads are rare and it accepts exactly what the
reference accepts (``NaN``, big integers).
"""

from __future__ import annotations

import json
from typing import Any

import structlog

__all__ = ["PAYLOAD_END", "PAYLOAD_START", "split_payloads"]

log = structlog.get_logger(__name__)

PAYLOAD_START = "@@@MONITORING_PAYLOAD - START@@@"
PAYLOAD_END = "@@@MONITORING_PAYLOAD - END@@@"
_START_LEN = len(PAYLOAD_START)
_END_LEN = len(PAYLOAD_END)


def split_payloads(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Return ``text`` without its payload blocks, and the parsed payloads in order.

    Reproduces the reference's observed cutting exactly (black-box runs of
    5.1.3): for payloads at (start_i, end_i) (``end_i`` = the END marker after
    ``start_i``), the kept text is ``text[:start_1]``, then ``text[end_i:start_i+1]``
    (so every END marker but the last one *stays* in the text), then
    ``text[end_n + len(END):]``. A START without an END gives end = -1, i.e. the
    tail restarts at offset ``len(END) - 1`` of the whole text, and its payload
    is ``text[start + len(START):-1]`` (which fails to parse and is dropped).
    """
    start = text.find(PAYLOAD_START)
    if start < 0:
        return text, []
    spans: list[tuple[int, int]] = []
    while start >= 0:
        end = text.find(PAYLOAD_END, start + _START_LEN)
        spans.append((start, end))
        if end < 0:
            break
        start = text.find(PAYLOAD_START, end)
    payloads: list[dict[str, Any]] = []
    for start, end in spans:
        body = text[start + _START_LEN : end]
        try:
            payload = json.loads(body)
        except ValueError as exc:
            log.error("malformed monitoring payload dropped", error=str(exc), payload=body[:200])
            continue
        if isinstance(payload, dict):
            payloads.append(payload)
        else:
            log.error("monitoring payload is not an object, dropped", payload=body[:200])
    pieces = [text[: spans[0][0]]]
    for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False):
        pieces.append(text[end:next_start])
    pieces.append(text[spans[-1][1] + _END_LEN :])
    return "".join(pieces), payloads
