"""No log line shows a URL's password, whichever site logs it (issue 27: secrets).

A driver's, a broker's or a plugin's exception may quote a URL with its password; the
daemon's console log and the service's JSON and console logs mask it in every value and in
a logged traceback (``monitord.system.logs.mask_passwords``).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
import structlog

from monitord.daemon.monitor import MonitordError
from monitord.service import workflows
from monitord.service.logs import configure_service_logging
from monitord.system.logs import configure_logging

SECRET = "s3cret"
URL = f"amqp://monitord:{SECRET}@broker:5672/%2F"


def _log_a_failure() -> None:
    log = structlog.get_logger("test.masking")
    try:
        raise ConnectionError(f"cannot connect to {URL}")
    except ConnectionError as exc:
        log.error("sink failed", error=str(exc), exc=exc, urls=[URL], exc_info=exc)
        log.exception("worker crashed", error=repr(exc))
    log.warning("plain line", path="/var/run/x@y", count=3)


@pytest.mark.quick
@pytest.mark.parametrize("where", ["daemon", "service json", "service console"])
def test_a_logged_url_password_is_masked_in_values_and_tracebacks(
    where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if where == "daemon":
        configure_logging(0)
    else:
        configure_service_logging(where.split()[1], "info")
    _log_a_failure()
    err = capsys.readouterr().err
    assert SECRET not in err, err
    assert "sink failed" in err and "worker crashed" in err and "Traceback" in err
    assert err.count("amqp://monitord:***@broker") >= 5  # error, exc, urls, two tracebacks
    assert "/var/run/x@y" in err and "plain line" in err  # other text as it was


class _FailingMonitor:
    shutting_down = False

    async def close(self) -> None:
        pass


@pytest.mark.quick
@pytest.mark.parametrize("error", [RuntimeError, MonitordError])
def test_a_followed_workflows_error_shows_no_password(error: type[Exception]) -> None:
    """What the service keeps of a workflow that failed (the attach client's ``ended`` line)."""

    class Failing(_FailingMonitor):
        def start(self) -> None:
            raise error(f"cannot open {URL}")

    item: Any = SimpleNamespace(error=None, stop=asyncio.Event())
    service_monitor: Any = SimpleNamespace(monitor=Failing(), following_over=asyncio.Event())
    with structlog.testing.capture_logs():
        code = asyncio.run(workflows._follow(item, service_monitor, lambda: False))
    assert code != 0 and "monitord:***@broker" in item.error and SECRET not in item.error
