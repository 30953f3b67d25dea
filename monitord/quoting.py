"""URL quoting of stored job text (spec 5.5 "URL quoting").

The reference stores stdout/stderr text percent-encoded byte by byte: the text
is UTF-8 encoded, and every byte below 0x20 or from 0x7F up, plus ``%``,
``'`` and ``"``, becomes ``%XX`` (upper-case hex); every other byte is kept.

Decoding the UTF-8 bytes as latin-1 maps each byte to the code point of the
same value, so one ``str.translate`` over a 256-entry table does the whole job
at C speed; pure-ASCII text (the common case) skips the encode step.
"""

from __future__ import annotations

__all__ = ["url_quote"]


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for byte in range(256):
        if byte < 0x20 or byte >= 0x7F or byte in (0x25, 0x27, 0x22):
            table[byte] = f"%{byte:02X}"
    return table


_TABLE = _build_table()


def url_quote(text: str) -> str:
    """Percent-encode ``text`` the way the reference stores job stdout/stderr."""
    if not text.isascii():
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            # Lone surrogates outside the escape range: keep their bytes anyway.
            raw = text.encode("utf-8", "surrogatepass")
        text = raw.decode("latin-1")
    return text.translate(_TABLE)
