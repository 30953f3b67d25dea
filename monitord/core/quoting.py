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
# Replacement order for the ASCII fast path: '%' first, so escapes are not re-escaped.
_ASCII_SPECIALS = tuple(
    (chr(b), code) for b, code in sorted(_TABLE.items(), key=lambda kv: kv[0] != 0x25) if b < 0x80
)


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
    # ASCII: a handful of C-speed substring replacements beat a per-character
    # table lookup on the multi-kilobyte texts jobs leave behind.
    for char, code in _ASCII_SPECIALS:
        if char in text:
            text = text.replace(char, code)
    return text
