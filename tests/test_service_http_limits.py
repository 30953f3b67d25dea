"""The endpoint's limits on aiohttp: connections at once, the deadline for a request head, and
a health check that can say "failing"."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from monitord.service import http
from monitord.service.status import ServiceSnapshot

pytestmark = pytest.mark.quick


class Source:
    def snapshot(self) -> ServiceSnapshot:
        return ServiceSnapshot(started_at=time.time() - 5)


async def get(port: int, path: str) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    data = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


async def test_connections_beyond_the_limit_get_503(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_CONNECTIONS", 3)
    srv = await http.start_http(Source(), "127.0.0.1:0")
    port = srv.sockets[0].getsockname()[1]
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
    try:
        await asyncio.sleep(0.1)  # the server has accepted them
        status, body = await get(port, "/healthz")
        assert (status, body) == (503, b"busy\n")
    finally:
        for _, writer in idle:
            writer.close()
    await asyncio.sleep(0.1)
    status, _ = await get(port, "/healthz")
    assert status == 200
    srv.close()
    await srv.wait_closed()


async def test_a_request_head_has_a_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "REQUEST_TIMEOUT", 0.5)
    srv = await http.start_http(Source(), "127.0.0.1:0")
    port = srv.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
    started = time.monotonic()
    assert await asyncio.wait_for(reader.read(), timeout=10) == b""  # closed by the server
    assert time.monotonic() - started < 5
    writer.close()
    srv.close()
    await srv.wait_closed()


async def test_health_check_decides_the_status() -> None:
    def failing(snapshot: ServiceSnapshot) -> tuple[bool, dict]:
        return False, {"sinks": {"db": "down since 12:00"}}

    srv = await http.start_http(Source(), "127.0.0.1:0", health=failing)
    port = srv.sockets[0].getsockname()[1]
    status, body = await get(port, "/healthz")
    assert status == 503
    assert orjson.loads(body) == {"status": "failing", "sinks": {"db": "down since 12:00"}}
    srv.close()
    await srv.wait_closed()
