"""Stored stdout/stderr text of a job instance (spec 5.5, 1.7, 1.8).

The reference stores job output URL-quoted in ``main.end``'s ``stdout.text``
and ``stderr.text``. Monitoring payloads are removed from the text first; the
functions that remove them also return them, because they become
``task.monitoring`` and ``int.metric`` events.
"""

from __future__ import annotations

from typing import Any

from monitord.core.quoting import url_quote
from monitord.core.readers.kickstart import KickstartRecord
from monitord.core.readers.payloads import split_payloads

__all__ = [
    "ERR_TEXT_LIMIT",
    "STDOUT_BUDGET",
    "stderr_text_from_err",
    "stdout_text_from_records",
    "stdout_text_without_kickstart",
]

STDOUT_BUDGET = 65535  # shared by all pieces of the kickstart stdout text (PM-1152)
PIECE_OVERHEAD = 20
ERR_TEXT_LIMIT = 63535  # .err and non-kickstart stdout are cut here before quoting


def _signal_prefix(data: dict[str, Any]) -> str:
    signalled = data.get("signalled")
    if isinstance(signalled, dict):
        return f"Job was {signalled.get('action', '')} with signal {signalled.get('signal', '')}"
    return " "


def stdout_text_from_records(
    records: list[KickstartRecord],
) -> tuple[str, list[dict[str, Any]]]:
    """Job stdout text from the invocation records, and the payloads found in it.

    For invocation record N (1-based, in file order) the pieces are
    ``#@ N stdout\\n<stdout>\\n`` and ``#@ N stderr\\n<prefix><stderr>\\n``; each
    piece is quoted on its own, costs its length + 20 of a shared budget and
    is cut to what is left of it (black-box observed: the *unquoted* output text
    is cut to ``remainder - 1`` characters and the piece quoted again, so a cut
    piece may still overshoot; the event-level 65 535 cut then applies).
    ``""`` when no record has stdout or stderr.
    """
    pieces: list[str] = []
    payloads: list[dict[str, Any]] = []
    remaining = STDOUT_BUDGET
    number = 0
    for record in records:
        if record.kind != "invocation":
            continue
        number += 1
        data = record.data
        for stream in ("stdout", "stderr"):
            value = data.get(stream)
            if value is None:
                continue
            text, found = split_payloads(value if isinstance(value, str) else str(value))
            payloads.extend(found)
            if remaining <= 0:
                continue  # budget spent: later pieces are dropped, payloads still count
            if stream == "stdout":
                head = f"#@ {number} stdout\n"
            else:
                head = f"#@ {number} stderr\n{_signal_prefix(data)}"
            piece = url_quote(head + text + "\n")
            if len(piece) > remaining:
                # observed: the raw output text is cut to remainder - 1, then quoted
                piece = url_quote(head + text[: remaining - 1] + "\n")
            pieces.append(piece)
            remaining -= len(piece) + PIECE_OVERHEAD
    return "".join(pieces), payloads


def stderr_text_from_err(text: str) -> tuple[str, list[dict[str, Any]]]:
    """``stderr.text`` from a ``.err`` file: payloads removed, cut, quoted (1.7)."""
    stripped, payloads = split_payloads(text)
    return url_quote(stripped[:ERR_TEXT_LIMIT]), payloads


def stdout_text_without_kickstart(text: str) -> tuple[str, list[dict[str, Any]]]:
    """``stdout.text`` from a job stdout that holds no kickstart record (1.8)."""
    stripped, payloads = split_payloads(text)
    return url_quote("#@ 1 stdout\n" + stripped[:ERR_TEXT_LIMIT]), payloads
