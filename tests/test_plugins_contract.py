"""The plugin contract, host side: properties object, settings, hooks, buffer, runtime.

In-process tests with small plugin classes; the installed contract plugins and
the daemon are in test_plugins_daemon.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from monitord.core.events import make_event
from sinks.plugins.calls import PluginCalls
from sinks.plugins.config import (
    ALL_EVENTS,
    PluginConfigError,
    PluginSettings,
    enabled_names,
    parse_settings,
)
from sinks.plugins.contract import call_start, event_filter, kw_key, payload
from sinks.plugins.host import (
    PluginHost,
    SinksAndPlugins,
    load_plugins,
    plugin_runner,
    plugin_snapshot,
)
from sinks.plugins.properties import PluginProperties
from sinks.plugins.sink import PluginSink
from sinks.runtime.runner import SinkWorker
from sinks.runtime.sinkset import SinkSet
from sinks.runtime.spool import SpoolSettings
from tests.event_check import wire
from tests.plugin_fixtures import install_plugin_packages, journal

# ---------------------------------------------------------------- the properties object


def test_properties_object_answers_pegasus_calls(capsys: pytest.CaptureFixture[str]) -> None:
    source = {
        "pegasus.monitord.plugins.p.output": "/tmp/x",
        "pegasus.monitord.plugins.p.level": "3",
        "pegasus.catalog.workflow.url": "sqlite:///a.db",
    }
    props = PluginProperties(source)
    assert props.property("pegasus.monitord.plugins.p.output") == "/tmp/x"
    assert props.property("nope") is None
    assert props.propertyset("pegasus.monitord.plugins.p.", True) == {
        "output": "/tmp/x",
        "level": "3",
    }
    assert props.propertyset("pegasus.monitord.plugins.p.", remove=False) == {
        "pegasus.monitord.plugins.p.output": "/tmp/x",
        "pegasus.monitord.plugins.p.level": "3",
    }
    assert props.propertyset("pegasus.monitord.plugins.p.output", True) == {}  # empty keys out
    assert sorted(props.keyset(r"pegasus\.catalog")) == ["pegasus.catalog.workflow.url"]
    assert len(list(props.keyset())) == 3
    assert props.property("k", "v") is None and props.property("k", "w") == "v"
    assert props.remove("k") == "w" and props.remove("k") is None
    del props["pegasus.catalog.workflow.url"]
    assert "pegasus.catalog.workflow.url" not in props
    assert source["pegasus.catalog.workflow.url"] == "sqlite:///a.db"  # a copy: daemon's intact
    assert props.dump() == 2
    assert "pegasus.monitord.plugins.p.level=3" in capsys.readouterr().out
    assert isinstance(props.m_config, dict)


# ---------------------------------------------------------------- settings


def test_enabled_names_follow_the_pegasus_boolean_spelling() -> None:
    props = {
        "pegasus.monitord.plugins.a.enabled": "TRUE",
        "pegasus.monitord.plugins.b.enabled": "yes",
        "pegasus.monitord.plugins.c.enabled": "1",
        "pegasus.monitord.plugins.d.enabled": "On",
        "pegasus.monitord.plugins.e.enabled": "false",
        "pegasus.monitord.plugins.f.enabled": "2",
        "pegasus.monitord.plugins.enabled": "true",  # names no plugin
        "pegasus.monitord.plugins.my.dotted.enabled": "true",
    }
    assert enabled_names(props) == ["a", "b", "c", "d", "my.dotted"]


def test_settings_defaults_and_values() -> None:
    assert parse_settings("p", {}) == PluginSettings(name="p")
    assert PluginSettings(name="p").overflow_policy == "spool"
    s = parse_settings(
        "p",
        {
            "pegasus.monitord.plugins.p.events": "stampede.job_inst., stampede.xwf.",
            "pegasus.monitord.plugins.p.queue_size": "0",
            "pegasus.monitord.plugins.p.overflow_policy": "Drop-Oldest",
            "pegasus.monitord.plugins.p.tick_interval": "0.5",
            "pegasus.monitord.plugins.p.join_timeout": "3",
            "pegasus.monitord.plugins.p.isolation": "process",
        },
    )
    assert s.events == ("stampede.job_inst.", "stampede.xwf.")
    assert (s.queue_size, s.overflow_policy, s.tick_interval) == (0, "drop-oldest", 0.5)
    assert (s.join_timeout, s.start_timeout, s.isolation) == (3.0, 3.0, "process")
    assert parse_settings("p", {"pegasus.monitord.plugins.p.events": "*"}).events == ALL_EVENTS


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("events", " , "),
        ("queue_size", "many"),
        ("overflow_policy", "drop-middle"),
        ("tick_interval", "-1"),
        ("join_timeout", "-0.5"),
        ("start_timeout", "soon"),
        ("isolation", "container"),
    ],
)
def test_a_bad_setting_names_its_key(key: str, value: str) -> None:
    full = f"pegasus.monitord.plugins.p.{key}"
    with pytest.raises(PluginConfigError) as err:
        parse_settings("p", {full: value})
    assert err.value.key == full and full in str(err.value)


# ---------------------------------------------------------------- hooks and payload


class Recorder:
    def __init__(self) -> None:
        self.calls: list[Any] = []


def test_start_gets_restart_only_where_the_override_accepts_it() -> None:
    class Old(Recorder):
        def start(self, props=None):
            self.calls.append(("old", props))

    class New(Recorder):
        def start(self, props, restart=False):
            self.calls.append(("new", restart))

    class Kwargs(Recorder):
        def start(self, props=None, **kwargs):
            self.calls.append(("kw", kwargs))

    class NoStart(Recorder):
        pass

    props = PluginProperties({})
    for cls, want in (
        (Old, ("old", props)),
        (New, ("new", True)),
        (Kwargs, ("kw", {"restart": True})),
    ):
        plugin = cls()
        call_start(plugin, props, True)
        assert plugin.calls == [want]
    call_start(NoStart(), props, True)  # no hook: nothing to call


def test_event_filter_property_wins_and_odd_prefixes_are_kept() -> None:
    class P:
        event_filter = "stampede.job_inst."

    assert event_filter(P(), None, "p") == ("stampede.job_inst.",)
    assert event_filter(P(), ("stampede.xwf.",), "p") == ("stampede.xwf.",)
    assert event_filter(P(), ALL_EVENTS, "p") is None

    class TickOnly:
        event_filter = ()

    assert event_filter(TickOnly(), None, "p") == ()
    assert event_filter(object(), None, "p") is None
    assert event_filter(P(), ("job_inst.",), "p") == ("job_inst.",)  # warned: matches nothing


def test_payload_is_fully_qualified_with_double_underscore_keys_and_owned() -> None:
    event = make_event(
        "job_inst.main.end",
        {
            "xwf.id": "W",
            "job.id": "j1",
            "job_inst.id": 1,
            "js.id": 3,
            "ts": 1.5,
            "exitcode": 0,
            "status": 0,
            "argv": ["a"],
        },
    )
    name, kw = payload(event)
    assert name == "stampede.job_inst.main.end"
    assert kw["xwf__id"] == "W" and kw["job_inst__id"] == 1 and kw["ts"] == 1.5
    kw["argv"].append("mutated")
    assert wire(event)["argv"] == ["a"]
    assert payload(event)[1] is not kw
    assert kw_key("root.xwf.id") == "root__xwf__id"


# ---------------------------------------------------------------- on the delivery runtime


def _events(n: int, first: int = 0) -> list[Any]:
    return [
        make_event(
            "job_inst.main.start",
            {"xwf.id": "W", "job.id": f"j{i}", "job_inst.id": i, "js.id": 1, "ts": float(i)},
        )
        for i in range(first, first + n)
    ]


class Gated:
    """Handles events once its gate is open; records names and job ids."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()  # inside handle_event
        self.seen: list[tuple[str, Any]] = []
        self.ticks = 0
        self.stopped = 0

    def start(self, props, restart=False):
        self.restart = restart

    def handle_event(self, event, kw):
        self.thread = threading.current_thread().name
        self.entered.set()
        self.gate.wait()
        self.seen.append((event, kw.get("job__id")))

    def tick(self):
        self.ticks += 1

    def stop(self):
        self.stopped += 1


def _plugin(
    plugin: Any, spool: SpoolSettings | None = None, **kw: Any
) -> tuple[PluginCalls, SinkWorker, PluginHost]:
    """``plugin`` started and on its runtime executor, as the host runs it."""
    calls = PluginCalls(PluginSettings(name="t", **kw), plugin)
    assert calls.start({}, restart=False)
    sink = PluginSink(calls, spool)
    runner = plugin_runner(sink, spool)
    runner.start()
    return calls, runner, PluginHost([(sink, runner)], [])


def _wait(cond: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_plugin_runs_on_its_delivery_thread_alone() -> None:
    """No buffer or thread of its own: the runtime's executor is the plugin's one worker."""
    plugin = Gated()
    calls, runner, host = _plugin(plugin)
    runner.put(_events(2))
    assert plugin.entered.wait(10)
    names = sorted(t.name for t in threading.enumerate() if "plugin" in t.name)
    plugin.gate.set()
    host.close()
    assert names == ["sink-plugin:t"] and plugin.thread == "sink-plugin:t", names
    assert [job for _, job in plugin.seen] == ["j0", "j1"]


@pytest.mark.parametrize("policy", ["drop-newest", "drop-oldest"])
def test_drop_policies_never_block_and_count(policy: str) -> None:
    """The drop policies are options of the runtime's queue: the batch in hand is the
    plugin's, what waits behind it is bounded by queue_size, the overflow dropped."""
    plugin = Gated()
    calls, runner, host = _plugin(plugin, queue_size=3, overflow_policy=policy)
    runner.put(_events(1))
    assert plugin.entered.wait(10)
    started = time.monotonic()
    runner.put(_events(10)[1:])  # 9 more while the plugin is held on the first
    assert time.monotonic() - started < 0.5
    assert runner.health().dropped == 6
    plugin.gate.set()
    host.close()
    ids = [job for _, job in plugin.seen]
    assert ids == (
        ["j0", "j1", "j2", "j3"] if policy == "drop-newest" else ["j0", "j7", "j8", "j9"]
    )
    (state,) = host.snapshot()
    assert state.dropped == 6 and state.plugin is not None and state.plugin.ran
    assert plugin.stopped == 1 and state.plugin.state == "stopped"


def test_tick_runs_while_no_events_come_and_never_after_the_drain() -> None:
    plugin = Gated()
    plugin.gate.set()
    calls, runner, host = _plugin(plugin, tick_interval=0.05)
    time.sleep(0.4)
    assert plugin.ticks >= 3
    host.close()
    after = plugin.ticks
    time.sleep(0.2)
    assert plugin.ticks == after and plugin.stopped == 1


def test_raising_hooks_are_contained_and_counted() -> None:
    class Raiser:
        def handle_event(self, event, kw):
            raise ValueError("boom")

        def tick(self):
            raise ValueError("tock")

        def stop(self):
            raise ValueError("stop")

    calls, runner, host = _plugin(Raiser(), tick_interval=0.05)
    runner.put(_events(5))
    time.sleep(0.2)
    host.close()
    (snap,) = host.snapshot()
    hooks = snap.plugin
    assert hooks is not None
    assert hooks.delivered == 5 and hooks.errors >= 6 and "stop" in str(hooks.last_error)


def test_start_and_stop_are_bounded() -> None:
    class SlowStart:
        def start(self, props):
            time.sleep(5)

    calls = PluginCalls(PluginSettings(name="s", start_timeout=0.2), SlowStart())
    began = time.monotonic()
    assert not calls.start({}, restart=False)
    assert time.monotonic() - began < 2 and calls.state == "skipped"

    class Failing:
        def start(self, props):
            raise OSError("no such directory")

    failing = PluginCalls(PluginSettings(name="f"), Failing())
    assert not failing.start({}, restart=False) and "no such directory" in (
        failing.last_error or ""
    )

    plugin = Gated()  # never let go: handle_event blocks
    calls, runner, host = _plugin(plugin, join_timeout=0.3)
    runner.put(_events(3))
    assert plugin.entered.wait(10)
    began = time.monotonic()
    host.close()
    assert time.monotonic() - began < 2
    assert calls.state == "stuck" and plugin.stopped == 0  # stop() skipped
    assert [wire(e)["job.id"] for e in calls.unhandled()] == ["j0", "j1", "j2"]


def test_spool_policy_through_the_runtime_loses_nothing_and_never_blocks(tmp_path: Path) -> None:
    """``spool`` is the runtime queue's overflow: what does not fit waits in the plugin's
    spool (the delivery draining it), and the plugin gets every event in order."""
    plugin = Gated()
    spool = SpoolSettings(root=str(tmp_path / "spool"), max_backoff=0.2, first_backoff=0.05)
    calls, runner, host = _plugin(plugin, spool, queue_size=4)
    batches = [_events(3, 3 * i) for i in range(30)]
    began = time.monotonic()
    for batch in batches:
        runner.put(batch)
    host.flush()
    assert time.monotonic() - began < 3, "the producer waited for a held plugin"
    assert runner.spooled > 0
    (state,) = host.snapshot()
    assert state.spooled == runner.spooled and state.delivery_state == "draining"
    plugin.gate.set()
    _wait(lambda: not runner.spooled and not runner.queued, 20)
    host.close()
    assert plugin.seen == [("stampede.job_inst.main.start", e.job_id) for b in batches for e in b]
    (state,) = host.snapshot()
    assert state.delivery_state == "up" and state.plugin is not None
    assert state.plugin.delivered == 90


def test_host_snapshot_reports_each_plugin(tmp_path: Path) -> None:
    plugin = Gated()
    plugin.gate.set()
    calls = PluginCalls(PluginSettings(name="t", overflow_policy="drop-newest"), plugin)
    assert calls.start({}, restart=False)
    sink = PluginSink(calls)
    host = PluginHost([(sink, plugin_runner(sink))], [])
    both = SinksAndPlugins(SinkSet([]), host)
    both.start()
    both.publish(_events(4))
    both.flush()
    time.sleep(0.1)
    both.close()
    (state,) = plugin_snapshot(both)
    hooks = state.plugin
    assert hooks is not None
    assert state.name == "t" and hooks.delivered == 4 and state.dropped == 0
    assert state.spooled == 0 and hooks.state == "stopped" and state.delivery_state == "up"


def test_enabled_but_missing_or_misconfigured_plugins_are_skipped() -> None:
    props = {
        "pegasus.monitord.plugins.ghost.enabled": "true",
        "pegasus.monitord.plugins.t.enabled": "true",
        "pegasus.monitord.plugins.t.overflow_policy": "sometimes",
    }

    class Entry:
        target = "x:T"

        def load(self):
            return Gated

    ready, skipped = load_plugins(props, {"t": Entry()})  # type: ignore[dict-item]
    assert ready == []
    reasons = {s.name: s.reason for s in skipped}
    assert reasons["ghost"] == "enabled but not installed"
    assert "pegasus.monitord.plugins.t.overflow_policy" in reasons["t"]


def test_spool_policy_a_slow_plugin_gets_each_event_exactly_once(tmp_path: Path) -> None:
    """Flushes time out while the plugin works (what waits is spooled past the batch in
    hand, which goes first): no repeats, no reordering."""

    class Slow:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def handle_event(self, event, kw):
            time.sleep(0.25)  # a batch of 3 takes longer than a flush waits
            self.seen.append(kw["job__id"])

    plugin = Slow()
    spool = SpoolSettings(root=str(tmp_path / "spool"), max_backoff=0.1, first_backoff=0.05)
    calls, runner, host = _plugin(plugin, spool, queue_size=3)
    for i in range(5):
        runner.put(_events(3, 3 * i))
    host.flush()
    _wait(lambda: not runner.spooled and not runner.queued, 30)
    host.close()
    assert plugin.seen == [f"j{i}" for i in range(15)]


def test_process_isolation_restarts_by_the_runtime_policy(tmp_path: Path) -> None:
    """A child that dies fails its batch retryably: the delivery goes down, retries after its
    backoff in a new child (counted), which gets the batch again; the health says so."""
    from sinks.plugins.isolated import ChildPlugin

    marker = tmp_path / "crashed"
    out = tmp_path / "crasher.jsonl"
    props = {
        "pegasus.monitord.plugins.crasher.output": str(out),
        "pegasus.monitord.plugins.crasher.crash_at": "2",
        "pegasus.monitord.plugins.crasher.marker": str(marker),
    }
    install_plugin_packages()
    settings = PluginSettings(name="crasher", isolation="process")
    child = ChildPlugin(settings, "monitord_contract_plugins.crasher:CrashingPlugin")
    assert child.start(props, restart=False)
    spool = SpoolSettings(root=str(tmp_path / "spool"), max_backoff=0.2, first_backoff=0.05)
    sink = PluginSink(child, spool)
    runner = plugin_runner(sink, spool)
    host = PluginHost([(sink, runner)], [])
    runner.start()
    runner.put(_events(3))
    _wait(lambda: child.delivered >= 3, 60)
    host.close()
    (state,) = host.snapshot()
    hooks = state.plugin
    assert hooks is not None
    assert marker.exists() and hooks.restarts == 1 and hooks.delivered == 3
    assert state.retries == 1
    seen = [r["kw"]["job__id"] for r in journal(out) if r["hook"] == "event"]
    assert seen == ["j0", "j0", "j1", "j2"]  # the first again: at least once, in order
