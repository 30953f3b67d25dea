"""Nothing probes a sink: what the runtime, the end-of-run report and the status read of it is
its typed health record (``sinks.runtime.health.SinkHealth``) and what it declares, read in
one module (``sinks/runtime/capabilities.py``), as docs/architecture.md says (issue 27).

The sinks here declare nothing optional and note every attribute asked of them that they do
not have, with the file that asked: a ``getattr(sink, ...)`` anywhere else fails the test.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
from structlog.testing import capture_logs

from monitord.cli.progress import _plugin_part
from monitord.core.events import StampedeEvent, make_event
from monitord.daemon.outputs import log_plugins
from monitord.daemon.undelivered import undelivered
from sinks.plugins.calls import PluginCalls
from sinks.plugins.config import PluginSettings
from sinks.plugins.host import PluginHost, SinksAndPlugins, Skipped, plugin_runner, plugin_snapshot
from sinks.plugins.sink import PluginSink
from sinks.runtime.base import SinkError
from sinks.runtime.health import SinkHealth
from sinks.runtime.lanes import LaneHandle, SinkLane
from sinks.runtime.runner import SinkWorker
from sinks.runtime.sinkset import SharedSinkSet, SinkSet
from sinks.runtime.spool import SpoolSettings

pytestmark = pytest.mark.quick

DECLARING = str(Path("sinks") / "runtime" / "capabilities.py")


class Probed:
    """A sink that is down for good (retryable), declaring only what the protocol asks."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.probes: list[tuple[str, str]] = []  # (attribute, the file that asked)

    def open(self) -> None:
        pass

    def write_batch(self, events: Sequence[StampedeEvent]) -> None:
        raise SinkError("no answer", retryable=True)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __getattr__(self, attr: str) -> object:
        if not attr.startswith("__"):
            self.probes.append((attr, sys._getframe(1).f_code.co_filename))
        raise AttributeError(attr)


def _events(n: int) -> list[StampedeEvent]:
    return [make_event("stampede.xwf.start", {"xwf.id": "wf", "ts": float(i)}) for i in range(n)]


def _run(sink: Probed, spool: SpoolSettings) -> SinkWorker:
    worker = SinkWorker(sink, spool=spool)
    worker.start()
    for _ in range(3):
        worker.put(_events(4))
    worker.flush()
    worker.request_stop()
    worker.join()
    return worker


def _outside(sink: Probed) -> list[tuple[str, str]]:
    return [(attr, where) for attr, where in sink.probes if not where.endswith(DECLARING)]


def test_the_end_of_run_report_reads_the_health_record_only(tmp_path: Path) -> None:
    """A down sink's events left in the runtime's spool: the report's counts and spool paths
    come from ``SinkHealth`` (``left_behind``, ``spooled``, ``spool_path``), not from
    attributes probed on the sink (it has none to give)."""
    spool = SpoolSettings(root=str(tmp_path / "spool"), drain_timeout=0.2, first_backoff=0.05)
    down = Probed("down")
    workers = [_run(down, spool)]

    health = [w.health() for w in workers]
    assert [(h.left_behind, h.spooled) for h in health] == [(12, 12)]
    assert [h.spool_path for h in health] == [spool.path_for(down)]
    lines = undelivered(workers, spool)
    assert len(lines) == 1, lines
    assert lines[0].startswith("12 events") and f"spool {spool.path_for(down)};" in lines[0]
    assert _outside(down) == []
    assert {attr for attr, _ in down.probes} <= {"capabilities", "destination", "display_url"}


def test_the_plugins_exit_line_and_summary_say_what_they_said_as_dicts() -> None:
    """Each plugin's health is a ``SinkHealth`` (its hooks' in ``plugin``), as every sink's; the
    daemon's "event plugins at exit" line and the summary's plugin parts are unchanged: a
    plugin that ran shows its delivery and counters, a skipped one its state and why."""

    class Raiser:
        def handle_event(self, event: str, kw: dict[str, object]) -> None:
            if kw.get("ts") == 1.0:
                raise ValueError("once")

    calls = PluginCalls(PluginSettings(name="t", overflow_policy="drop-newest"), Raiser())
    assert calls.start({}, restart=False)
    sink = PluginSink(calls)
    host = PluginHost([(sink, plugin_runner(sink))], [Skipped("ghost", "gone")])
    sinks = SinksAndPlugins(SinkSet([]), host)
    sinks.start()
    sinks.publish(_events(4))
    sinks.flush()
    sinks.close()
    with capture_logs() as logs:
        log_plugins(sinks)
    [line] = [e for e in logs if e["event"] == "event plugins at exit"]
    error = "handle_event() raised ValueError('once')"
    assert line["log_level"] == "warning"
    assert line["plugins"] == {
        "t": {
            "state": "stopped",
            "delivery": "up",
            "delivered": 4,
            "dropped": 0,
            "spooled": 0,
            "errors": 1,
            "last_error": error,
        },
        "ghost": {"state": "skipped", "last_error": "gone"},
    }
    assert list(line["plugins"]["t"]) == [  # the order the line shows them in
        *("state", "delivery", "delivered", "dropped", "spooled", "errors", "last_error")
    ]
    assert [_plugin_part(p) for p in plugin_snapshot(sinks)] == [
        f"plugin t (stopped): 4 delivered, 1 errors, last error: {error}",
        "plugin ghost (skipped): 0 delivered, last error: gone",
    ]


def test_a_plugins_health_is_a_sink_health_with_its_hooks_and_no_password() -> None:
    """A skipped plugin's record is the one every sink reports (disabled, no delivery state
    to show), its hooks' error masked like a sink's ``last_error``."""

    class Raiser:
        def handle_event(self, event: str, kw: dict[str, object]) -> None:
            raise ValueError("cannot reach amqp://user:s3cret@broker/vhost")

    calls = PluginCalls(PluginSettings(name="r"), Raiser())
    assert calls.start({}, restart=False)
    sink = PluginSink(calls)
    host = PluginHost([(sink, plugin_runner(sink))], [Skipped("ghost", "gone")])
    host.start()
    host.publish(_events(1))
    host.close()
    ran, skipped = host.snapshot()
    assert isinstance(ran, SinkHealth) and isinstance(skipped, SinkHealth)
    assert ran.plugin is not None and ran.plugin.ran and ran.delivery_state == "up"
    assert ran.plugin.errors == 1 and "s3cret" not in str(ran.plugin.last_error)
    assert "amqp://user:" in str(ran.plugin.last_error)
    assert skipped.plugin is not None and not skipped.plugin.ran
    assert skipped.disabled and skipped.delivery_state is None


def test_the_service_lanes_read_the_health_record_only(tmp_path: Path) -> None:
    """A down sink of one workflow on a service lane: the destination's "down" line counts the
    workflow, the workflow's undelivered events come from the record, and the sink is never
    probed."""
    spool = SpoolSettings(root=str(tmp_path / "spool"), first_backoff=0.05, max_backoff=0.1)
    down = Probed("down")
    lane = SinkLane("down")
    handle = LaneHandle(down, lane, "wf-9", spool, destination="down")
    handle.start()
    pool = SimpleNamespace(closing=False)
    shared = SharedSinkSet([handle], pool=pool)
    try:
        for _ in range(3):
            shared.publish(_events(4))
        shared.flush()
        assert shared.undelivered == 12 and [h.spooled for h in shared.health()] == [12]
        assert lane.reporters["down"].workflows == {"wf-9"}
        pool.closing = True  # a service stop: what is spooled stays there
        shared.close()
    finally:
        lane.stop()
    assert _outside(down) == []
    assert handle.health().left_behind == 12
