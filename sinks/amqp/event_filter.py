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

from sinks.runtime.base import SinkError

DEFAULT_EVENTS = frozenset(
    {
        "stampede.job_inst.tag",
        "stampede.job_inst.composite",
        "stampede.inv.end",
        "stampede.wf.plan",
    }
)

_JOB_INST = (
    "pre.start pre.term pre.end submit.start submit.end held.start held.end main.start "
    "main.term main.end post.start post.term post.end host.info image.info abort.info "
    "grid.submit.start grid.submit.end globus.submit.start globus.submit.end tag composite"
).split()

#: The names a pattern is matched against, in the reference's order.
KNOWN_EVENTS: tuple[str, ...] = (
    *(
        "stampede." + n
        for n in (
            "wf.plan wf.map.task_job static.start static.end xwf.start xwf.end "
            "xwf.map.subwf_job task.info task.edge job.info job.edge"
        ).split()
    ),
    *("stampede.job_inst." + n for n in _JOB_INST),
    *(
        "stampede." + n
        for n in (
            "inv.start inv.end static.meta.start xwf.meta task.meta rc.meta int.metric rc.pfn "
            "wf.map.file static.meta.end task.monitoring"
        ).split()
    ),
)


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
