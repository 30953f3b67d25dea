"""One MonitorConfig from a command line or the service's defaults (monitord/daemon/config.py)."""

from __future__ import annotations

import pytest

from monitord.cli import REFERENCE, build_parser
from monitord.core.readers.workflow_properties import (
    PropertyError,
    float_property,
    int_property,
)
from monitord.daemon.config import ConfigError, Options, monitor_config

PROPS = {
    "pegasus.catalog.workflow.url": "sqlite:///wf.db",
    "pegasus.catalog.workflow.extra.url": "file:///extra.bp",
    "pegasus.monitord.encoding": "json",
    "pegasus.monitord.stdout.disable.parsing": "Yes",
    "pegasus.catalog.master.url": "sqlite:///master.db",
    "pegasus.monitord.notifications.max": "3",
}


def _args(*argv: str) -> Options:
    return Options.from_args(build_parser("pegasus-monitord", REFERENCE).parse_args([*argv]))


def test_command_line_and_properties() -> None:
    config = monitor_config(_args("-r", "x.dag.dagman.out"), dict(PROPS))
    assert config.dagman_out == "x.dag.dagman.out" and config.replay
    assert config.dests == ["sqlite:///wf.db", "file:///extra.bp"]
    assert (config.encoding, config.store_stdout) == ("json", False)
    assert (config.dashboard, config.dashboard_url) == (True, "sqlite:///master.db")
    assert (config.notifications, config.notifications_max) == (True, 3)


def test_the_command_line_wins() -> None:
    opts = _args("-d", "file:///d.bp", "-e", "bp", "--notifications-max", "7", "x.dag.dagman.out")
    config = monitor_config(opts, dict(PROPS))
    assert config.dests == ["file:///d.bp", "file:///extra.bp"]
    assert (config.encoding, config.notifications_max) == ("bp", 7)


def test_events_off_by_property_unless_a_destination_is_given() -> None:
    props = {"pegasus.monitord.events": "off"}
    assert monitor_config(_args("x.dag.dagman.out"), props).dests is None
    assert monitor_config(Options(dests=("file:///s.bp",)), props).dests == ["file:///s.bp"]


def test_service_defaults() -> None:
    """The service's destinations replace the properties'; its dashboard URL is its own."""
    opts = Options(
        dagman_out="y.dag.dagman.out",
        dests=("file:///s.bp",),
        default_encoding="json",
        no_dashboard=True,
        dashboard_url_from_properties=False,
        strict_notifications=False,
    )
    props = {**PROPS, "pegasus.monitord.encoding": "bp"}
    config = monitor_config(opts, props)
    assert config.dests == ["file:///s.bp"] and config.encoding == "bp"
    assert (config.dashboard, config.dashboard_url) == (False, None)
    assert monitor_config(opts, {}).encoding == "json"


def test_a_bad_number_refuses_the_command_line_and_silences_the_service() -> None:
    bad = {"pegasus.monitord.notifications.max": "many"}
    with pytest.raises(ConfigError, match=r"notifications\.max = 'many': not an integer"):
        monitor_config(_args("x.dag.dagman.out"), bad)
    config = monitor_config(Options(strict_notifications=False), bad)
    assert config.notifications is False and config.dests == [None]


def test_numbers_one_error_style() -> None:
    props = {"a": " 5 ", "b": "-1", "c": "x", "d": "nan", "e": "", "f": "2.5"}
    assert int_property(props, "a", 0) == 5 and int_property(props, "e", 9) == 9
    assert int_property(props, "b", 0, negative=True) == -1
    assert float_property(props, "f", None) == 2.5 and float_property(props, "zz", None) is None
    for key, call in (
        ("b", lambda: int_property(props, "b", 0)),
        ("c", lambda: int_property(props, "c", 0)),
        ("c", lambda: float_property(props, "c", 0.0)),
        ("d", lambda: float_property(props, "d", 0.0)),
    ):
        with pytest.raises(PropertyError) as caught:
            call()
        assert str(caught.value).startswith(f"{key} = {props[key]!r}: "), caught.value
