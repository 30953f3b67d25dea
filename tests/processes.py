"""Helpers tests share for the programs they start: a self-signed certificate for a TLS
listener, and the stop of a child process (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest


def self_signed_cert(where: Path) -> tuple[Path, Path]:
    """A certificate and key for ``localhost`` (a day), made by openssl (skips without it)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def terminate(proc: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float) -> None:
    """SIGTERM ``proc``; SIGKILL it if it has not ended ``timeout`` seconds later."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
