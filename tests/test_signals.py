"""SIGUSR1 / SIGUSR2 change the log level of a running daemon (doc §9.2).

One real ``pegasus-monitord`` follows a generated workflow's dagman.out while the test
appends to it: at the default level (INFO) no debug line is logged; after SIGUSR1 the
per-chunk debug lines appear; after SIGUSR2 they stop again.  Plus the level steps
themselves, and that already-used (cached) loggers obey a change.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import structlog

from monitord.system import loglevel
from monitord.tools.synthetic import generate

DEBUG_LINE = "dagman.out lines processed"


def test_steps_follow_the_reference_order_and_stop_at_the_ends() -> None:
    old = loglevel.level()
    try:
        loglevel.set_level(logging.INFO)
        assert loglevel.more_verbose() == logging.DEBUG
        assert loglevel.more_verbose() == loglevel.TRACE
        assert loglevel.more_verbose() == loglevel.TRACE
        assert [loglevel.less_verbose() for _ in range(5)] == [
            logging.DEBUG,
            logging.INFO,
            logging.WARNING,
            logging.ERROR,
            logging.ERROR,
        ]
        assert loglevel.verbosity_level(0) == logging.INFO
        assert loglevel.verbosity_level(1) == logging.DEBUG
        assert loglevel.verbosity_level(3) == loglevel.TRACE
    finally:
        loglevel.set_level(old)


def test_a_cached_logger_obeys_a_later_level_change() -> None:
    old_level, old_config = loglevel.level(), structlog.get_config()
    out = io.StringIO()
    try:
        structlog.configure(
            processors=[loglevel.add_level, structlog.dev.ConsoleRenderer(colors=False)],
            wrapper_class=loglevel.GatedLogger,
            logger_factory=structlog.PrintLoggerFactory(file=out),
            cache_logger_on_first_use=True,
        )
        logger = structlog.get_logger("t")
        loglevel.set_level(logging.INFO)
        logger.debug("hidden-1")
        logger.info("shown-1")
        loglevel.more_verbose()
        logger.debug("shown-2")
        logger.trace("hidden-2")
        loglevel.more_verbose()
        logger.trace("shown-3")
        loglevel.set_level(logging.ERROR)
        logger.warning("hidden-3")
        logger.error("shown-4")
    finally:
        loglevel.set_level(old_level)
        structlog.configure(**old_config)
    text = out.getvalue()
    assert "hidden" not in text, text
    for word in ("shown-1", "shown-2", "shown-3", "shown-4"):
        assert word in text, text
    assert "trace" in text.splitlines()[2]


def _processed(run: Path) -> int:
    try:
        return int((run / "monitord.recover").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _wait_for(predicate, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_sigusr1_and_sigusr2_switch_debug_lines_on_and_off(tmp_path: Path) -> None:
    run = tmp_path / "run"
    gen = generate(run, 12, retry_fraction=0.0, seed=5, name="sig")
    dagman_out = gen.dagman_out
    lines = dagman_out.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) > 150
    dagman_out.write_text("".join(lines[:20]), encoding="utf-8")
    stderr = tmp_path / "daemon.err"
    env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": str(tmp_path)}
    cuts = [20, 50, 80, 110]

    def append(upto: int, start: int) -> None:
        with dagman_out.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[start:upto]))
        _wait_for(lambda: _processed(run) >= upto, f"line {upto} processed")

    def log_text() -> str:
        return stderr.read_text(errors="replace")

    with stderr.open("w") as err:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "monitord.cli", "--no-dashboard", dagman_out.name],
            cwd=run,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        _wait_for(lambda: _processed(run) >= 20, "the daemon to start following")
        append(cuts[1], cuts[0])
        assert DEBUG_LINE not in log_text()  # INFO: no debug lines

        daemon.send_signal(signal.SIGUSR1)
        _wait_for(lambda: "new=DEBUG" in log_text(), "the level change to DEBUG")
        append(cuts[2], cuts[1])
        _wait_for(lambda: DEBUG_LINE in log_text(), "debug lines after SIGUSR1", timeout=10)

        daemon.send_signal(signal.SIGUSR2)
        _wait_for(lambda: "new=INFO" in log_text(), "the level change back to INFO")
        seen = log_text().count(DEBUG_LINE)
        append(cuts[3], cuts[2])
        assert log_text().count(DEBUG_LINE) == seen  # no new debug lines after SIGUSR2

        with dagman_out.open("a", encoding="utf-8") as fh:
            fh.write("".join(lines[cuts[3] :]))
        assert daemon.wait(timeout=60) == 0, log_text()[-3000:]
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
    assert "Traceback" not in log_text()
