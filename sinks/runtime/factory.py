"""What a sink factory is: the shape every entry point of ``monitord.sinks`` has.

Here, below every sink, so that a sink package (built-in or pip-installed) imports only the
runtime; :mod:`sinks.registry` discovers the factories and resolves destinations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sinks.runtime.base import Sink
from sinks.runtime.capabilities import Capabilities

PATH = ""  # the "scheme" of a plain path (and of ``-``)


@dataclass(frozen=True)
class SinkRequest:
    """Everything a factory may use to build one destination's sink."""

    dest: str
    run_dir: str
    restart: bool
    encoding: str = "bp"
    root_wf_uuid: str | None = None
    pegasus_version: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    db_url: str | None = None  # the dashboard's: the workflow's own events destination
    #: a replay: its outputs may trade crash safety that rerunning the replay gives back
    replay: bool = False


@runtime_checkable
class SinkFactory(Protocol):
    """One kind of sink.  ``schemes``: the URL schemes it serves (``""``: plain paths)."""

    name: str
    schemes: tuple[str, ...]
    capabilities: Capabilities

    def check(self, request: SinkRequest) -> None:
        """Raise a :class:`SinkError` naming the fix if ``request.dest`` cannot work at all
        (no driver, malformed URL): found before anything is built or connected."""
        ...

    def build(self, request: SinkRequest) -> Sink:
        """An unopened sink for ``request.dest``."""
        ...


def scheme_of(dest: str) -> str:
    """``postgresql+psycopg2://...`` -> ``postgresql``; ``jdbc:...`` -> ``jdbc``; a path -> ``""``."""
    if dest == "-":
        return PATH
    if dest[:5].lower() == "jdbc:":
        return "jdbc"
    head, sep, _ = dest.partition("://")
    if sep:
        return head.split("+", 1)[0].lower()
    return PATH


WORKFLOW_PREFIX = "pegasus.catalog.workflow."
ANY_CATALOG_PREFIX = "pegasus.catalog.*."


def endpoint_property(props: Mapping[str, str], dest: str, prop: str) -> str | None:
    """``prop`` of the endpoint whose URL is ``dest`` (doc §6.4, §10).

    A named endpoint (``pegasus.catalog.workflow.<name>.url`` = ``dest``) reads
    ``pegasus.catalog.workflow.<name>.<prop>``; the default one (``-d`` or
    ``pegasus.catalog.workflow.url``) reads ``pegasus.catalog.workflow.<prop>``; both fall back
    to ``pegasus.catalog.*.<prop>``.
    """
    key = WORKFLOW_PREFIX + prop
    for name_key, value in props.items():
        if (
            value == dest
            and name_key.startswith(WORKFLOW_PREFIX)
            and name_key.endswith(".url")
            and name_key != WORKFLOW_PREFIX + "url"
        ):
            key = name_key[: -len("url")] + prop
            break
    return props.get(key) or props.get(ANY_CATALOG_PREFIX + prop) or None
