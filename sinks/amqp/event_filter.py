"""Which events an AMQP endpoint publishes (behaviour doc §6.5, property ``<endpoint>.events``).

Unset: the four events downstream dashboards consume.  Otherwise a comma-separated
list (elements are not trimmed): ``*`` selects every event, including ones outside
the known list; any other element is a regular expression (not a glob: ``*.end``
is an invalid pattern and fails the endpoint at creation) searched for anywhere in
each name of the fixed list of known events, all matches being selected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from monitord.core.catalogue import AMQP_DEFAULT, AMQP_LISTED
from sinks.runtime.base import SinkError

#: Unset property: the four events downstream dashboards consume (the catalogue's
#: ``amqp_default``).
DEFAULT_EVENTS: frozenset[str] = AMQP_DEFAULT

#: The names a pattern is matched against, in the reference's order (the catalogue's
#: ``amqp_listed`` kinds: all but ``job_inst.remote_error``, as in the reference).
KNOWN_EVENTS: tuple[str, ...] = AMQP_LISTED


@dataclass(frozen=True)
class EventFilter:
    """A set of full event names (``stampede.<name>``), or everything."""

    names: frozenset[str]
    everything: bool = False

    @classmethod
    def from_property(cls, value: str | None) -> EventFilter:
        if value is None:
            return cls(DEFAULT_EVENTS)
        selected: set[str] = set()
        for element in value.split(","):
            if element == "*":
                return cls(frozenset(KNOWN_EVENTS), everything=True)
            try:
                pattern = re.compile(element)
            except re.error as exc:
                raise SinkError(
                    f"AMQP event filter {element!r} is not a valid regular expression: {exc}"
                ) from None
            selected.update(name for name in KNOWN_EVENTS if pattern.search(name))
        return cls(frozenset(selected))

    def accepts(self, wire_name: str) -> bool:
        """``wire_name`` is the full name, ``stampede.`` included."""
        return self.everything or wire_name in self.names
