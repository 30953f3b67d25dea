"""Headless Chromium driven over the DevTools protocol (CDP), for pages that need more than
``--dump-dom`` or ``--screenshot``: wait until the page's script has drawn something, read the
DOM, drag a splitter with the mouse, take a screenshot of one region.

The protocol is JSON over one WebSocket (aiohttp's client); Chromium is the Debian package the
status-page test uses (tests/test_service_status_page.py ``need_chromium``).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from tests.test_service_status_page import CHROMIUM

DEVTOOLS = re.compile(rb"DevTools listening on ws://127\.0\.0\.1:(\d+)/")


class Page:
    """One page of the browser: ``call`` sends a command and returns its result (events the
    browser sends meanwhile are dropped)."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        n = next(self.ids)
        await self.ws.send_json({"id": n, "method": method, "params": params})
        while True:
            msg = await self.ws.receive_json()
            if msg.get("id") == n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg["result"])

    async def js(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited), as JSON."""
        result = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.js(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"not true after {timeout:.0f} s: {expression}")
            await asyncio.sleep(0.2)

    async def drag(self, x0: float, y0: float, x1: float, y1: float, steps: int = 10) -> None:
        """Press the left button at (x0, y0), move to (x1, y1) in ``steps``, release."""
        mouse = "Input.dispatchMouseEvent"
        await self.call(mouse, type="mouseMoved", x=x0, y=y0)
        await self.call(mouse, type="mousePressed", x=x0, y=y0, button="left", clickCount=1)
        for k in range(1, steps + 1):
            x, y = x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps
            await self.call(mouse, type="mouseMoved", x=x, y=y, button="left", buttons=1)
        await self.call(mouse, type="mouseReleased", x=x1, y=y1, button="left", clickCount=1)

    async def screenshot(self, x: float, y: float, width: float, height: float) -> bytes:
        """A PNG of that region of the page, at one pixel per CSS pixel."""
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        shot = await self.call("Page.captureScreenshot", format="png", clip=clip)
        return base64.b64decode(shot["data"])


@asynccontextmanager
async def chromium_page(profile: Path, width: int, height: int) -> AsyncIterator[Page]:
    """A headless Chromium (its own profile dir) and its one page, ``width`` x ``height``."""
    proc = await asyncio.create_subprocess_exec(
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(profile)},
    )
    assert proc.stderr is not None
    drain: asyncio.Task[None] | None = None
    try:
        port = await asyncio.wait_for(_devtools_port(proc.stderr), timeout=120)
        drain = asyncio.create_task(_drain(proc.stderr))
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/json/list") as answer:
                targets = await answer.json()
            target = next(t for t in targets if t["type"] == "page")
            async with http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                await page.call(
                    "Emulation.setDeviceMetricsOverride",
                    width=width,
                    height=height,
                    deviceScaleFactor=1,
                    mobile=False,
                )
                yield page
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), timeout=30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if drain is not None:
            drain.cancel()


async def _devtools_port(stderr: asyncio.StreamReader) -> int:
    while line := await stderr.readline():
        if m := DEVTOOLS.search(line):
            return int(m.group(1))
    raise RuntimeError("chromium exited before it listened for DevTools")


async def _drain(stderr: asyncio.StreamReader) -> None:
    while await stderr.readline():
        pass
