"""Destination URL or path -> sink, through the factories installed under the entry-point
group ``monitord.sinks`` (behaviour doc §6.4).

Every sink, the built-in ones too, is a :class:`SinkFactory` registered in some package's
``[project.entry-points."monitord.sinks"]``: it declares the URL schemes it serves, checks a
destination before anything is built, builds the sink and states its
:class:`~sinks.runtime.capabilities.Capabilities`.  A pip-installed package adds a sink
without touching monitord.  The built-ins:

| destination                      | factory   | sink                          |
| plain path (relative to run dir) | file      | file (.bp or JSON lines)      |
| ``-``                            | file      | stdout (the reference's 5.1 code made a file named ``-``) |
| ``file:///path``                 | file      | file                          |
| ``amqp://``, ``amqps://``        | amqp      | AMQP, spooled (sinks/amqp)    |
| ``otlp+http://``, ``otlp+https://``, ``otlp://`` | otlp | OpenTelemetry traces (sinks/otlp, docs/traces.md) |
| ``sqlite://``, ``mysql://``, ``mariadb://``, ``postgresql://``, ``jdbc:`` | sql | SQL database |
| (none: asked for by name)        | dashboard | the dashboard's master DB     |
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, cast

import structlog

from monitord.system.collector import Paused
from sinks.runtime.base import Sink, SinkError
from sinks.runtime.capabilities import declare
from sinks.runtime.factory import (
    PATH,
    SinkFactory,
    SinkRequest,
    endpoint_property,
    scheme_of,
)

__all__ = [
    "PATH",
    "Registry",
    "SinkFactory",
    "SinkRequest",
    "build_dashboard_sink",
    "build_sink",
    "sink_or_recipe",
    "endpoint_property",
    "installed",
    "scheme_of",
]

if TYPE_CHECKING:
    from sinks.runtime.process_sink import Recipe

log = structlog.get_logger(__name__)

ENTRY_POINT_GROUP = "monitord.sinks"


def display_scheme(scheme: str) -> str:
    if scheme == PATH:
        return "a plain path"
    return "jdbc:" if scheme == "jdbc" else f"{scheme}://"


class Registry:
    """The installed sink factories, by name and by scheme (the first of duplicates wins)."""

    def __init__(self, factories: list[SinkFactory]) -> None:
        self.by_name: dict[str, SinkFactory] = {}
        self.by_scheme: dict[str, SinkFactory] = {}
        for factory in factories:
            if factory.name in self.by_name:
                log.warning("two sinks share a name; using the first", sink=factory.name)
                continue
            self.by_name[factory.name] = factory
            for scheme in factory.schemes:
                other = self.by_scheme.setdefault(scheme, factory)
                if other is not factory:
                    log.warning(
                        "two sinks claim a scheme; using the first",
                        scheme=scheme,
                        first=other.name,
                        second=factory.name,
                    )

    @classmethod
    def discover(cls) -> Registry:
        """Every factory installed in this interpreter; a broken one is logged and left out."""
        factories: list[SinkFactory] = []
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                factory = ep.load()
            except Exception as exc:  # noqa: BLE001 - one bad package must not stop the rest
                log.error("cannot load sink factory", sink=ep.name, error=repr(exc))
                continue
            if not isinstance(factory, SinkFactory):
                log.error("not a sink factory", sink=ep.name, target=ep.value)
                continue
            factories.append(factory)
        return cls(factories)

    def installed_schemes(self) -> str:
        names = sorted(display_scheme(s) for s in self.by_scheme)
        return ", ".join(names) or "none (reinstall monitord: its entry points are missing)"

    def factory_for(self, dest: str) -> SinkFactory:
        scheme = scheme_of(dest)
        factory = self.by_scheme.get(scheme)
        if factory is None:
            raise SinkError(
                f"no sink for {display_scheme(scheme)} destinations;"
                f" installed: {self.installed_schemes()}"
            )
        return factory

    def named(self, name: str) -> SinkFactory:
        factory = self.by_name.get(name)
        if factory is None:
            raise SinkError(f"no sink named {name!r}; installed: {', '.join(sorted(self.by_name))}")
        return factory

    def build(self, factory: SinkFactory, request: SinkRequest) -> Sink:
        """Check, build, and stamp the factory's capabilities on the sink."""
        factory.check(request)
        sink = factory.build(request)
        declare(sink, factory.capabilities)
        return sink


_registry: Registry | None = None
_lock = threading.Lock()


def installed() -> Registry:
    """The process's registry, discovered once (with the collector paused: loading the
    factories makes many objects and no garbage: monitord/system/collector.py)."""
    global _registry
    with _lock:
        if _registry is None:
            with Paused():
                _registry = Registry.discover()
        return _registry


def rediscover() -> Registry:
    """Forget the discovered factories (a package was installed meanwhile)."""
    global _registry
    with _lock:
        _registry = None
    return installed()


def build_sink(
    dest: str,
    *,
    run_dir: str,
    restart: bool,
    encoding: str = "bp",
    root_wf_uuid: str | None = None,
    pegasus_version: str | None = None,
    properties: Mapping[str, str] | None = None,
    replay: bool = False,
) -> Sink:
    """Resolve one destination to an unopened sink (``properties``: the endpoint settings;
    ``replay``: see :attr:`SinkRequest.replay`)."""
    registry = installed()
    request = SinkRequest(
        dest,
        run_dir=run_dir,
        restart=restart,
        encoding=encoding,
        root_wf_uuid=root_wf_uuid,
        pegasus_version=pegasus_version,
        properties=properties or {},
        replay=replay,
    )
    return registry.build(registry.factory_for(dest), request)


def sink_or_recipe(dest: str, **settings: Any) -> Sink | Recipe:
    """:func:`build_sink` (the same ``settings``) for a sink a loader child writes: its
    factory's recipe when it offers one for this destination (``recipe(request)``, the SQL
    factory: ``sinks/sql/recipe.py``), checked but not built in this process."""
    registry = installed()
    factory = registry.factory_for(dest)
    make = getattr(factory, "recipe", None)
    if make is not None:
        properties = settings.pop("properties", None) or {}
        made = make(SinkRequest(dest, properties=properties, **settings))
        if made is not None:
            return cast("Recipe", made)
        settings["properties"] = properties
    return build_sink(dest, **settings)


def build_dashboard_sink(
    url: str, *, root_wf_uuid: str, db_url: str, restart: bool, pegasus_version: str | None
) -> Sink:
    """The dashboard's master-DB sink for one root workflow (factory ``dashboard``)."""
    registry = installed()
    request = SinkRequest(
        url,
        run_dir=".",
        restart=restart,
        root_wf_uuid=root_wf_uuid,
        pegasus_version=pegasus_version,
        db_url=db_url,
    )
    return registry.build(registry.named("dashboard"), request)
