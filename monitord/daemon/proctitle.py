"""Keep passwords given on the command line out of ``ps`` and ``/proc/<pid>/cmdline``.

``-d postgresql://user:secret@host/db`` is how the reference is told where to
write, so a password may well arrive in argv; once parsed it is masked in the
process title (setproctitle rewrites the argv area the kernel shows).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# scheme://user:password@  ->  scheme://user:***@
_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^@\s]*@")


def mask_secrets(text: str) -> str:
    return _CREDENTIALS.sub(r"\g<head>***@", text)


def hide_secrets_in_title(argv: Sequence[str]) -> bool:
    """Rewrite the process title when an argument carries a password; True if it did."""
    masked = [mask_secrets(arg) for arg in argv]
    if masked == list(argv):
        return False
    try:
        from setproctitle import setproctitle
    except ImportError:  # pragma: no cover - a declared dependency
        return False
    setproctitle(" ".join(masked))
    return True
