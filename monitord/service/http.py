"""The service's local HTTP endpoint: /healthz, Prometheus /metrics, /status.json and /status.

Served by aiohttp's low-level server (no application or router: five read-only pages).  The
limits of a daemon's side door: one request per connection (``Connection: close``), request
heads bounded (line length, header count), a deadline to send the head, at most
``MAX_CONNECTIONS`` at once (more are answered 503), and 127.0.0.1 unless the configuration names
another address.  A malformed request is answered (400/431/505) without a traceback in the log.
Every page is built from one :class:`~monitord.service.status.ServiceSnapshot`; /healthz from
:func:`service_health`, /metrics from :mod:`monitord.service.metrics`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import time
from collections.abc import Callable
from typing import Any

import orjson
import structlog
from aiohttp import web
from aiohttp.http import HttpProcessingError, HttpVersion10
from aiohttp.http_exceptions import LineTooLong

from monitord.service.metrics import PROMETHEUS_TYPE, render_metrics
from monitord.service.status import ServiceSnapshot, StatusSource, to_json
from monitord.service.statuspage import STATUS_PAGE_CSP, render_status_page

__all__ = [
    "DEFAULT_HOST",
    "HttpEndpoint",
    "ListenError",
    "parse_listen",
    "render_metrics",
    "service_health",
    "start_http",
]

log = structlog.get_logger(__name__)

DEFAULT_HOST = "127.0.0.1"
MAX_LINE = 8192  # request line or one header line
MAX_HEADERS = 100
REQUEST_TIMEOUT = 10.0  # seconds to send the request head
MAX_CONNECTIONS = 64  # handled at once; more are answered 503 at once

# (ok, details) for /healthz: 200 {"status": "ok", **details} or 503 {"status": "failing", ...}.
HealthCheck = Callable[[ServiceSnapshot], tuple[bool, dict[str, Any]]]


class ListenError(ValueError):
    """A ``listen`` value that is not ``[HOST:]PORT``."""


def parse_listen(listen: str) -> tuple[str, int]:
    """``"127.0.0.1:9175"``, ``"[::1]:9175"``, ``"localhost:9175"`` or ``"9175"`` -> (host, port)."""
    text = listen.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ListenError(f"{listen!r}: write an IPv6 address in brackets, e.g. [::1]:9175")
    try:
        port = int(port_text)
    except ValueError:
        raise ListenError(f"{listen!r}: port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ListenError(f"{listen!r}: port {port} is out of range")
    return host or DEFAULT_HOST, port


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def service_health(snapshot: ServiceSnapshot) -> tuple[bool, dict[str, Any]]:
    """Whether the service is healthy, and what /healthz tells about it: failing (503) while
    any destination is down or disabled, naming each with its state and since when.

    A plugin that is skipped, stuck, not fed or has raised is named (``plugins``) but does not
    fail the check: plugins are optional, the service's own outputs are still delivered."""
    failing = [
        {
            "name": s.name,
            "state": s.state,
            "since": s.since,
            "error": s.last_error,
            "spooled": s.spooled,
            "workflows": s.workflows_not_up,
        }
        for s in snapshot.sinks
        if not s.healthy
    ]
    details: dict[str, Any] = {
        "uptime_seconds": round(max(0.0, time.time() - snapshot.started_at), 3),
        "workflows": len(snapshot.workflows),
        "pid": os.getpid(),
    }
    if failing:
        details["sinks"] = failing
    troubled = [
        {
            "name": p.name,
            "workflow": p.workflow,
            "state": p.state,
            "delivery": p.delivery,
            "errors": p.errors,
            "dropped": p.dropped,
            "error": p.last_error,
        }
        for p in snapshot.plugins
        if not p.healthy
    ]
    if troubled:
        details["plugins"] = troubled
    return not failing, details


class HttpEndpoint(asyncio.AbstractServer):
    """The listening endpoint, usable where an asyncio server is (``sockets``, ``close()``...)."""

    def __init__(self, server: asyncio.Server, web_server: web.Server) -> None:
        self._server = server
        self._web = web_server

    @property
    def sockets(self) -> tuple[Any, ...]:
        return tuple(self._server.sockets)

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._server.get_loop()

    def is_serving(self) -> bool:
        return self._server.is_serving()

    async def start_serving(self) -> None:
        """Serving from the start; nothing to do."""

    async def serve_forever(self) -> None:
        await self._server.serve_forever()

    def close(self) -> None:
        """Stop listening and end the connections once their request is answered."""
        self._server.close()
        self._web.pre_shutdown()

    async def wait_closed(self) -> None:
        await self._web.shutdown(timeout=2.0)
        await self._server.wait_closed()


async def start_http(
    source: StatusSource, listen: str, *, health: HealthCheck = service_health
) -> HttpEndpoint:
    """Serve the status pages of ``source`` on ``listen`` (``[HOST:]PORT``, host 127.0.0.1).

    Port 0 picks a free port (``endpoint.sockets[0].getsockname()``).  Raises
    :class:`ListenError` for a bad ``listen`` and ``OSError`` when the address is taken.
    """
    host, port = parse_listen(listen)
    if not _is_loopback(host):
        log.warning("status endpoint listens beyond this host", host=host, port=port)
    pages = _Pages(source, health)
    web_server = web.Server(pages.handle)
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.BaseProtocol:
        if len(web_server.connections) >= MAX_CONNECTIONS:
            return _Busy()
        return _Protocol(
            web_server,
            loop=loop,
            keepalive_timeout=REQUEST_TIMEOUT,  # also the deadline for a request's head
            max_line_size=MAX_LINE,
            max_field_size=MAX_LINE,
            max_headers=MAX_HEADERS,
            access_log=None,  # type: ignore[arg-type]  # None turns aiohttp's access log off
        )

    server = await loop.create_server(protocol, host, port)
    log.info("status endpoint listening", address=[s.getsockname() for s in server.sockets])
    return HttpEndpoint(server, web_server)


class _Protocol(web.RequestHandler):
    """aiohttp's connection handler, answering a malformed request head without a traceback."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError):
            return super().handle_error(request, status, exc, message)
        too_long = isinstance(exc, LineTooLong) or "too many headers" in exc.message.lower()
        if too_long:
            return _text(431, "request line or header too long, or too many headers")
        return _text(exc.code or 400, "malformed request")


class _Busy(asyncio.Protocol):
    """Answers a connection beyond ``MAX_CONNECTIONS`` with 503 and closes it."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: 5\r\nConnection: close\r\n\r\nbusy\n"
        )
        transport.close()


def _response(
    status: int, content_type: str, body: bytes, extra: dict[str, str] | None = None
) -> web.Response:
    headers = {
        "Content-Type": content_type,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        **(extra or {}),
    }
    response = web.Response(status=status, body=body, headers=headers)
    response.force_close()
    return response


def _text(status: int, text: str, extra: dict[str, str] | None = None) -> web.Response:
    return _response(status, "text/plain; charset=utf-8", f"{text}\n".encode(), extra)


_PAGES = frozenset({"/", "/healthz", "/metrics", "/status.json", "/status"})


class _Pages:
    def __init__(self, source: StatusSource, health: HealthCheck) -> None:
        self.source = source
        self.health = health

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.version < HttpVersion10:
            return _text(400, "malformed request line")
        if request.version.major != 1:
            return _text(505, "only HTTP/1.x is served")
        path = request.path
        if path not in _PAGES:
            return _text(404, "not found")
        if request.method not in ("GET", "HEAD"):
            return _text(405, "method not allowed", {"Allow": "GET, HEAD"})
        if path == "/":
            return _response(302, "text/plain; charset=utf-8", b"", {"Location": "/status"})
        try:
            snapshot = self.source.snapshot()
        except Exception as exc:  # one failed snapshot is an error page, never a dead endpoint
            log.error("status endpoint: snapshot failed", error=str(exc))
            body = orjson.dumps({"status": "error", "error": str(exc)})
            return _response(503 if path == "/healthz" else 500, "application/json", body)
        if path == "/healthz":
            ok, details = self.health(snapshot)
            body = orjson.dumps({"status": "ok" if ok else "failing", **details})
            return _response(200 if ok else 503, "application/json", body)
        if path == "/metrics":
            return _response(200, PROMETHEUS_TYPE, render_metrics(snapshot).encode())
        if path == "/status.json":
            return _response(200, "application/json", to_json(snapshot))
        return _response(
            200,
            "text/html; charset=utf-8",
            render_status_page(snapshot).encode(),
            {"Content-Security-Policy": STATUS_PAGE_CSP},
        )
