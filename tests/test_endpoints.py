"""Several event destinations at once (behaviour doc §6.4, §10).

The precedence rules below were observed by running the reference 5.1.3 on a corpus sample
with file endpoints: ``-d`` beats ``pegasus.catalog.workflow.url``, which beats
``pegasus.monitord.output``; every ``pegasus.catalog.workflow.<name>.url`` (dotted names too)
is added to that default; an empty URL adds nothing; a failing endpoint leaves the others alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from monitord.cli import destinations
from sinks.registry import endpoint_property
from sinks.sql.database import connect_timeout_args
from tests.conftest import (
    CORPUS,
    CORPUS_TZ,
    STAMPEDE_DIFF,
    copy_submit_dir,
    replay_copy,
    require_corpus,
)
from tests.dbcopy import copy_to_sqlite
from tests.servers import create_database, drop_database, require_server

URL = "pegasus.catalog.workflow.url"
OUTPUT = "pegasus.monitord.output"
SAMPLE = "hierarchical_wf_success"
#: a sample whose replay logs no error of its own, for counting the sink's error lines
QUIET_SAMPLE = "process_wf_success"
#: wall-clock timestamps of the reference's run (as in test_conformance_corpus)
BP_IGNORE = "stampede.static.start:ts,stampede.static.end:ts,stampede.rc.pfn:ts"


def dests(dest: str | None = None, **props: str) -> list[str | None]:
    return destinations(
        argparse.Namespace(dest=dest), {k.replace("__", "."): v for k, v in props.items()}
    )


def test_dest_beats_catalog_url() -> None:
    assert dests("file:///d.bp", **{URL: "file:///u.bp"}) == ["file:///d.bp"]


def test_catalog_url_beats_monitord_output() -> None:
    assert dests(**{URL: "file:///u.bp", OUTPUT: "file:///o.bp"}) == ["file:///u.bp"]
    assert dests(**{OUTPUT: "file:///o.bp"}) == ["file:///o.bp"]


def test_named_endpoints_are_added_to_the_default() -> None:
    named = {"pegasus.catalog.workflow.x.url": "file:///x.bp"}
    assert dests(**named) == [None, "file:///x.bp"]  # None: the default SQLite DB
    assert dests("file:///d.bp", **named) == ["file:///d.bp", "file:///x.bp"]
    assert dests(**named, **{OUTPUT: "file:///o.bp"}) == ["file:///o.bp", "file:///x.bp"]
    assert dests(**{"pegasus.catalog.workflow.a.b.url": "file:///ab.bp"}) == [None, "file:///ab.bp"]


def test_empty_endpoint_url_adds_nothing() -> None:
    assert dests(**{"pegasus.catalog.workflow.x.url": ""}) == [None]


def test_endpoint_properties() -> None:
    props = {
        "pegasus.catalog.workflow.db.url": "mysql://h/x",
        "pegasus.catalog.workflow.db.timeout": "7",
        "pegasus.catalog.workflow.timeout": "3",
        "pegasus.catalog.*.timeout": "11",
    }
    assert endpoint_property(props, "mysql://h/x", "timeout") == "7"
    assert endpoint_property(props, "postgresql://h/y", "timeout") == "3"  # the default one
    del props["pegasus.catalog.workflow.timeout"]
    assert endpoint_property(props, "postgresql://h/y", "timeout") == "11"
    assert connect_timeout_args("mysql://h/x", "7") == {"connect_args": {"connect_timeout": 7}}
    assert connect_timeout_args("sqlite:///x.db", "2.5") == {"connect_args": {"timeout": 2.5}}
    assert connect_timeout_args("mysql://h/x", "soon") is None


def _diff(expected: Path, actual: Path, *args: str) -> None:
    result = subprocess.run(
        [sys.executable, str(STAMPEDE_DIFF), *args, str(expected), str(actual)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _replay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Like ``replay_copy`` but returning the output, whatever the outcome."""
    run = tmp_path / "run"
    dagman_out = copy_submit_dir(CORPUS / QUIET_SAMPLE / "input", run)
    (tmp_path / "home").mkdir()
    return subprocess.run(
        [sys.executable, "-m", "monitord.cli", *args, "--no-dashboard", "-r", dagman_out.name],
        cwd=run,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_all_endpoints_fed_at_once(tmp_path: Path) -> None:
    """Default DB from the catalog URL, a named BP file and a relative one: all complete."""
    require_corpus()
    expected = CORPUS / SAMPLE / "expected"
    replay_copy(
        CORPUS / SAMPLE / "input",
        tmp_path,
        f"-D{URL}=sqlite:///{tmp_path}/main.db",
        f"-Dpegasus.catalog.workflow.bp.url=file://{tmp_path}/events.bp",
        "-Dpegasus.catalog.workflow.rel.url=relative.bp",
        "--no-dashboard",
    )
    _diff(expected / "stampede.db", tmp_path / "main.db")
    _diff(expected / "events.bp", tmp_path / "events.bp", "--bp", "--ignore", BP_IGNORE)
    _diff(expected / "events.bp", tmp_path / "run" / "relative.bp", "--bp", "--ignore", BP_IGNORE)


def test_failing_endpoint_leaves_the_others_complete(tmp_path: Path) -> None:
    """An unreachable server (password in its URL) next to two good endpoints."""
    require_corpus()
    secret = "S3cretPassw0rd"
    proc = _replay(
        tmp_path,
        f"-Dpegasus.catalog.workflow.good.url=sqlite:///{tmp_path}/good.db",
        f"-Dpegasus.catalog.workflow.bp.url=file://{tmp_path}/events.bp",
        "-d",
        f"postgresql://monitord:{secret}@127.0.0.1:1/nowhere",
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "Traceback" not in output
    assert secret not in output
    failures = [line for line in output.splitlines() if "[error" in line]
    assert len(failures) == 1, output[-3000:]
    assert "cannot create events output" in failures[0] and "127.0.0.1:1" in failures[0]
    expected = CORPUS / QUIET_SAMPLE / "expected"
    _diff(expected / "stampede.db", tmp_path / "good.db")
    _diff(expected / "events.bp", tmp_path / "events.bp", "--bp", "--ignore", BP_IGNORE)


def test_two_servers_and_sqlite_at_once(tmp_path: Path) -> None:
    """PostgreSQL, MariaDB and a SQLite file as three endpoints of one daemon."""
    require_corpus()
    pg_base, my_base = require_server("postgres"), require_server("mysql")
    names = {base: f"{base.rsplit('/', 1)[1]}_endpoints" for base in (pg_base, my_base)}
    pg, my = (create_database(base, name) for base, name in names.items())
    try:
        replay_copy(
            CORPUS / SAMPLE / "input",
            tmp_path,
            f"-Dpegasus.catalog.workflow.pg.url={pg}",
            f"-Dpegasus.catalog.workflow.my.url={my}",
            "-d",
            f"sqlite:///{tmp_path}/local.db",
            "--no-dashboard",
        )
        expected = CORPUS / SAMPLE / "expected" / "stampede.db"
        _diff(expected, tmp_path / "local.db")
        for label, url in (("pg", pg), ("my", my)):
            copy_to_sqlite(url, tmp_path / f"{label}.db", expected)
            _diff(expected, tmp_path / f"{label}.db")
    finally:
        for base, name in names.items():
            drop_database(base, name)


@pytest.mark.parametrize("bad", ["bogus://nowhere", "x-tcp://127.0.0.1:1"])
def test_unsupported_destination_is_one_line(tmp_path: Path, bad: str) -> None:
    require_corpus()
    proc = _replay(
        tmp_path, f"-Dpegasus.catalog.workflow.good.url=sqlite:///{tmp_path}/good.db", "-d", bad
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "Traceback" not in output
    assert len([line for line in output.splitlines() if "[error" in line]) == 1, output[-3000:]
    _diff(CORPUS / QUIET_SAMPLE / "expected" / "stampede.db", tmp_path / "good.db")
