"""Reading a TOML configuration file, and its errors in one wording, for every long-running
part that has one (``monitord serve``, ``monitord ingest``): a problem stops the process at
start with one line that names the file, the line when known, and the key."""

from __future__ import annotations

import re
import tomllib
from typing import Any


class ConfigError(Exception):
    """A configuration problem, worded to name the file and the key."""


def read_toml(path: str) -> tuple[dict[str, Any], str]:
    """The parsed document and its source text (for :func:`line_of`); any problem reading or
    parsing it is a :class:`ConfigError` naming the file."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return data, text


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"-]+?)\s*\]")


def line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of ``loc`` (section, [index of an array of tables], key) in the TOML
    ``text``, when it is plain; else the section's header line, else None."""
    section = str(loc[0])
    index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
    keys = [p for p in loc[1:] if isinstance(p, str)]
    seen = -1
    inside = False
    header_line = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            inside = m.group(2).strip('"') == section
            if inside:
                seen += 1
                inside = seen == index
                if inside:
                    header_line = number
            continue
        if not keys:
            continue
        if inside and re.match(rf"^\s*\"?{re.escape(keys[0])}\"?\s*=", line):
            return number
    return header_line


def where(path: str | None, line: int | None) -> str:
    """``file:line`` (or the file alone) for an error."""
    name = path or "<config>"
    return f"{name}:{line}" if line else name
