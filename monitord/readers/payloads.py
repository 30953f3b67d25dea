"""Monitoring payloads embedded in job output (spec 1.7, PM-1274).

A payload is JSON between ``@@@MONITORING_PAYLOAD - START@@@`` and
``@@@MONITORING_PAYLOAD - END@@@``. It is cut out of the stored text and
handed to the caller, which turns it into ``int.metric`` / ``task.monitoring``
events. A payload that is not a JSON object is logged and dropped (its text is
still removed, so stored text never carries half a payload). The stdlib
``json`` is used on purpose: payloads are rare and it accepts exactly what the
reference accepts (``NaN``, big integers).
"""

from __future__ import annotations

from typing import Any

import json

import structlog

__all__ = ["PAYLOAD_END", "PAYLOAD_START", "split_payloads"]

log = structlog.get_logger(__name__)

PAYLOAD_START = "@@@MONITORING_PAYLOAD - START@@@"
PAYLOAD_END = "@@@MONITORING_PAYLOAD - END@@@"
_START_LEN = len(PAYLOAD_START)
_END_LEN = len(PAYLOAD_END)


def split_payloads(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Return ``text`` without its payload blocks, and the parsed payloads in order.

    A start marker without a matching end marker is left in the text as is.
    """
    start = text.find(PAYLOAD_START)
    if start < 0:
        return text, []
    pieces: list[str] = []
    payloads: list[dict[str, Any]] = []
    pos = 0
    while start >= 0:
        end = text.find(PAYLOAD_END, start + _START_LEN)
        if end < 0:
            break
        pieces.append(text[pos:start])
        body = text[start + _START_LEN : end]
        try:
            payload = json.loads(body)
        except ValueError as exc:
            log.warning("malformed monitoring payload dropped", error=str(exc), payload=body[:200])
        else:
            if isinstance(payload, dict):
                payloads.append(payload)
            else:
                log.warning("monitoring payload is not an object, dropped", payload=body[:200])
        pos = end + _END_LEN
        start = text.find(PAYLOAD_START, pos)
    pieces.append(text[pos:])
    return "".join(pieces), payloads
