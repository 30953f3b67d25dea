"""Test helpers for event plugins: install the plugin packages, read their journals.

The packages (tests/plugins/contract_plugins, the example under
monitord/examples/plugins, the capture sink of tests/plugins/capture_sink) are pip-installed
once per session into a site directory of the tests' own (:data:`TEST_SITE`, not the user's
``.venv``: ``monitord plugins`` there lists what the user installed).  The directory is put on
``sys.path`` and ``$PYTHONPATH``, so this process and the daemon subprocesses discover the
packages through their entry points exactly as a site's plugins would be.
"""

from __future__ import annotations

import fcntl
import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from monitord.core.readers.bp import parse_bp_line
from sinks.encoding import bp_timestamp, bp_value

PROJECT = Path(__file__).resolve().parents[1]
CONTRACT_PLUGINS = PROJECT / "tests" / "plugins" / "contract_plugins"
EXAMPLE_PLUGIN = PROJECT / "monitord" / "examples" / "plugins" / "job_summary"
# The reference writes "now" as ts for these (no ts in the event itself): not comparable.
TS_FREE = {"stampede.static.start", "stampede.static.end", "stampede.rc.pfn"}

CAPTURE_SINK = PROJECT / "tests" / "plugins" / "capture_sink"
# Where the packages go: beside the project, ignored by git, shared by the xdist workers.
TEST_SITE = Path(os.environ.get("MONITORD_TEST_SITE") or PROJECT / ".test-site")
_installed: set[Path] = set()


def use_test_site() -> None:
    """Make the packages of :data:`TEST_SITE` visible here and to every subprocess started
    with this process's environment (a test setting ``PYTHONPATH`` must keep it)."""
    site = str(TEST_SITE)
    if site not in sys.path:
        sys.path.append(site)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if site not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([*paths, site])
    importlib.invalidate_caches()


def install_plugin_packages(*packages: Path) -> None:
    """pip-install test packages (default: the plugin packages) into :data:`TEST_SITE`, once
    per session each, offline-friendly first, then with build isolation.

    Parallel workers (pytest-xdist) share the directory: they install one at a time, each
    package once per run (recorded in a lock file in it), so that no worker's daemon finds a
    package half-installed by another.
    """
    use_test_site()
    wanted = [p for p in (packages or (CONTRACT_PLUGINS, EXAMPLE_PLUGIN)) if p not in _installed]
    if not wanted:
        return
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    TEST_SITE.mkdir(parents=True, exist_ok=True)
    with open(TEST_SITE / ".installs.lock", "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        lock.seek(0)
        done = {line for line in lock.read().splitlines() if run and line.startswith(run + " ")}
        for package in wanted:
            if f"{run} {package}" not in done:
                _pip_install(package)
                done.add(f"{run} {package}")
            _installed.add(package)
        lock.seek(0)
        lock.truncate()
        lock.write("".join(f"{line}\n" for line in sorted(done)))
    importlib.invalidate_caches()


def _pip_install(package: Path) -> None:
    # without build isolation pip needs setuptools and wheel here; else it fetches them
    local_build = all(importlib.util.find_spec(m) for m in ("setuptools", "wheel"))
    base = [
        *(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade"),
        *("--target", str(TEST_SITE), str(package)),
    ]
    if local_build:
        quick = subprocess.run([*base, "--no-build-isolation"], capture_output=True, text=True)
    if not local_build or quick.returncode != 0:
        full = subprocess.run(base, capture_output=True, text=True)
        assert full.returncode == 0, f"cannot install {package}: {full.stderr[-2000:]}"


def plugin_args(tmp: Path, plugins: dict[str, dict[str, str]]) -> list[str]:
    """``-D`` options enabling each plugin with its settings and a journal in ``tmp``."""
    args = []
    for name, settings in plugins.items():
        prefix = f"pegasus.monitord.plugins.{name}."
        args += [f"-D{prefix}enabled=true", f"-D{prefix}output={tmp / (name + '.jsonl')}"]
        args += [f"-D{prefix}{key}={value}" for key, value in settings.items()]
    return args


def journal(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def events_in(records: Iterable[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(r["event"], r["kw"]) for r in records if r["hook"] == "event"]


def expected_events(bp: Path, prefixes: tuple[str, ...] | None) -> list[dict[str, str]]:
    """The reference's events.bp records, in order, that ``prefixes`` select (None: all)."""
    out = []
    for line in bp.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = parse_bp_line(line)
            if prefixes is None or record["event"].startswith(prefixes):
                out.append(record)
    return out


def payload_differences(
    got: list[tuple[str, dict[str, Any]]], expected: list[dict[str, str]]
) -> list[str]:
    """Where the plugin's (event, kw) sequence differs from the reference's BP records.

    The kw is put back on the wire as the BP writer would (``__`` -> ``.``, values and
    ``ts`` rendered); every attribute must be equal, none missing, none extra.
    """
    problems = []
    if len(got) != len(expected):
        problems.append(f"{len(got)} events, the reference has {len(expected)}")
    for i, ((name, kw), want) in enumerate(zip(got, expected, strict=False)):
        if name != want["event"]:
            problems.append(f"#{i}: {name} where the reference has {want['event']}")
            continue
        wire = {key.replace("__", "."): value for key, value in kw.items()}
        for key, value in want.items():
            if key in ("event", "level") or (key == "ts" and name in TS_FREE):
                continue
            if key not in wire:
                problems.append(f"#{i} {name}: {key} missing")
                continue
            text = bp_timestamp(wire[key]) if key == "ts" else bp_value(wire[key])
            if text.strip('"').replace('\\"', '"') != value:
                problems.append(f"#{i} {name}: {key}={text!r}, reference {value!r}")
        extra = set(wire) - set(want) - {"level"}
        if extra:
            problems.append(f"#{i} {name}: extra attributes {sorted(extra)}")
    return problems[:20]
