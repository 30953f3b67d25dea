"""Which plugins a workflow's properties enable, and each one's settings.

Everything lives under ``pegasus.monitord.plugins.<name>.``: the upstream keys
(``enabled``, ``events``, ``queue_size``, ``overflow_policy``, ``tick_interval``,
``join_timeout``, ``start_timeout``) and ours (``overflow_policy = spool``, the
default here, and ``isolation = thread|process``).  A bad value is a
:class:`PluginConfigError` naming the full key; the host then skips that plugin
only.  Keys a plugin reads for itself (``...<name>.output``) are not ours to check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from monitord.core.readers.workflow_properties import PropertyError, float_property, int_property

PROPERTY_PREFIX = "pegasus.monitord.plugins."
ENABLED_SUFFIX = ".enabled"

DROP_NEWEST = "drop-newest"
DROP_OLDEST = "drop-oldest"
SPOOL = "spool"
OVERFLOW_POLICIES = (SPOOL, DROP_NEWEST, DROP_OLDEST)
THREAD = "thread"
PROCESS = "process"
ISOLATIONS = (THREAD, PROCESS)

ALL_EVENTS = ("",)  # ``events = *``: every event, whatever the plugin's own filter says
DEFAULT_QUEUE_SIZE = 10000
DEFAULT_JOIN_TIMEOUT = 10.0
DEFAULT_OVERFLOW_POLICY = SPOOL  # upstream: drop-newest; ours never loses an event
SETTING_KEYS = (
    "enabled",
    "events",
    "queue_size",
    "overflow_policy",
    "tick_interval",
    "join_timeout",
    "start_timeout",
    "isolation",
)


class PluginConfigError(PropertyError):
    """A plugin property has a value we cannot use; the message names the key."""


def is_true(value: str | None) -> bool:
    """Pegasus's boolean spelling: true/yes/1/on, any case."""
    return value is not None and value.strip().lower() in ("true", "yes", "1", "on")


def enabled_names(props: Mapping[str, str]) -> list[str]:
    """Plugin names with a true ``pegasus.monitord.plugins.<name>.enabled``, sorted.

    The name is everything between the prefix and the last ``.enabled``, so a
    dotted name round-trips; the bare ``pegasus.monitord.plugins.enabled`` names none.
    """
    names = set()
    for key, value in props.items():
        if key.startswith(PROPERTY_PREFIX) and key.endswith(ENABLED_SUFFIX):
            name = key[len(PROPERTY_PREFIX) : -len(ENABLED_SUFFIX)]
            if name and is_true(value):
                names.add(name)
    return sorted(names)


def prefix_of(name: str) -> str:
    return f"{PROPERTY_PREFIX}{name}."


@dataclass(frozen=True)
class PluginSettings:
    """One plugin's settings (picklable: a process-isolated plugin's child gets it)."""

    name: str
    events: tuple[str, ...] | None = None  # None: the plugin's event_filter decides
    queue_size: int = DEFAULT_QUEUE_SIZE  # <= 0: unbounded
    overflow_policy: str = DEFAULT_OVERFLOW_POLICY
    tick_interval: float = 0.0
    join_timeout: float = DEFAULT_JOIN_TIMEOUT
    start_timeout: float = DEFAULT_JOIN_TIMEOUT
    isolation: str = THREAD

    @property
    def spools(self) -> bool:
        return self.overflow_policy == SPOOL

    def as_dict(self) -> dict[str, object]:
        return {
            "events": "(the plugin's filter)"
            if self.events is None
            else "*"
            if self.events == ALL_EVENTS
            else ",".join(self.events),
            "queue_size": self.queue_size,
            "overflow_policy": self.overflow_policy,
            "tick_interval": self.tick_interval,
            "join_timeout": self.join_timeout,
            "start_timeout": self.start_timeout,
            "isolation": self.isolation,
        }


def parse_settings(name: str, props: Mapping[str, str]) -> PluginSettings:
    """The settings of plugin ``name``; :class:`PluginConfigError` names a bad key."""
    prefix = prefix_of(name)

    def raw(key: str) -> str | None:
        value = props.get(prefix + key)
        return value.strip() if value is not None else None

    def seconds(key: str, default: float) -> float:
        try:
            value = float_property(props, prefix + key, default)
        except PropertyError as exc:
            raise PluginConfigError(exc.key, exc.value, exc.why) from None
        return default if value is None else value

    events = None
    if (value := raw("events")) is not None:
        items = tuple(part.strip() for part in value.split(",") if part.strip())
        if not items:
            raise PluginConfigError(prefix + "events", value, "an empty event list selects nothing")
        events = ALL_EVENTS if "*" in items else items
    try:
        queue_size = int_property(props, prefix + "queue_size", DEFAULT_QUEUE_SIZE, negative=True)
    except PropertyError as exc:
        raise PluginConfigError(exc.key, exc.value, exc.why) from None
    policy = (raw("overflow_policy") or DEFAULT_OVERFLOW_POLICY).lower()
    if policy not in OVERFLOW_POLICIES:
        raise PluginConfigError(
            prefix + "overflow_policy", policy, f"use one of {', '.join(OVERFLOW_POLICIES)}"
        )
    isolation = (raw("isolation") or THREAD).lower()
    if isolation not in ISOLATIONS:
        raise PluginConfigError(prefix + "isolation", isolation, "use thread or process")
    join_timeout = seconds("join_timeout", DEFAULT_JOIN_TIMEOUT)
    return PluginSettings(
        name=name,
        events=events,
        queue_size=queue_size,
        overflow_policy=policy,
        tick_interval=seconds("tick_interval", 0.0),
        join_timeout=join_timeout,
        start_timeout=seconds("start_timeout", join_timeout),
        isolation=isolation,
    )
