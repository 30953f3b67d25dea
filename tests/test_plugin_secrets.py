"""A plugin hook's exception never shows a password (issue 27: secrets never in logs or status).

A plugin's hook may raise with a database or broker URL in its message; the log line (with
its traceback), the hooks' ``last_error``, the health record and /status.json show it with the
password masked.  Each hook is made to raise once: start, handle_event, tick and stop.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest

from monitord.core.events import make_event
from monitord.service.status import ServiceSnapshot, plugin_status, sink_json, to_json
from monitord.system.logs import configure_logging
from sinks.plugins.calls import PluginCalls
from sinks.plugins.config import PluginSettings
from sinks.plugins.host import PluginHost, plugin_runner
from sinks.plugins.sink import PluginSink

SECRET = "s3cret"
URL = f"postgresql://u:{SECRET}@h/db"


def _raise() -> None:
    raise RuntimeError(URL)


class RaisesEverywhere:
    """Every hook but start raises with a URL carrying a password."""

    def handle_event(self, event: str, kw: Any) -> None:
        _raise()

    def tick(self) -> None:
        _raise()

    def stop(self) -> None:
        _raise()


class RaisesAtStart:
    def start(self, props: Any) -> None:
        _raise()


def _event() -> Any:
    return make_event(
        "job_inst.main.start",
        {"xwf.id": "W", "job.id": "j0", "job_inst.id": 1, "js.id": 1, "ts": 1.0},
    )


@pytest.mark.quick
def test_a_hooks_exception_shows_no_password_in_log_health_or_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(0)  # the daemon's own console log, tracebacks rendered as it renders them
    calls = PluginCalls(PluginSettings(name="leaky", tick_interval=0.01), RaisesEverywhere())
    assert calls.start({}, restart=False)
    sink = PluginSink(calls, None)
    runner = plugin_runner(sink, None)
    runner.start()
    runner.put([_event()])
    deadline = time.monotonic() + 10
    while calls.errors < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    skipped = PluginCalls(PluginSettings(name="late"), RaisesAtStart())
    assert not skipped.start({}, restart=False)
    host = PluginHost([(sink, runner)], [])
    host.close()  # stop() raises too

    log = capsys.readouterr().err
    assert SECRET not in log, log
    assert "handle_event() raised" in log and "stop() failed" in log
    assert "plugin start failed" in log and "Traceback" in log  # the first error's traceback
    assert "postgresql://u:***@h/db" in log
    health = host.snapshot()
    hooks = health[0].plugin
    assert hooks is not None and hooks.errors >= 2
    errors = [calls.last_error, skipped.last_error, hooks.last_error]
    assert all("postgresql://u:***@h/db" in (e or "") for e in errors), errors
    status = to_json(
        ServiceSnapshot(
            started_at=0.0,
            sinks=health,
            plugins=[plugin_status("wf", h) for h in health],
        )
    )
    assert orjson.loads(status)["plugins"][0]["last_error"] == hooks.last_error
    shown = [log, *map(str, errors), repr(health), status.decode(), repr(sink_json(health[0]))]
    assert not [text for text in shown if SECRET in text]
