"""A Monitor's events outputs: the destinations asked for, the per-workflow daemon's executors
for them (:class:`LocalOutputs`), the check that some of them got the events, and the last word
on the event plugins."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import structlog

from monitord.core.readers.default_db import default_db_url
from monitord.daemon.config import MonitorConfig
from monitord.daemon.errors import MonitordError
from monitord.daemon.parts import MarkKeeper
from sinks.plugins.host import plugin_snapshot
from sinks.registry import build_dashboard_sink, build_sink, sink_or_recipe
from sinks.runtime.base import Sink
from sinks.runtime.capabilities import capabilities_of
from sinks.runtime.executor import Executor
from sinks.runtime.health import PluginHooks, SinkHealth
from sinks.runtime.sinkset import SinkSet
from sinks.runtime.spool import SpoolSettings

if TYPE_CHECKING:
    from sinks.runtime.process_sink import Recipe

log = structlog.get_logger(__name__)


@dataclass
class Destinations:
    """The events outputs asked for (-d, properties, the default DB), built but not opened."""

    sinks: list[Sink] = field(default_factory=list)
    requested: int = 0  # destinations asked for (the dashboard is not one)
    errors: list[str] = field(default_factory=list)  # why some could not even be created


def build_outputs(cfg: MonitorConfig, run_dir: str, bd: Any, *, restart: bool) -> Destinations:
    """Every destination ``cfg`` asks for; a bad one is logged, counted and left out."""
    dests = [d or default_db_url(run_dir, bd) for d in (cfg.dests or [None])]
    out = Destinations(requested=len(dests))
    process = loader_in_process(cfg)
    built: list[Sink | Recipe] = []
    build = sink_or_recipe if process else build_sink
    for dest in dests:
        try:
            built.append(
                build(
                    dest,
                    run_dir=run_dir,
                    restart=restart,
                    encoding=cfg.encoding,
                    root_wf_uuid=bd.wf_uuid,
                    pegasus_version=bd.planner_version,
                    properties=cfg.properties,
                    replay=cfg.replay,
                )
            )
        except Exception as exc:  # a bad destination disables only itself
            log.error("cannot create events output, disabling it", error=str(exc))
            out.errors.append(str(exc))
    if cfg.dashboard and built:
        from sinks.sql.dashboard import default_dashboard_url

        try:
            built.append(
                build_dashboard_sink(
                    cfg.dashboard_url or default_dashboard_url(),
                    root_wf_uuid=bd.wf_uuid,
                    db_url=dests[0],
                    restart=restart,
                    pegasus_version=bd.planner_version,
                )
            )
        except Exception as exc:
            log.warning("dashboard disabled", error=str(exc))
    out.sinks = [in_child_process(sink) if process else cast(Sink, sink) for sink in built]
    return out


#: the size of dagman.out from which a replay starts its helper processes (about 1,400
#: generated jobs): below it their start-up (~0.4 s of CPU each) and the crossing cost more
#: than the second core gains (bench/README.md, "Issue 30, tenth session: small30g")
PROCESS_FROM = 3 << 20
#: the cores the 1-minute load average must leave idle: on a busy machine the child costs a
#: third more CPU and gains no wall time (the same bench/README.md section)
SPARE = 0.5


def usable_cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def loader_in_process(cfg: MonitorConfig) -> bool:
    """Whether a replay's SQL destinations are written by a child process: ``--sql-process``
    (True) or ``--sql-thread`` (False) say so; otherwise :func:`helper_processes` does.
    Following: never."""
    if not cfg.replay:
        return False
    if cfg.sql_process is not None:
        return cfg.sql_process
    return helper_processes(cfg, "SQL loader")


def core_to_spare() -> tuple[bool, int, float]:
    """Whether this process may use two cores or more and the load average leaves
    :data:`SPARE` of them idle; with the cores and the load it was decided on."""
    cores = usable_cores()
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average to read: taken as idle
        load = 0.0
    return cores >= 2 and cores - load >= SPARE, cores, load


def helper_processes(cfg: MonitorConfig, what: str) -> bool:
    """Whether a replay with no option saying so gets a helper process (``what``: the SQL
    loader's child, the read-ahead worker): a root dagman.out of :data:`PROCESS_FROM` or more
    when this process may use two cores or more and the load average leaves :data:`SPARE` of
    them idle (the second core pays for a helper's start-up and the crossing only on a large
    replay, and only when it is free)."""
    try:
        size = os.path.getsize(cfg.dagman_out)
    except OSError:
        return False
    if size < PROCESS_FROM:
        return False
    child, cores, load = core_to_spare()
    log.info(
        f"{what} of a large replay",
        where="process" if child else "thread",
        cores=cores,
        load=round(load, 2),
    )
    return child


def in_child_process(sink: Sink | Recipe) -> Sink:
    """``--sql-process``: a SQL destination (not the dashboard, which stays a thread: 0.1 s of
    a 20,000-job replay) is written by a child process, a sink of the same runtime
    (docs/architecture.md, "A replay with --sql-process"); the child builds it from its
    recipe when it has one (``sinks/sql/recipe.py``: this process then loads no SQLAlchemy),
    else is handed the sink built here (``process_sink.recipe_of``)."""
    from monitord.system import loglevel
    from sinks.runtime.process_sink import ProcessSink

    if not _sql_destination(sink):
        return cast(Sink, sink)
    return ProcessSink(sink, again=_reopening, level=loglevel.level())


def _sql_destination(sink: Sink | Recipe) -> bool:
    """Whether ``sink`` is a SQL destination: its recipe, or the sink built here (a SQLSink
    was built only if its module is loaded: not importing it keeps SQLAlchemy out)."""
    from sinks.sql.recipe import SQLRecipe

    module = sys.modules.get("sinks.sql.sink")
    return isinstance(sink, SQLRecipe) or (module is not None and isinstance(sink, module.SQLSink))


def _reopening(sink: Any) -> Any:
    """A SQL destination for a new child after one opened it (``SQLRecipe.reopening``,
    ``SQLSink.reopening``: no second rotation or purge)."""
    return sink.reopening()


class LocalOutputs:
    """The per-workflow daemon's sink set: a thread per sink (the one path of a line, in a
    replay as when following), spooling while a sink is down; :meth:`SinkSet.close` waits in
    a thread."""

    def __init__(self) -> None:
        self.set: SinkSet | None = None

    def sink_set(self, sinks: list[Sink], spool: SpoolSettings | None) -> SinkSet:
        self.set = SinkSet(sinks, spool=spool)
        return self.set

    @property
    def workers(self) -> list[Executor]:
        return self.set.workers if self.set is not None else []

    async def settle(self) -> None:
        """Nothing: the set's ``close`` waits for the deliveries."""

    def forget_marks(self, root_uuid: str) -> None:
        for worker in self.workers:
            if (
                capabilities_of(worker.sink).keeps_marks
                and not worker.failed
                and not worker.spooled
                and not worker.queued
            ):
                cast(MarkKeeper, worker.sink).forget_marks(root_uuid)

    def health(self) -> list[SinkHealth]:
        """Per sink: :meth:`SinkSet.health` (none before the set is built)."""
        return self.set.health() if self.set is not None else []


def check_outputs(outputs: LocalOutputs, destinations: Destinations) -> None:
    """After the run: every requested events destination failed for good (could not be
    created or opened, or was disabled) -> one clear error, a non-zero exit status."""
    if not destinations.requested:
        return
    reasons = list(destinations.errors)
    for worker in outputs.workers:
        if worker.failed and worker.sink.name != "dashboard":
            reasons.append(str(worker.health().last_error or worker.sink.name))
    if len(reasons) >= destinations.requested:
        raise MonitordError("no events output could be written: " + "; ".join(reasons))


def log_plugins(sinks: Any) -> None:
    """The daemon's last word on its event plugins: each one's counters and delivery state
    (a warning when one was skipped, raised, dropped events or was not fed to the end)."""
    plugins = plugin_snapshot(sinks)
    if not plugins:
        return
    summary = {p.name: _plugin_fields(p) for p in plugins}
    troubled = any(
        _hooks(p).state in ("skipped", "stuck")
        or _hooks(p).errors
        or p.dropped
        or p.delivery_state not in (None, "up")
        for p in plugins
    )
    (log.warning if troubled else log.info)("event plugins at exit", plugins=summary)


def _hooks(p: SinkHealth) -> PluginHooks:
    assert p.plugin is not None  # (plugin_snapshot: a plugin's health carries its hooks)
    return p.plugin


def _plugin_fields(p: SinkHealth) -> dict[str, object]:
    """What the exit line shows of a plugin: a skipped one only its state (and why)."""
    hooks = _hooks(p)
    fields: dict[str, object] = {"state": hooks.state}
    if hooks.ran:
        fields.update(
            delivery=p.state,
            delivered=hooks.delivered,
            dropped=p.dropped,
            spooled=p.spooled,
            errors=hooks.errors,
        )
        if hooks.restarts is not None:  # process-isolated
            fields["restarts"] = hooks.restarts
    if hooks.last_error:
        fields["last_error"] = hooks.last_error
    return fields
