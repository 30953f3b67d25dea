"""``/healthz`` and ``/metrics`` of the ingest: a small aiohttp app (the service's endpoint
lives in monitord.service, a sibling layer the ingest does not import)."""

from __future__ import annotations

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from monitord.ingest.metrics import IngestStats, registry


def parse_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"listen {listen!r} is not host:port")
    return host.strip("[]"), int(port)


def make_app(stats: IngestStats) -> web.Application:
    reg = registry(stats)

    async def healthz(_request: web.Request) -> web.Response:
        ok, doc = stats.health()
        return web.Response(
            status=200 if ok else 503, body=orjson.dumps(doc), content_type="application/json"
        )

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(reg), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


async def start_http(stats: IngestStats, listen: str) -> web.AppRunner | None:
    if not listen:
        return None
    host, port = parse_listen(listen)
    runner = web.AppRunner(make_app(stats), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
