"""The upstream plugin contract, seen from the host: discovery, hooks, filter, payload.

A plugin is a class registered under the entry-point group
``pegasus.monitord.plugins`` (the entry-point name is the plugin's name),
instantiated with no arguments.  Hooks: ``start(props, restart=False)``
(overrides written before ``restart`` existed take only ``props``),
``handle_event(event, kw)``, ``tick()``, ``stop()``, all optional.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import structlog

from monitord.core.events import PREFIX, StampedeEvent

log = structlog.get_logger(__name__)

ENTRY_POINT_GROUP = "pegasus.monitord.plugins"


@dataclass(frozen=True)
class Installed:
    """One discovered plugin: its name and where it comes from."""

    name: str
    target: str  # "module:Class"
    distribution: str | None
    version: str | None
    entry_point: EntryPoint

    def load(self) -> type:
        return self.entry_point.load()  # type: ignore[no-any-return]


def installed_plugins() -> dict[str, Installed]:
    """Every plugin installed in this interpreter, by name (the first of duplicate names wins)."""
    found: dict[str, Installed] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            log.warning("two plugins share a name; using the first", plugin=ep.name)
            continue
        dist = getattr(ep, "dist", None)
        found[ep.name] = Installed(
            name=ep.name,
            target=ep.value,
            distribution=getattr(dist, "name", None),
            version=getattr(dist, "version", None),
            entry_point=ep,
        )
    return found


def call_start(plugin: Any, props: Any, restart: bool) -> None:
    """``plugin.start(props, restart=...)``; ``restart`` only where the override accepts it."""
    start = getattr(plugin, "start", None)
    if start is None:
        return
    if _accepts_restart(start):
        start(props, restart=restart)
    else:
        start(props)


def _accepts_restart(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.name == "restart"
        and p.kind is not inspect.Parameter.POSITIONAL_ONLY
        or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in params
    )


def event_filter(
    plugin: Any, configured: tuple[str, ...] | None, name: str
) -> tuple[str, ...] | None:
    """Prefixes of the events the plugin gets (None: all; ``()``: none, tick only).

    The ``events`` property wins over the class's ``event_filter`` (read after ``start``).
    """
    if configured is not None:
        wanted: Any = configured
    else:
        wanted = getattr(plugin, "event_filter", None)
    if wanted is None:
        return None
    prefixes = (wanted,) if isinstance(wanted, str) else tuple(wanted)
    if "" in prefixes:
        return None
    for prefix in prefixes:
        if not isinstance(prefix, str) or not prefix.startswith(PREFIX):
            log.warning(
                "plugin event filter prefix matches no event (names start with 'stampede.')",
                plugin=name,
                prefix=prefix,
            )
    return tuple(p for p in prefixes if isinstance(p, str))


def selects(prefixes: tuple[str, ...] | None, wire_name: str) -> bool:
    return prefixes is None or wire_name.startswith(prefixes)


_KW_KEYS: dict[str, str] = {}


def kw_key(key: str) -> str:
    """An attribute's NetLogger name with ``.`` spelled ``__`` (``xwf.id`` -> ``xwf__id``)."""
    out = _KW_KEYS.get(key)
    if out is None:
        wire = key[2:] if key.startswith("__") else key  # the BP writer's own key rule
        out = _KW_KEYS[key] = wire.replace("__", ".").replace(".", "__")
    return out


_MUTABLE = (list, dict, set)


def payload(event: StampedeEvent) -> tuple[str, dict[str, Any]]:
    """``(fully-qualified name, kw)``: a fresh dict per call (each plugin owns its copy).

    Values are shallow-copied; containers (lists, dicts of composite events) are
    copied one level down so a plugin mutating them cannot reach another plugin.
    Runs once per event per plugin, hence the cached key spellings.
    """
    keys = _KW_KEYS
    items = event.wire_items()
    try:
        kw = {keys[key]: value for key, value in items}
    except KeyError:
        kw = {kw_key(key): value for key, value in items}
    for key, value in kw.items():
        if type(value) in _MUTABLE:
            kw[key] = value.copy()
    return PREFIX + event.name, kw


def wants(prefixes: tuple[str, ...] | None, events: Iterable[StampedeEvent]) -> list[StampedeEvent]:
    """The events of a batch the filter selects, in order."""
    if prefixes is None:
        return list(events)
    return [e for e in events if (PREFIX + e.name).startswith(prefixes)]
