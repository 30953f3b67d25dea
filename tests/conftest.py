"""Shared fixtures: where ../shared is, and the time zone the corpus was recorded in."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.otlp_fixtures import Receiver

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
CORPUS = SHARED / "corpus"
STAMPEDE_DIFF = SHARED / "tools" / "stampede-diff"
CORPUS_TZ = "America/Los_Angeles"
CASES = PROJECT / "tests" / "data" / "cases"

# Generated cases where monitord keeps more than the reference (README, Differences from the
# reference): compared by kind of difference (tests/differential.py), not for equality.
KEPT_DIFFERENCES: dict[str, str] = {
    "degraded_submit_dir": "jobs without .sub/kickstart: the reference's loader fails "
    "(NOT NULL invocation.transformation) and leaves job-instance columns NULL; stderr from "
    ".err without a .sub; host values read from a cut kickstart record",
}


def exact_case(case: Path) -> bool:
    """A case whose outputs equal the reference's: no kept differences, no fatal end."""
    return case.name not in KEPT_DIFFERENCES and not (case / "expected" / "returncode").exists()


def corpus_samples() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(p.name for p in CORPUS.iterdir() if (p / "input").is_dir())


@pytest.fixture(autouse=True)
def _logging_as_configured():
    """A command run in-process (``main([...])``) reconfigures logging and may leave the level
    at ERROR (``-q``): each test starts from the configuration and level it found, and loggers
    are not cached, so ``capture_logs`` sees every line whatever ran before on the worker."""
    import structlog

    from monitord.system import loglevel, logs

    logs.CACHE_LOGGERS = False
    level, config = loglevel.level(), structlog.get_config()
    try:
        yield
    finally:
        loglevel.set_level(level)
        structlog.configure(**config)


@pytest.fixture
def receiver_off(tmp_path: Path) -> Iterator[Receiver]:
    """The OTLP receiver process (tests/otlp_fixtures.py), not started yet; stopped after."""
    from tests.otlp_fixtures import Receiver

    rec = Receiver(tmp_path / "received.jsonl")
    yield rec
    rec.stop()


@pytest.fixture
def receiver(receiver_off: Receiver) -> Receiver:
    """The OTLP receiver process, listening."""
    receiver_off.start()
    return receiver_off


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A new, empty database on the PostgreSQL test server (skipped without one), dropped
    after the test."""
    import uuid

    from sqlalchemy.engine import make_url

    from tests.servers import create_database, drop_database, require_server

    base = require_server("postgres")
    name = f"{make_url(base).database}_t{uuid.uuid4().hex[:8]}"
    url = create_database(base, name)
    try:
        yield url
    finally:
        drop_database(base, name)


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of each collection started while the test runs (tests of the collector
    pauses: tests/test_system_collector.py, tests/test_child_collector.py)."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


@pytest.fixture
def corpus_tz():
    """Run the test in the corpus's time zone (dagman.out times are local)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = CORPUS_TZ
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run the test in UTC (a module's ``pytestmark = pytest.mark.usefixtures("utc")``)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def copy_submit_dir(src: Path, dest: Path) -> Path:
    """A writable copy of a (read-only) submit directory; returns its dagman.out."""
    import shutil

    shutil.copytree(src, dest, symlinks=True)
    for path in (dest, *dest.rglob("*")):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    return next(dest.glob("*.dag.dagman.out"))


def replay_copy(
    src: Path, tmp_path: Path, *args: str, timeout: int = 300, returncode: int = 0
) -> Path:
    """Copy submit dir ``src`` to ``tmp_path/run`` (once) and replay it with the CLI.

    Options in ``args`` come before ``-r`` (so ``-D`` properties stay first); the replay runs
    in the corpus time zone with ``tmp_path/home`` as HOME, must exit with ``returncode`` (0)
    without a traceback.
    """
    import subprocess
    import sys

    run = tmp_path / "run"
    if not run.exists():
        copy_submit_dir(src, run)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    dagman_out = next(run.glob("*.dag.dagman.out"))
    env = {**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "monitord.cli", *args, "-r", dagman_out.name],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == returncode, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return run


def require_corpus() -> None:
    if not CORPUS.is_dir() or not STAMPEDE_DIFF.exists():
        pytest.skip(
            f"conformance corpus not available: {CORPUS} (../shared beside the project) is absent"
        )


# --- the quick set (`scripts/test.sh --quick` = `pytest -m quick`) ----------------------------
# Pure unit tests (in-process, no servers, no live following, no sleeping) and the conformance
# replays (corpus and the project's own cases).  A module joins by being named here; one test
# of another module by `@pytest.mark.quick`.  Everything runs in the full suite either way.
QUICK_MODULES = frozenset(
    {
        "test_catalogue",
        "test_conformance_cases",
        "test_conformance_corpus",
        "test_daemon_config",
        "test_dagman_lines",
        "test_default_db",
        "test_encoding",
        "test_events",
        "test_file_sink",
        "test_function_length",
        "test_generated",
        "test_jobcounts",
        "test_jobfiles",
        "test_jobstate_log",
        "test_ingest_units",
        "test_jobtext",
        "test_layers",
        "test_monitor_parts",
        "test_notify_grammar",
        "test_notify_matching",
        "test_otlp_docs",
        "test_otlp_model",
        "test_properties",
        "test_quoting",
        "test_readers_braindump",
        "test_readers_dagfile",
        "test_readers_errfile",
        "test_readers_kickstart",
        "test_readers_kickstart_fast",
        "test_readers_staticbp",
        "test_readers_subfile",
        "test_resume",
        "test_service_config",
        "test_service_http",
        "test_sql_database",
        "test_sql_loader",
        "test_state_machine",
        "test_statefiles",
        "test_status_cli",
        "test_synthetic",
    }
)


# --- running in parallel (scripts/test.sh: pytest-xdist, ``-n N --dist loadfile``) ------------
# A test that stops or restarts a shared server (tests/servers.py ``service``) is marked
# ``serial``: scripts/test.sh runs the others in parallel first, then these one at a time, alone
# (beside other work their players and restarts slow down past what the daemons tolerate).
# A module joins by being named here, one test by ``@pytest.mark.serial``.
SERIAL_MODULES = frozenset({"test_service_outage"})
# Under xdist each module is one unit of work, run by one worker (so its module-scoped fixtures,
# replays and the oracle's sides, are made once); the longest go first (scripts/test.sh passes
# --no-loadscope-reorder), so that none is left to run alone at the end.  Order only: a module
# not named here keeps its place after these.
LONGEST_FIRST = (
    "test_db_contention",
    "test_replay_interrupt",
    "test_lifecycle",
    "test_dashboard_live_contention",
    "test_ingest_site",
    "test_ingest",
    "test_service_restart",
    "test_real_clients",
    "test_sql_servers",
    "test_ingest_exactly_once",
    "test_plugins_daemon",
    "test_follow_played",
    "test_conformance_cases",
    "test_follow_live",
    "test_amqp_connection",
    "test_differential_fuzz",
    "test_sink_spool",
    "test_amqp_broker",
    "test_endpoints",
    "test_otlp_phoenix",
    "test_otlp_golden",
    "test_otlp_follow",
    "test_otlp_outage",  # ~75 s, most of it the receiver's outage (MONITORD_OTLP_OUTAGE)
    "test_otlp_service",
    "test_otlp_service_restart",
)


def _module_name(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    return module.__name__.rsplit(".", 1)[-1] if module is not None else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = _module_name(item)
        if name in QUICK_MODULES:
            item.add_marker(pytest.mark.quick)
        if name in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(_module_name(item), len(rank)))
