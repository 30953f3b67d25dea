"""Sinks registered by entry point (``monitord.sinks``): the built-ins declare their schemes and
capabilities as data, an unknown scheme is one error naming what is installed, and a sink from
a pip-installed package (tests/plugins/capture_sink) gets a replay's events, the same as the
file sink's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from sinks import registry
from sinks.file_sink import FileSink
from sinks.runtime.base import SinkError
from sinks.runtime.capabilities import Capabilities, capabilities_of
from tests.conftest import require_corpus
from tests.plugin_fixtures import CAPTURE_SINK, install_plugin_packages
from tests.test_endpoints import _replay as replay_sample


def test_builtin_sinks_come_from_entry_points() -> None:
    reg = registry.Registry.discover()
    assert {"file", "sql", "amqp", "dashboard"} <= set(reg.by_name)
    assert reg.factory_for("sqlite:///x.db").name == "sql"
    assert reg.factory_for("postgresql+psycopg2://u@h/db").name == "sql"
    assert reg.factory_for("jdbc:mysql://h/db").name == "sql"
    assert reg.factory_for("amqps://h/x").name == "amqp"
    assert reg.factory_for("file:///x.bp").name == "file"
    assert reg.factory_for("relative.bp").name == "file"
    assert reg.factory_for("-").name == "file"
    assert reg.by_name["sql"].capabilities == Capabilities(
        shares_engine=True, keeps_marks=True, tallies=True, resumes=True, durable_writes=True
    )
    assert reg.by_name["amqp"].capabilities == Capabilities(
        shares_connection=True, resumes=True, durable_writes=True
    )
    assert reg.by_name["dashboard"].capabilities == Capabilities(
        dashboard=True, resumes=True, durable_writes=True
    )
    assert reg.by_name["file"].capabilities == Capabilities()


@pytest.mark.quick
def test_built_sinks_say_where_they_write_in_their_health(tmp_path: Path) -> None:
    """What a replay's "events not delivered to ..." line names (monitord/daemon/undelivered.py):
    each built-in sink's declared destination, relayed by its delivery's health record."""
    from sinks.runtime.delivery import Delivery

    secret = "pw-7b1c"
    run = str(tmp_path)
    shown = {
        f"postgresql://u:{secret}@127.0.0.1:1/db": "postgresql+psycopg2://u:***@127.0.0.1:1/db",
        f"jdbc:mysql://u:{secret}@h:3306/db": "mysql+pymysql://u:***@h:3306/db",
        f"sqlite:///{run}/a.db": f"sqlite:///{run}/a.db",
        "events.bp": str(tmp_path / "events.bp"),
        "-": "stdout",
        f"amqp://u:{secret}@127.0.0.1:1/monitord": "amqp://u@127.0.0.1:1/monitord",
    }
    for dest, want in shown.items():
        sink = registry.build_sink(dest, run_dir=run, restart=False)
        assert Delivery(sink).health().destination == want, dest
    undeclared = SimpleNamespace(name=f"custom://u:{secret}@h")  # named by its name, masked
    assert Delivery(undeclared).health().destination == "custom://u:***@h"  # type: ignore[arg-type]


@pytest.mark.quick
def test_every_field_of_a_request_reaches_the_sink_it_asks_for(tmp_path: Path) -> None:
    """The SQL, dashboard and AMQP factories hand the whole request over (``from_request``)."""
    from sinks.amqp.sink import AMQPSink
    from sinks.runtime.marks import line_one_stream
    from sinks.sql.dashboard import DashboardSink
    from sinks.sql.database import connect_timeout_args
    from sinks.sql.sink import SQLSink

    dest = "postgresql://u@127.0.0.1:1/db"
    run = str(tmp_path)
    props = {"pegasus.catalog.workflow.timeout": "3"}
    sql = registry.build_sink(
        dest, run_dir=run, restart=True, root_wf_uuid="r", pegasus_version="5.1", properties=props
    )
    assert isinstance(sql, SQLSink)
    assert (sql._restart, sql._purge_uuid, sql._pegasus_version) == (True, "r", "5.1")
    assert sql._engine_kw == connect_timeout_args(dest, "3") != {}
    dash = registry.build_dashboard_sink(
        dest, root_wf_uuid="r", db_url="sqlite:///x.db", restart=True, pegasus_version="5.1"
    )
    assert isinstance(dash, DashboardSink)
    assert (dash._root, dash._db_url, dash._restart, dash._pegasus_version) == (
        "r",
        "sqlite:///x.db",
        True,
        "5.1",
    )
    amqp = registry.build_sink(
        "amqp://u@127.0.0.1:1/ex",
        run_dir="run",
        restart=True,
        root_wf_uuid="r",
        properties={"pegasus.catalog.workflow.drain_timeout": "2"},
    )
    assert isinstance(amqp, AMQPSink)
    assert amqp.numbering.stream == line_one_stream("r")  # a restart of root workflow r
    assert amqp.config.drain_timeout == 2.0
    assert amqp.producer.path.startswith(os.path.abspath("run") + os.sep)


def test_built_sinks_carry_their_factorys_capabilities(tmp_path: Path) -> None:
    sql = registry.build_sink(f"sqlite:///{tmp_path}/a.db", run_dir=str(tmp_path), restart=False)
    assert capabilities_of(sql).shares_engine and capabilities_of(sql).keeps_marks
    dash = registry.build_dashboard_sink(
        f"sqlite:///{tmp_path}/w.db",
        root_wf_uuid="u",
        db_url="sqlite:///x.db",
        restart=False,
        pegasus_version=None,
    )
    assert capabilities_of(dash).dashboard
    bp = registry.build_sink("out.bp", run_dir=str(tmp_path), restart=True, encoding="json")
    assert isinstance(bp, FileSink)
    assert (bp.path, bp.encoding, bp.overwrite) == (str(tmp_path / "out.bp"), "json", True)
    assert capabilities_of(bp) == Capabilities()
    url = registry.build_sink("file:///abs/x%20y.bp", run_dir=str(tmp_path), restart=False)
    assert isinstance(url, FileSink) and url.path == "/abs/x y.bp"


@pytest.mark.parametrize("bad", ["bogus://nowhere", "x-tcp://127.0.0.1:1"])
def test_unknown_scheme_names_the_installed_ones(bad: str) -> None:
    with pytest.raises(SinkError) as err:
        registry.build_sink(bad, run_dir=".", restart=False)
    message = str(err.value)
    scheme = bad.split(":")[0]
    assert message.startswith(f"no sink for {scheme}:// destinations; installed: ")
    for known in ("a plain path", "amqp://", "file://", "postgresql://", "sqlite://"):
        assert known in message


def test_a_missing_driver_is_found_before_building() -> None:
    with pytest.raises(SinkError, match="unknown database type|no .* database driver"):
        registry.build_sink("mysql+nosuchdriver://u@h/db", run_dir=".", restart=False)


def test_a_broken_factory_is_left_out_and_a_scheme_keeps_its_first_factory() -> None:
    class Other:
        name = "other"
        schemes: tuple[str, ...] = ("sqlite",)
        capabilities = Capabilities()

        def check(self, request: registry.SinkRequest) -> None: ...

        def build(self, request: registry.SinkRequest) -> FileSink:
            return FileSink(request.dest)

    reg = registry.Registry.discover()
    mixed = registry.Registry([*reg.by_name.values(), Other()])
    assert mixed.factory_for("sqlite:///x.db").name == "sql"
    assert "other" in mixed.by_name


def test_a_pip_installed_sink_gets_what_the_file_sink_gets(tmp_path: Path) -> None:
    """Replay a corpus sample into ``capture://`` (a package monitord does not know) and into
    a JSON event file: the same events, in the same order, with the same attributes."""
    require_corpus()
    install_plugin_packages(CAPTURE_SINK)
    capture, events = tmp_path / "capture.jsonl", tmp_path / "events.json"
    proc = replay_sample(
        tmp_path,
        f"-Dpegasus.catalog.workflow.cap.url=capture://{capture}",
        f"-Dpegasus.catalog.workflow.file.url=file://{events}",
        "--encoding",
        "json",
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    got = [json.loads(line) for line in capture.read_text().splitlines()]
    want = [json.loads(line) for line in events.read_text().splitlines()]
    assert len(got) == len(want) > 50
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert "stampede." + g["event"] == w["event"] or g["event"] == w["event"], i
        wire = {
            k.replace("__", "_").replace(".", "_"): v
            for k, v in g["attrs"].items()
            if v is not None or k not in ("ts", "level")  # the JSON file leaves these out
        }
        expected = {k: v for k, v in w.items() if k != "event"}
        assert set(wire) == set(expected), (i, g["event"])
        for key, value in expected.items():
            assert str(wire[key]) == str(value) or wire[key] == value, (i, key)
