"""The service's local HTTP endpoint: /healthz, Prometheus /metrics, /status.json and /status.

A deliberately small HTTP/1.1 server on ``asyncio.start_server`` (no web framework): four
read-only GET pages, one request per connection (``Connection: close``), bounded request
heads and a deadline per request, so a slow or malformed client costs one socket and never an
exception in the service.  It listens on 127.0.0.1 unless the configuration names another
address.  Every page is built from one :class:`~monitord.service.status.ServiceSnapshot`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import time
from urllib.parse import urlsplit

import orjson
import structlog

from monitord.service.metrics import PROMETHEUS_TYPE, render_metrics  # re-exported
from monitord.service.status import StatusSource, to_json
from monitord.service.statuspage import STATUS_PAGE_CSP, render_status_page

log = structlog.get_logger(__name__)

DEFAULT_HOST = "127.0.0.1"
MAX_LINE = 8192  # request line or one header line
MAX_HEADERS = 100
REQUEST_TIMEOUT = 10.0  # seconds to send the request head
MAX_CONNECTIONS = 64  # handled at once; more are answered 503 at once

_REASONS = {
    200: "OK",
    302: "Found",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


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


async def start_http(source: StatusSource, listen: str) -> asyncio.AbstractServer:
    """Serve the status pages of ``source`` on ``listen`` (``[HOST:]PORT``, host 127.0.0.1).

    Port 0 picks a free port (``server.sockets[0].getsockname()``).  Raises
    :class:`ListenError` for a bad ``listen`` and ``OSError`` when the address is taken.
    """
    host, port = parse_listen(listen)
    if not _is_loopback(host):
        log.warning("status endpoint listens beyond this host", host=host, port=port)
    handler = _Handler(source)
    server = await asyncio.start_server(handler.handle, host, port, limit=MAX_LINE)
    log.info("status endpoint listening", address=[s.getsockname() for s in server.sockets])
    return server


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler:
    def __init__(self, source: StatusSource) -> None:
        self.source = source
        self.active = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.active += 1
        try:
            if self.active > MAX_CONNECTIONS:
                await _send(writer, 503, "text/plain; charset=utf-8", b"busy\n", head=False)
                return
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT):
                    method, target = await _read_head(reader)
            except TimeoutError:
                await _send(writer, 408, "text/plain; charset=utf-8", b"timeout\n", head=False)
                return
            except _BadRequest as exc:
                body = f"{exc}\n".encode()
                await _send(writer, exc.status, "text/plain; charset=utf-8", body, head=False)
                return
            except (ConnectionError, asyncio.IncompleteReadError):
                return
            await self._respond(writer, method, target)
        except (ConnectionError, TimeoutError):
            pass
        except Exception:  # noqa: BLE001 - one bad request never stops the endpoint
            log.exception("status endpoint: request failed")
        finally:
            self.active -= 1
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    async def _respond(self, writer: asyncio.StreamWriter, method: str, target: str) -> None:
        head = method == "HEAD"
        path = urlsplit(target).path if "://" in target else target.split("?", 1)[0]
        if path not in _PAGES:
            await _send(writer, 404, "text/plain; charset=utf-8", b"not found\n", head=head)
            return
        if method not in ("GET", "HEAD"):
            await _send(
                writer,
                405,
                "text/plain; charset=utf-8",
                b"method not allowed\n",
                head=False,
                extra={"Allow": "GET, HEAD"},
            )
            return
        if path == "/":
            await _send(
                writer, 302, "text/plain; charset=utf-8", b"", extra={"Location": "/status"}
            )
            return
        try:
            snapshot = self.source.snapshot()
        except Exception as exc:  # noqa: BLE001
            log.error("status endpoint: snapshot failed", error=str(exc))
            body = orjson.dumps({"status": "error", "error": str(exc)})
            await _send(writer, 503 if path == "/healthz" else 500, "application/json", body)
            return
        if path == "/healthz":
            body = orjson.dumps(
                {
                    "status": "ok",
                    "uptime_seconds": round(max(0.0, time.time() - snapshot.started_at), 3),
                    "workflows": len(snapshot.workflows),
                    "pid": os.getpid(),
                }
            )
            await _send(writer, 200, "application/json", body, head=head)
        elif path == "/metrics":
            await _send(writer, 200, PROMETHEUS_TYPE, render_metrics(snapshot).encode(), head=head)
        elif path == "/status.json":
            await _send(writer, 200, "application/json", to_json(snapshot), head=head)
        else:
            await _send(
                writer,
                200,
                "text/html; charset=utf-8",
                render_status_page(snapshot).encode(),
                head=head,
                extra={"Content-Security-Policy": STATUS_PAGE_CSP},
            )


_PAGES = frozenset({"/", "/healthz", "/metrics", "/status.json", "/status"})


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str]:
    """The request line's method and target; the headers are read and ignored (no bodies)."""
    line = await _read_line(reader)
    if not line:
        raise ConnectionError("closed before the request line")
    parts = line.split(" ")
    if len(parts) != 3:
        raise _BadRequest(400, "malformed request line")
    method, target, version = parts
    if not version.startswith("HTTP/1."):
        raise _BadRequest(505, "only HTTP/1.x is served")
    if not method.isalpha() or not method.isupper() or not target:
        raise _BadRequest(400, "malformed request line")
    if not (target.startswith("/") or target.startswith("http://")):
        raise _BadRequest(400, "unsupported request target")
    for _ in range(MAX_HEADERS):
        header = await _read_line(reader)
        if header == "":
            return method, target
        if ":" not in header:
            raise _BadRequest(400, "malformed header line")
    raise _BadRequest(431, "too many header lines")


async def _read_line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readline()
    except (ValueError, asyncio.LimitOverrunError):
        raise _BadRequest(431, "request line or header too long") from None
    if raw and not raw.endswith(b"\n"):
        raise asyncio.IncompleteReadError(raw, None)
    try:
        return raw.decode("ascii").rstrip("\r\n")
    except UnicodeDecodeError:
        raise _BadRequest(400, "non-ASCII request head") from None


async def _send(
    writer: asyncio.StreamWriter,
    status: int,
    content_type: str,
    body: bytes,
    *,
    head: bool = False,
    extra: dict[str, str] | None = None,
) -> None:
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "X-Content-Type-Options: nosniff",
        "Connection: close",
    ]
    lines.extend(f"{k}: {v}" for k, v in (extra or {}).items())
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
    if not head:
        writer.write(body)
    await writer.drain()
