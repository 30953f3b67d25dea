"""sd_notify, the watchdog and LISTEN_FDS against real sockets, as systemd would provide them."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import uuid

import pytest

from monitord.service.sdnotify import listen_fds, sd_notify, watchdog_interval, watchdog_loop
from tests.conftest import PROJECT


@pytest.fixture
def notify_path(tmp_path, monkeypatch):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    yield sock
    sock.close()


def test_notify_to_a_path_socket(notify_path):
    assert sd_notify("READY=1\nSTATUS=following 3 workflows")
    assert notify_path.recv(4096) == b"READY=1\nSTATUS=following 3 workflows"


def test_notify_to_an_abstract_socket(monkeypatch):
    name = f"monitord-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
    try:
        assert sd_notify("STOPPING=1")
        assert sock.recv(4096) == b"STOPPING=1"
    finally:
        sock.close()


def test_notify_without_systemd(monkeypatch, tmp_path):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sd_notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    assert sd_notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")
    assert sd_notify("READY=1") is False


def test_watchdog_interval(monkeypatch):
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    assert watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_USEC", "soon")
    assert watchdog_interval() is None


async def test_watchdog_loop_pings_until_stopped(notify_path, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "100000")  # a ping every 0.05 s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    notify_path.setblocking(False)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    task = asyncio.create_task(watchdog_loop(stop))
    pings = [await asyncio.wait_for(loop.sock_recv(notify_path, 64), 5) for _ in range(3)]
    stop.set()
    await asyncio.wait_for(task, 5)
    assert pings == [b"WATCHDOG=1"] * 3
    with pytest.raises(BlockingIOError):  # nothing after the stop
        await asyncio.sleep(0.15)
        notify_path.recv(64)


async def test_watchdog_loop_withholds_pings_when_unhealthy(notify_path, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "100000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    notify_path.setblocking(False)
    asked = []

    def healthy() -> bool:
        asked.append(1)
        return len(asked) > 2  # the first two checks fail

    stop = asyncio.Event()
    task = asyncio.create_task(watchdog_loop(stop, healthy))
    ping = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(notify_path, 64), 5)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert ping == b"WATCHDOG=1"
    assert len(asked) >= 3


async def test_watchdog_loop_returns_without_watchdog(monkeypatch):
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    await asyncio.wait_for(watchdog_loop(asyncio.Event()), 1)


_CHILD = """
import json, os, socket, sys
os.dup2(int(sys.argv[1]), 3)
os.dup2(int(sys.argv[2]), 4)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="2", LISTEN_FDNAMES="attach:http")
from monitord.service.sdnotify import listen_fds
got = listen_fds()
socks = [socket.socket(fileno=fd) for fd, _ in got]
print(json.dumps({
    "got": got,
    "addresses": [s.getsockname() if s.family == socket.AF_UNIX else s.getsockname()[1]
                  for s in socks],
    "inheritable": [os.get_inheritable(fd) for fd, _ in got],
    "env_left": [k for k in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES") if k in os.environ],
}))
"""


def test_listen_fds_takes_what_systemd_passes(tmp_path):
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(tmp_path / "attach.sock"))
    unix.listen()
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(unix.fileno()), str(tcp.fileno())],
            pass_fds=(unix.fileno(), tcp.fileno()),
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["got"] == [[3, "attach"], [4, "http"]]
        assert doc["addresses"] == [str(tmp_path / "attach.sock"), tcp.getsockname()[1]]
        assert doc["inheritable"] == [False, False]
        assert doc["env_left"] == []
    finally:
        unix.close()
        tcp.close()


def test_listen_fds_meant_for_another_process(monkeypatch):
    monkeypatch.setenv("LISTEN_PID", str(os.getpid() + 1))
    monkeypatch.setenv("LISTEN_FDS", "1")
    assert listen_fds(unset_environment=False) == []
    assert os.environ["LISTEN_FDS"] == "1"
    monkeypatch.delenv("LISTEN_PID")
    assert listen_fds() == []
    assert "LISTEN_FDS" not in os.environ
