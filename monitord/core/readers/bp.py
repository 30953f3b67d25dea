"""NetLogger BP line reader (``ts=... event=... key=value key="quoted value"``).

Used for ``<wf>.static.bp`` and by tests that read reference ``.bp`` streams.
Values come back as strings exactly as written (quotes removed, ``\\"``
unescaped); interpreting them is the caller's business.
"""

from __future__ import annotations


class BPParseError(ValueError):
    """A line that is not a BP record (no ``ts`` or no ``event``)."""


def parse_bp_line(line: str) -> dict[str, str]:
    """Split one BP line into an ordered ``key -> raw string value`` mapping."""
    out: dict[str, str] = {}
    i = 0
    n = len(line)
    while i < n:
        while i < n and line[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        eq = line.find("=", i)
        if eq < 0:
            raise BPParseError(f"no '=' after {line[i : i + 20]!r}")
        key = line[i:eq]
        i = eq + 1
        if i < n and line[i] == '"':
            i += 1
            buf: list[str] = []
            while i < n:
                c = line[i]
                if c == "\\" and i + 1 < n and line[i + 1] == '"':
                    buf.append('"')
                    i += 2
                    continue
                if c == '"':
                    i += 1
                    break
                buf.append(c)
                i += 1
            out[key] = "".join(buf)
        else:
            j = i
            while j < n and line[j] not in " \t\r\n":
                j += 1
            out[key] = line[i:j]
            i = j
    if "ts" not in out or "event" not in out:
        raise BPParseError("BP record without ts or event")
    return out
