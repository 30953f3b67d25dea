"""The client side of the attach socket: ``monitord attach`` and the ``-N`` drop-in hand-over.

The drop-in client stands in for the per-workflow daemon pegasus-dagman started,
so it behaves like one: it stays until the workflow ends and exits with the
daemon's status; SIGINT/SIGTERM are passed on (the service ends the workflow as
the daemon would on SIGINT, status 1).  When the service restarts, the client
reconnects and re-attaches (the service resumes the workflow from its state);
if the service does not come back in time, :func:`attach` returns None and the
caller follows the workflow itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from typing import Any

from monitord.daemon.config import MonitorConfig
from monitord.service.config import ConfigError, configured_path, load_config
from monitord.service.protocol import MAX_LINE, ProtocolError, config_to_dict, decode, encode

RECONNECT_SECONDS = 600.0


class Unavailable(Exception):
    """No service answers on the socket."""


def service_socket(config_path: str | None = None, *, quiet: bool = True) -> str | None:
    """The socket of the configured service, if a configuration is found and valid."""
    path = configured_path(config_path)
    if path is None:
        return None
    try:
        return load_config(path).socket
    except ConfigError as exc:
        if not quiet:
            print(f"monitord: error: {exc}", file=sys.stderr)
        return None


def service_answers(sock_path: str, timeout: float = 15.0) -> bool:
    """A quick ping: is a service listening on ``sock_path``?"""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(sock_path)
            sock.sendall(encode({"op": "ping"}))
            data = sock.makefile("rb").readline()
        return decode(data).get("event") == "pong"
    except (OSError, ProtocolError):
        return False


def _err(message: str, source: str) -> None:
    prog = "monitord attach" if source == "attach" else "pegasus-monitord"
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


async def attach(
    sock_path: str,
    config: MonitorConfig,
    *,
    wait: bool,
    source: str = "attach",
    reconnect_seconds: float = RECONNECT_SECONDS,
) -> int | None:
    """Hand ``config``'s workflow to the service; its exit code, or None to follow locally."""
    request = {"op": "attach", "config": config_to_dict(config), "wait": wait, "source": source}
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted.set)
    loop.add_signal_handler(signal.SIGHUP, lambda: None)
    first = True
    deadline = time.monotonic() + reconnect_seconds
    try:
        while True:
            try:
                result = await _session(sock_path, request, interrupted, first=first)
            except Unavailable:
                result = None
            if isinstance(result, int):
                return result
            if result == "refused-local":
                return None
            if first and result is None:
                return None  # no service at all: the caller runs the daemon itself
            if result is not None:  # "stopping" / connection lost: the service restarts
                deadline = time.monotonic() + reconnect_seconds
            first = False
            request["reattach"] = True
            if time.monotonic() > deadline:
                _err("the monitord service did not come back; following the workflow here", source)
                return None
            await asyncio.sleep(1.0)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)


async def _session(
    sock_path: str, request: dict[str, Any], interrupted: asyncio.Event, *, first: bool
) -> int | str | None:
    """One connection: an exit code, "lost" (try again), "refused-local", or None (no service)."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(sock_path, limit=MAX_LINE), 30
        )
    except (OSError, TimeoutError):
        raise Unavailable(sock_path) from None
    try:
        writer.write(encode(request))
        await writer.drain()
        reply = await _read(reader)
        if reply is None:
            return "lost"
        if reply.get("event") == "refused":
            _err(
                f"the monitord service refused the workflow: {reply.get('message')}",
                request["source"],
            )
            if request["source"] == "dropin":
                return "refused-local"
            return int(reply.get("exit_code", 1))
        if reply.get("event") != "accepted":
            return "lost"
        if not request["wait"]:
            dagman_out = request["config"]["dagman_out"]
            if "outcome" in reply:
                print(f"{dagman_out} has ended already ({reply['outcome']})", flush=True)
            else:
                print(f"attached {dagman_out} (wf_uuid {reply.get('wf_uuid')})", flush=True)
            return 0
        sent_interrupt = False
        reading = asyncio.ensure_future(_read(reader))
        while True:
            if interrupted.is_set() and not sent_interrupt:
                writer.write(encode({"op": "interrupt"}))
                await writer.drain()
                sent_interrupt = True
            waiter = asyncio.ensure_future(interrupted.wait())
            done, _ = await asyncio.wait([reading, waiter], return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if reading not in done:
                continue
            message = reading.result()
            if message is None or message.get("event") == "stopping":
                return "lost"
            if message.get("event") == "ended":
                if message.get("error"):
                    _err(f"error: {message['error']}", request["source"])
                return int(message.get("exit_code", 0))
            reading = asyncio.ensure_future(_read(reader))
    except (ConnectionError, OSError):
        return "lost"
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _read(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        line = await reader.readline()
    except (ConnectionError, ValueError):
        return None
    if not line:
        return None
    try:
        return decode(line)
    except ProtocolError:
        return None
