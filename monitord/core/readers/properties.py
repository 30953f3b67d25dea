"""Pegasus properties files (Java properties syntax) and boolean values, spec 10.

Differences from plain Java: an unescaped ``#`` anywhere cuts the rest of the
line (Pegasus' reader does that), and ``${name}`` is substituted from a dict
of system values (``user.home``, ``user.name``, ``pegasus.home`` ...); an
unknown name is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import structlog

log = structlog.get_logger(__name__)

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_SEPARATORS = "=: \t\f"


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines (odd number of trailing backslashes); drop comments."""
    out: list[str] = []
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = (pending or "") + line[:-1]
            continue
        out.append((pending or "") + line)
        pending = None
    if pending is not None:
        out.append(pending)
    return out


def _split(line: str) -> tuple[str, str]:
    """Key and raw value of one logical line, honouring backslash escapes in the key."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in _SEPARATORS:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in " \t\f":
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in " \t\f":
            j += 1
    return key, line[j:]


def _unescape(text: str, *, cut_comment: bool) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= n:
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if c == "#" and cut_comment:
            break
        out.append(c)
        i += 1
    return "".join(out)


def substitute(value: str, variables: Mapping[str, str]) -> str:
    """Replace ``${name}`` with ``variables[name]``; unknown names stay as written."""
    if "${" not in value:
        return value
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), value)


def parse_properties(text: str, variables: Mapping[str, str] | None = None) -> dict[str, str]:
    """Parse properties text into an ordered dict; later keys win."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key_raw, value_raw = _split(line)
        key = _unescape(key_raw, cut_comment=False)
        if not key:
            continue
        value = _unescape(value_raw, cut_comment=True).rstrip(" \t\f")
        props[key] = substitute(value, variables or {})
    return props


def read_properties(path: str, variables: Mapping[str, str] | None = None) -> dict[str, str]:
    """Parse the properties file at ``path`` (OSError when unreadable, caller decides)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_properties(fh.read(), variables)


def boolean_property(value: str | None) -> bool:
    """``true``, ``on``, ``yes`` or a positive integer mean true; anything else false."""
    if value is None:
        return False
    text = value.strip().lower()
    if text in ("true", "on", "yes"):
        return True
    try:
        return int(text) > 0
    except ValueError:
        return False
