"""A small workflow's replay pays only for what it uses (issue 30: start-up counts, since
pegasus-run starts one daemon per workflow).

A 10-job replay into the default SQLite database runs in a fresh interpreter, through the
command line, and reports what it imported: none of the packages a replay into SQLite never
uses may be among them (each cost start-up CPU in some earlier version: rich through
structlog, the MySQL and PostgreSQL dialects through the schema's table options, the AMQP,
OTLP, HTTP and metrics libraries through the sinks and the service).  Run as the program,
a replay freezes its start-up state out of the cyclic collector's reach and exits without the
interpreter's teardown, with every row written (``monitord/cli/startup.py``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from monitord.cli import startup
from monitord.tools.synthetic import generate
from tests.collector_check import collector_after

# a replay into SQLite needs none of these (module -> what pulled it in before)
UNUSED = {
    "rich": "structlog's traceback renderer (monitord/__init__.py hides it)",
    "pygments": "rich's tracebacks",
    "attr": "rich.pretty, through structlog.tracebacks",
    "aio_pika": "the AMQP sink",
    "aiohttp": "the service's status page",
    "prometheus_client": "the service's metrics",
    "pydantic": "the service's configuration",
    "opentelemetry": "the OTLP sink",
    "notifications": "the .notify scripts' runner (monitord/daemon/notifying.py)",
    "sinks.runtime.process_sink": "a large replay's SQL child (monitord/daemon/prestart.py)",
    "sinks.runtime.crossing": "the batches' crossing to that child",
    "monitord.daemon.readahead": "a large replay's read-ahead worker",
}

REPLAY = r"""
import json, sys
from monitord.cli import main
status = main(["replay", "-q", "--no-dashboard", sys.argv[1]])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _replay_modules(tmp_path: Path) -> tuple[int, set[str]]:
    gen = generate(tmp_path / "wf", jobs=10, seed=1)
    env = {**os.environ, "HOME": str(tmp_path), "TZ": "UTC"}
    proc = subprocess.run(
        [sys.executable, "-c", REPLAY, str(gen.dagman_out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    return seen["status"], set(seen["modules"])


def test_a_small_replay_into_sqlite_imports_none_of_what_it_does_not_use(tmp_path: Path) -> None:
    status, modules = _replay_modules(tmp_path)
    assert status == 0
    assert "sqlalchemy" in modules and "structlog" in modules  # what it does use
    loaded = {m: why for m, why in UNUSED.items() if m in modules}
    assert not loaded, f"a replay into SQLite imported {loaded}"


AS_PROGRAM = r"""
import atexit, runpy, sys
atexit.register(lambda: print("interpreter teardown", file=sys.stderr))
sys.argv = ["monitord", "replay", "-q", "--no-dashboard", sys.argv[1]]
runpy.run_module("monitord.cli", run_name="__main__")
"""

IN_PROCESS = r"""
import atexit, gc, sys
atexit.register(lambda: print("interpreter teardown", file=sys.stderr))
from monitord.cli import main
status = main(["replay", "-q", "--no-dashboard", sys.argv[1]])
print("frozen", gc.get_freeze_count(), file=sys.stderr)
sys.exit(status)
"""


def _rows(db: Path) -> dict[str, list[str]]:
    """Every table's rows (the version row's creation time left out)."""
    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("select name from sqlite_master where type='table'")]
        return {
            name: sorted(map(repr, conn.execute(f'select * from "{name}"')))
            for name in names
            if name != "dbversion"
        }


def _database(dagman_out: Path) -> Path:
    return dagman_out.with_name(dagman_out.name.removesuffix(".dag.dagman.out") + ".stampede.db")


def _run(code: str, dagman_out: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "TZ": "UTC"}
    return subprocess.run(
        [sys.executable, "-c", code, str(dagman_out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_program_skips_the_teardown_and_writes_every_row(tmp_path: Path) -> None:
    """After a replay the program exits at once (no interpreter teardown: atexit never runs);
    its database has the same rows as an in-process replay's, which tears down as usual and
    leaves the collector unfrozen (``monitord/cli/startup.py``)."""
    gen = generate(tmp_path / "wf", jobs=10, seed=1)
    ended = _run(AS_PROGRAM, gen.dagman_out, tmp_path)
    assert ended.returncode == 0, ended.stderr[-3000:]
    assert "interpreter teardown" not in ended.stderr
    ours = _rows(_database(gen.dagman_out))
    usual = _run(IN_PROCESS, gen.dagman_out, tmp_path)  # a replay starts its outputs over
    assert usual.returncode == 0, usual.stderr[-3000:]
    assert "interpreter teardown" in usual.stderr and "frozen 0" in usual.stderr
    theirs = _rows(_database(gen.dagman_out))
    assert ours["job_instance"] and ours == theirs


def test_settle_freezes_the_start_up_state_of_the_program_only() -> None:
    """And raises the collector's young threshold, in the program only; a run whose daemon
    builds a SQL sink (here: the default database, in a thread) has SQLAlchemy frozen too."""
    code = (
        "from monitord.cli import startup\n"
        "from monitord.daemon.config import MonitorConfig\n"
        "config = MonitorConfig('x.dagman.out', sql_process=False)\n"
        "startup.settle(config)\n"
        "print(gc.get_freeze_count(), gc.get_threshold()[0])\n"
        "startup.as_program()\n"
        "startup.settle(config)\n"
        "print('sqlalchemy' in sys.modules)"
    )
    settled = collector_after(code)
    assert settled.printed == ["0 700", "True"]  # not the program: nothing settled
    assert settled.frozen > 10_000 and settled.threshold == [startup.YOUNG, 10, 10]


# Ctrl-C at the moment the program loads SQLAlchemy (the sinks' factories: a second or more on a
# busy machine, before the run installs its own handler): a real SIGINT, sent from an import
# hook so that it lands in that window every time.
SIGINT_WHILE_LOADING_SINKS = """
import importlib.abc, os, signal, sys

class _CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "sqlalchemy":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _CtrlC())
sys.argv[1:1] = {prefix!r}
from monitord.cli import {entry}
sys.exit({entry}())
"""


@pytest.mark.parametrize(
    ("entry", "prefix"),
    [("main", ["replay"]), ("main", ["follow"]), ("pegasus_main", ["-r"])],
)
def test_ctrl_c_while_the_sinks_load_is_one_line_and_writes_nothing(
    tmp_path: Path, entry: str, prefix: list[str]
) -> None:
    """Interrupted before its run began, the program says so in one line with SIGINT's
    status (130), no traceback, and leaves no database or jobstate.log behind."""
    gen = generate(tmp_path / "wf", jobs=10, seed=1)
    code = SIGINT_WHILE_LOADING_SINKS.format(prefix=prefix, entry=entry)
    ended = _run(code, gen.dagman_out, tmp_path)
    assert ended.returncode == 130, ended.stderr[-3000:]
    assert "Traceback" not in ended.stderr, ended.stderr[-3000:]
    lines = ended.stderr.strip().splitlines()
    assert len(lines) == 1 and "interrupted before the run started" in lines[0], ended.stderr
    assert not _database(gen.dagman_out).exists()
    assert not (gen.dagman_out.parent / "jobstate.log").exists()


# Collections the cyclic collector starts while the command loads its modules and its sinks'.
COLLECTIONS_WHILE_LOADING = """
import gc
started = [0]
gc.callbacks.append(lambda phase, info: started.__setitem__(0, started[0] + (phase == "start")))
import monitord.cli
from sinks.registry import installed
installed()  # the sinks' factories, as the command line's checks load them
print(started[0], gc.isenabled())
"""


def test_the_program_loads_its_modules_with_the_collector_paused() -> None:
    """Loading the command's modules and the sinks' makes no garbage: the collector is paused
    meanwhile (``monitord/system/collector.py``; 137 collections before, ~7 % of the start-up
    CPU), and running again after."""
    proc = subprocess.run(
        [sys.executable, "-c", COLLECTIONS_WHILE_LOADING],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    collections, enabled = proc.stdout.split()
    assert int(collections) <= 5 and enabled == "True", proc.stdout
