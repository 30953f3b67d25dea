"""Masking a password in text that may be shown (log lines, errors, status pages)."""

from __future__ import annotations

import re
import traceback
from urllib.parse import quote

MASK = "***"


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every spelling of ``secret`` (raw or URL-quoted) replaced by ``***``.

    An occurrence inside a longer word is left alone: a driver message never embeds the
    password in a word of its own, and a short password ("p") would otherwise mangle every
    word holding that letter ("O***erationalError") without hiding anything more.
    """
    if not secret:
        return text
    for form in sorted({secret, quote(secret, safe=""), quote(secret)}, key=len, reverse=True):
        pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(form) + r"(?![A-Za-z0-9])")
        text = pattern.sub(MASK, text)
    return text


_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^@\s]*@")


def mask_url_passwords(text: str) -> str:
    """``scheme://user:***@host``: the password of every URL in ``text`` masked (an error a
    driver wrote, where the sink's own password is not known to the reader)."""
    return _URL_PASSWORD.sub(r"\g<head>***@", text)


def masked_traceback(exc: BaseException) -> str:
    """``exc``'s traceback as text, every URL password in it masked: a plugin's or driver's
    message may quote a URL, and a log's ``exc_info`` would show it unmasked."""
    return mask_url_passwords("".join(traceback.format_exception(exc)).rstrip())
