"""The systemd units pass ``systemd-analyze verify`` and keep the settings the service relies on.

``verify`` needs ExecStart= binaries to exist, so it checks copies whose ExecStart= points at
this virtualenv's ``monitord``.  Some problems (unknown keys, bad values) only produce warnings
with exit status 0, so any diagnostic naming one of our units is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT

UNITS = PROJECT / "systemd"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def need_systemd_analyze() -> str:
    if SYSTEMD_ANALYZE:
        return SYSTEMD_ANALYZE
    reason = (
        "systemd-analyze not installed (Debian package `systemd`; scripts/install-test-tools.sh)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " but CI=true")
    pytest.skip(reason)


def venv_monitord() -> Path:
    path = Path(sys.executable).parent / "monitord"
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} missing: install the project in the virtualenv (scripts/setup.sh)")
    return path


def copy_units(dest: Path) -> None:
    for unit in UNITS.iterdir():
        if unit.suffix in (".service", ".socket"):
            text = unit.read_text().replace("/usr/bin/monitord", str(venv_monitord()))
            (dest / unit.name).write_text(text)


def verify(directory: Path, *names: str) -> list[str]:
    """Diagnostics of ``systemd-analyze verify`` about our units (empty when clean)."""
    tool = need_systemd_analyze()
    proc = subprocess.run(
        [tool, "verify", *(str(directory / n) for n in names)],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_PAGER": ""},
    )
    ours = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if str(directory) in line or "monitord" in line
    ]
    if proc.returncode != 0 and not ours:
        ours = [f"exit status {proc.returncode}: {proc.stderr.strip()}"]
    return ours


def unit_settings(path: Path) -> dict[str, list[str]]:
    """``Section.Key`` -> values in order (keys may repeat)."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        settings.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return settings


def test_units_verify(tmp_path):
    copy_units(tmp_path)
    assert verify(tmp_path, "monitord.service", "monitord.socket") == []
    assert verify(tmp_path, "monitord@.service") == []
    shutil.copy(tmp_path / "monitord@.service", tmp_path / "monitord@alice.service")
    assert verify(tmp_path, "monitord@alice.service") == []
    assert verify(tmp_path, "monitord-ingest.service") == []


def test_verify_check_catches_mistakes(tmp_path):
    """The check above is not blind: a misspelt key and a bad value are reported."""
    copy_units(tmp_path)
    unit = tmp_path / "monitord.service"
    unit.write_text(
        unit.read_text()
        .replace("Type=notify", "Typ=notify")
        .replace("ProtectSystem=strict", "ProtectSystem=strictly")
    )
    problems = verify(tmp_path, "monitord.service")
    assert any("Typ" in p for p in problems), problems
    assert any("strictly" in p for p in problems), problems


@pytest.mark.parametrize("name", ["monitord.service", "monitord@.service"])
def test_service_settings(name):
    s = unit_settings(UNITS / name)
    assert s["Service.Type"] == ["notify"]
    assert s["Service.NotifyAccess"] == ["main"]
    assert int(s["Service.WatchdogSec"][0]) >= 10
    assert s["Service.Restart"] == ["on-failure"]
    assert s["Service.ExecStart"][0].startswith("/usr/bin/monitord serve --config /etc/monitord/")
    for key in (
        "NoNewPrivileges",
        "PrivateTmp",
        "ProtectKernelTunables",
        "ProtectKernelModules",
        "ProtectControlGroups",
        "LockPersonality",
        "MemoryDenyWriteExecute",
        "RestrictSUIDSGID",
    ):
        assert s[f"Service.{key}"] == ["yes"], key
    assert s["Service.RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
    assert s["Service.SystemCallFilter"][0] == "@system-service"
    assert s["Service.ProtectSystem"][0] in ("strict", "full")


def test_root_service_writes_only_where_workflows_live():
    s = unit_settings(UNITS / "monitord.service")
    assert s["Service.ProtectSystem"] == ["strict"]
    assert s["Service.ProtectHome"] == ["read-only"]
    assert "-/home" in s["Service.ReadWritePaths"]
    caps = set(s["Service.CapabilityBoundingSet"][0].split())
    assert "CAP_SYS_ADMIN" not in caps and "CAP_SETUID" in caps
    assert s["Unit.Requires"] == ["monitord.socket"]


def test_socket_passes_the_attach_socket_by_name():
    s = unit_settings(UNITS / "monitord.socket")
    assert s["Socket.ListenStream"][0].startswith("/")
    assert s["Socket.FileDescriptorName"] == ["attach"]
    assert s["Socket.Service"] == ["monitord.service"]
