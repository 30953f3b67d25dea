"""A real OTLP/HTTP trace receiver for the tests: a process of its own on 127.0.0.1.

    python -m tests.otlp_receiver PORT STORE

POST /v1/traces bodies are decoded with the official ``opentelemetry-proto`` definitions
(``ExportTraceServiceRequest``); every span received is appended to STORE as one JSON line
(its canonical form, :func:`sinks.otlp.spans.canonical`, with the request's resource), so a
span received twice is there twice.  It prints ``ready`` once it listens; SIGTERM stops it.

While the file ``STORE.gate`` exists, a request is held before its spans are stored: the
receiver creates ``STORE.held`` and, once the gate is gone, answers 503 and stores nothing
(a test kills the exporting daemon in the middle of an export, never after one).

Each connection a request comes on is appended to ``STORE.conns`` (its peer address, one line
per connection), so a test counts the connections its exporters opened.  Idle connections are
kept for an hour (aiohttp's default closes them after 75 s, which would count a reconnect).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
from pathlib import Path

from aiohttp import web

from sinks.otlp.encode import decode_request, response_body
from sinks.otlp.spans import canonical


def make_app(store: Path) -> web.Application:
    gate = store.with_name(store.name + ".gate")
    conns = store.with_name(store.name + ".conns")
    peers: set[object] = set()

    async def traces(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        if peer is not None and tuple(peer) not in peers:
            peers.add(tuple(peer))
            with conns.open("a", encoding="utf-8") as fh:
                fh.write(f"{peer[0]}:{peer[1]}\n")
        if gate.exists():
            store.with_name(store.name + ".held").touch()
            while gate.exists():
                await asyncio.sleep(0.01)
            return web.Response(status=503, text="held at the gate")
        if request.content_type != "application/x-protobuf":
            return web.Response(status=415, text="protobuf only")
        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        try:
            resources, spans = decode_request(body)
        except Exception as exc:  # noqa: BLE001 - a bad body is the client's error
            return web.Response(status=400, text=f"undecodable: {exc}")
        resource = resources[0] if resources else {}
        auth = request.headers.get("Authorization")
        with store.open("a", encoding="utf-8") as fh:
            for span in spans:
                line = {"resource": resource, "authorization": auth, "span": canonical(span)}
                fh.write(json.dumps(line, sort_keys=True) + "\n")
        return web.Response(body=response_body(), content_type="application/x-protobuf")

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/v1/traces", traces)
    return app


def main() -> None:
    port, store = int(sys.argv[1]), Path(sys.argv[2])

    async def ready(_app: web.Application) -> None:
        print("ready", flush=True)

    app = make_app(store)
    app.on_startup.append(ready)
    web.run_app(
        app,
        host="127.0.0.1",
        port=port,
        print=None,
        handle_signals=True,
        keepalive_timeout=3600.0,
    )


if __name__ == "__main__":
    main()
