"""The properties one workflow's daemon runs with, and how a number among them is read.

Where they come from (doc §9.1): leading ``-D`` arguments, then ``--conf``, else the file
the workflow's braindump names, else ``~/.pegasusrc``.  The daemon's command line, the
service (for the workflows it picks up itself) and ``monitord plugins`` all resolve them
here, so "a daemon started there" means the same thing everywhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from monitord.core.readers.braindump import read_braindump
from monitord.core.readers.properties import read_properties


class PropertyError(ValueError):
    """A property whose value we cannot use; one message style: key, value, why."""

    def __init__(self, key: str, value: str, why: str) -> None:
        super().__init__(f"{key} = {value!r}: {why}")
        self.key = key
        self.value = value
        self.why = why


def int_property(
    props: Mapping[str, str], key: str, default: int, *, negative: bool = False
) -> int:
    """An integer property; unset or blank gives ``default``, a bad value PropertyError."""
    return _number(props, key, default, int, "not an integer", negative=negative)


def float_property(props: Mapping[str, str], key: str, default: float | None) -> float | None:
    """A non-negative number (seconds, mostly); unset or blank gives ``default``."""
    return _number(props, key, default, float, "not a number")


def _number(
    props: Mapping[str, str],
    key: str,
    default: Any,
    parse: Callable[[str], Any],
    what: str,
    *,
    negative: bool = False,
) -> Any:
    text = props.get(key)
    if text is None or not text.strip():
        return default
    try:
        value = parse(text)
    except ValueError:
        raise PropertyError(key, text, what) from None
    if (value < 0 and not negative) or value != value:  # NaN is no number of seconds
        raise PropertyError(key, text, "must not be negative")
    return value


def split_properties(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Leading ``-Dkey=value`` / ``-D key=value`` arguments (Java style, doc §9.1)."""
    props: dict[str, str] = {}
    args = list(argv)
    while args and args[0].startswith("-D"):
        item = args.pop(0)[2:]
        if not item and args:
            item = args.pop(0)
        key, _, value = item.partition("=")
        if key in ("pegasus.properties", "pegasus.user.properties"):
            print(f"pegasus-monitord: warning: -D{key} is not supported, ignored", file=sys.stderr)
            continue
        props[key] = value
    return props, args


def load_properties(conf: str | None, cli_props: dict[str, str], run_dir: str) -> dict[str, str]:
    """``conf``, else the file the braindump names, else ``~/.pegasusrc``; ``cli_props`` on top."""
    props: dict[str, str] = {}
    candidates = []
    if conf:
        candidates.append(conf)
    else:
        try:
            bd = read_braindump(run_dir)
            if bd.properties:
                candidates.append(os.path.join(run_dir, str(bd.properties)))
        except Exception:  # reported later by the daemon itself
            pass
        candidates.append(os.path.expanduser("~/.pegasusrc"))
    for path in candidates:
        try:
            props = read_properties(path)
            break
        except OSError:
            continue
    props.update(cli_props)
    return props
