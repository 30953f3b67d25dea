"""Per-plugin state on the service's pages: /healthz names a plugin in trouble, /status.json
carries every plugin's counters, /metrics has them with honest help texts; the per-workflow
daemon says them in its last log line.

The plugins are the real contract plugins (tests/plugins/contract_plugins), run by the real
plugin host; their snapshot goes through the service's status code and HTTP endpoint.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from monitord.core.events import StampedeEvent, make_event
from monitord.service.http import start_http
from monitord.service.status import ServiceSnapshot, from_json, plugin_status, to_json
from sinks.plugins.host import SinksAndPlugins, Skipped, plugin_snapshot, start_plugins
from tests.conftest import require_corpus
from tests.plugin_fixtures import install_plugin_packages, plugin_args
from tests.test_endpoints import _replay as replay_sample
from tests.test_service_http import get, port_of


@pytest.fixture(scope="module", autouse=True)
def plugins_installed() -> None:
    install_plugin_packages()


class _Props(dict[str, str]):
    def property(self, key: str) -> str | None:
        return self.get(key)


class _NoSinks:
    def __bool__(self) -> bool:
        return False

    def start(self) -> None: ...

    def publish(self, batch: object) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def _events(n: int) -> list[StampedeEvent]:
    return [
        make_event("job.info", {"xwf.id": "wf-1", "job.id": f"j{i}", "ts": 1.0 + i})
        for i in range(n)
    ]


@pytest.fixture
def snapshot(tmp_path: Path) -> ServiceSnapshot:
    """Two real plugins fed 6 events: ``raiser`` raises on every other one, ``noop`` is fine."""
    props = _Props()
    for name in ("raiser", "noop"):
        props[f"pegasus.monitord.plugins.{name}.enabled"] = "true"
        props[f"pegasus.monitord.plugins.{name}.output"] = str(tmp_path / f"{name}.jsonl")
    props["pegasus.monitord.plugins.raiser.tick_interval"] = "3600"
    host = start_plugins(props, restart=False, spool=None)
    assert host is not None
    sinks = SinksAndPlugins(_NoSinks(), host)
    sinks.start()
    sinks.publish(_events(6))
    sinks.flush()
    sinks.close()
    plugins = [plugin_status("wf-1", s) for s in plugin_snapshot(sinks)]
    return ServiceSnapshot(started_at=0.0, plugins=plugins)


class _Source:
    def __init__(self, snap: ServiceSnapshot) -> None:
        self.snap = snap

    def snapshot(self) -> ServiceSnapshot:
        return self.snap


async def _page(snap: ServiceSnapshot, path: str) -> tuple[int, bytes]:
    srv = await start_http(_Source(snap), "127.0.0.1:0")
    try:
        status, _, body = await get(port_of(srv), path)
    finally:
        srv.close()
        await srv.wait_closed()
    return status, body


async def test_healthz_names_the_erroring_plugin_only(snapshot: ServiceSnapshot) -> None:
    by_name = {p.name: p for p in snapshot.plugins}
    assert by_name["raiser"].errors >= 3 and by_name["noop"].errors == 0
    status, body = await _page(snapshot, "/healthz")
    doc = orjson.loads(body)
    assert status == 200, "a plugin in trouble does not fail the service"
    named = {p["name"]: p for p in doc["plugins"]}
    assert set(named) == {"raiser"}
    assert named["raiser"]["workflow"] == "wf-1"
    assert "raiser: stop fails on purpose" in named["raiser"]["error"]  # the last one


async def test_healthz_names_a_skipped_plugin(snapshot: ServiceSnapshot) -> None:
    skipped = plugin_status("wf-2", Skipped("ghost", "gone").snapshot())
    snap = ServiceSnapshot(started_at=0.0, plugins=[*snapshot.plugins, skipped])
    doc = orjson.loads((await _page(snap, "/healthz"))[1])
    assert {p["name"] for p in doc["plugins"]} == {"raiser", "ghost"}


async def test_status_json_carries_every_plugin(snapshot: ServiceSnapshot) -> None:
    status, body = await _page(snapshot, "/status.json")
    assert status == 200
    doc = orjson.loads(body)
    got = {p["name"]: p for p in doc["plugins"]}
    assert got["noop"]["delivered"] == 6 and got["noop"]["errors"] == 0
    assert got["raiser"]["delivered"] == 6 and got["raiser"]["errors"] >= 3
    assert got["raiser"]["last_error"] and got["noop"]["delivery"] == "up"
    assert from_json(body).plugins == snapshot.plugins
    assert from_json(to_json(snapshot)) == snapshot


async def test_metrics_have_each_plugins_counters(snapshot: ServiceSnapshot) -> None:
    status, body = await _page(snapshot, "/metrics")
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    values = {
        (f.name, s.labels.get("plugin")): s.value
        for f in families.values()
        if f.name.startswith("monitord_plugin_")
        for s in f.samples
        if not s.name.endswith("_created")
    }
    assert values[("monitord_plugin_up", "noop")] == 1.0
    assert values[("monitord_plugin_up", "raiser")] == 0.0
    assert values[("monitord_plugin_delivered", "noop")] == 6.0
    assert values[("monitord_plugin_errors", "raiser")] >= 3.0
    assert values[("monitord_plugin_dropped", "noop")] == 0.0
    assert values[("monitord_plugin_restarts", "raiser")] == 0.0
    assert values[("monitord_plugin_spooled_events", "noop")] == 0.0
    assert "raised" in families["monitord_plugin_errors"].documentation
    assert "process" in families["monitord_plugin_restarts"].documentation


def _replay_with_plugins(tmp_path: Path, *more: str) -> list[str]:
    require_corpus()
    args = plugin_args(tmp_path, {"raiser": {"tick_interval": "3600"}, "noop": {}})
    proc = replay_sample(tmp_path, *args, *more)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


def test_daemon_summary_line_has_the_plugins(tmp_path: Path) -> None:
    last = _replay_with_plugins(tmp_path)[-1]
    assert last.startswith("monitord: replayed 1 workflow"), last
    assert "plugin noop (stopped): 98 delivered" in last
    assert re.search(r"plugin raiser \(stopped\): \d+ delivered, \d+ errors, last error: ", last)


def test_daemon_log_line_at_exit_has_the_plugins(tmp_path: Path) -> None:
    """The log's word on the plugins (a daemon under -q shows errors only, so not under -q)."""
    lines = _replay_with_plugins(tmp_path)
    [last] = [line for line in lines if "event plugins at exit" in line]
    assert "warning" in last, last
    for word in ("raiser", "noop", "delivered", "errors", "last_error", "stop fails on purpose"):
        assert word in last, word
