"""A client attached with ``wait`` (``monitord attach``, the ``pegasus-monitord -N`` drop-in):
what it hears until its workflow ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import structlog

from monitord.service.protocol import ProtocolError, decode, encode
from monitord.service.workflows import Followed

log = structlog.get_logger("monitord.service")


async def stream_until_end(
    item: Followed,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    interrupt: Callable[[Followed], None],
) -> None:
    """Send the workflow's news (its end, the service's stop) until it ends; an
    ``interrupt`` line from the client ends it like SIGINT ends the per-workflow daemon."""
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    item.subscribers.append(outbox.put_nowait)
    if item.exit_code is not None:
        outbox.put_nowait({"event": "ended", "exit_code": item.exit_code})
    try:
        reading = asyncio.ensure_future(reader.readline())
        while True:
            sending = asyncio.ensure_future(outbox.get())
            done, _ = await asyncio.wait([reading, sending], return_when=asyncio.FIRST_COMPLETED)
            if sending in done:
                message = sending.result()
                writer.write(encode(message))
                await writer.drain()
                if message.get("event") in ("ended", "stopping"):
                    reading.cancel()
                    return
            else:
                sending.cancel()
            if reading in done:
                line = reading.result()
                if not line:
                    return  # the client went away; the workflow goes on
                with contextlib.suppress(ProtocolError):
                    if decode(line).get("op") == "interrupt":
                        log.info("interrupt requested", dagman_out=item.dagman_out)
                        interrupt(item)
                reading = asyncio.ensure_future(reader.readline())
    finally:
        with contextlib.suppress(ValueError):
            item.subscribers.remove(outbox.put_nowait)
