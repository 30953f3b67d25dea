"""The properties object handed to ``plugin.start(props)``: Pegasus's calls, our dict.

Plugins written for Pegasus's monitord call the methods of Pegasus's properties
class on what ``start`` receives (``property``, ``propertyset``, ``keyset``, ...).
This class answers those calls over the daemon's resolved property map.  Each
plugin gets its own copy, so one plugin setting or removing a key changes
nothing for the daemon or for the other plugins.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any


class PluginProperties:
    """Pegasus's properties interface over a copy of a ``str -> str`` map."""

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        # The attribute name is Pegasus's: some plugins read the raw map through it.
        self.m_config: dict[str, str] = dict(props or {})

    # --- the calls plugins make ---
    def property(self, key: str, val: str | None = None) -> str | None:
        """Get ``key`` (None when unset); with ``val``, set it and return the old value."""
        old = self.m_config.get(key)
        if val is not None:
            self.m_config[key] = val
        return old

    def propertyset(self, prefix: str, remove: bool = False) -> dict[str, str]:
        """Keys starting with ``prefix`` (with the prefix cut off when ``remove``)."""
        out: dict[str, str] = {}
        for key, value in self.m_config.items():
            if key.startswith(prefix):
                short = key[len(prefix) :] if remove else key
                if short:
                    out[short] = value
        return out

    def keyset(self, predicate: str | None = None) -> Any:
        """Every key, or those a regular expression matches at their start."""
        if predicate is None:
            return self.m_config.keys()
        pattern = re.compile(predicate)
        return [key for key in self.m_config if pattern.match(key)]

    def remove(self, key: str) -> str | None:
        """Delete ``key``; returns its value (None when unset)."""
        return self.m_config.pop(key, None)

    def dump(self, fn: str = "-") -> int | None:
        """Write ``key=value`` lines to ``fn`` (``-``: stdout); the count, None if unwritable."""
        lines = [f"# generated {time.asctime()}\n"]
        lines += [f"{key}={value}\n" for key, value in self.m_config.items()]
        if fn == "-":
            sys.stdout.write("".join(lines))
        else:
            try:
                with open(fn, "w", encoding="utf-8") as fh:
                    fh.write("".join(lines))
            except OSError:
                return None
        return len(lines) - 1

    # --- mapping conveniences (plugins also treat it as a dict) ---
    def get(self, key: str, default: str | None = None) -> str | None:
        return self.m_config.get(key, default)

    def __getitem__(self, key: str) -> str:
        return self.m_config[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.m_config[key] = value

    def __delitem__(self, key: str) -> None:
        del self.m_config[key]

    def __contains__(self, key: object) -> bool:
        return key in self.m_config

    def __iter__(self) -> Iterator[str]:
        return iter(self.m_config)

    def __len__(self) -> int:
        return len(self.m_config)

    def keys(self) -> Any:
        return self.m_config.keys()

    def items(self) -> Any:
        return self.m_config.items()

    def __str__(self) -> str:
        return str(self.m_config)
