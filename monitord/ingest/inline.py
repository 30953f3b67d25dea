"""A lane's deliveries handed over inline, without the task aiormq starts for each one.

aiormq's channel reader, on a ``Basic.Deliver``, reads the content frames and then starts a
task for the consumer callback (``create_task`` through its ``FutureStore``).  A lane's
callback only appends the message to its buffer, so that task, its wrapper and its
done-callback were ~10 % of the ingest's event loop (py-spy ``--gil``, bench/README.md
"Issue 30, fifth session: ingest30b").  :func:`deliver_inline` replaces that one step on one
channel: the reader reads the message as before (the same content-frame reader) and calls
the lane's function directly, in delivery order.  The connection, the channel, the acks and
the broker's flow control stay aio-pika's and aiormq's.

It reaches into aiormq's channel (``_on_deliver_frame``, ``_read_content`` and the name-mangled
content header reader): when a release moves them, :func:`deliver_inline` says so and the lane
keeps the library's own path (``basic_consume``'s callback), which is correct, only slower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiormq.abc import DeliveredMessage

_HEADER = "_Channel__get_content_header"


def deliver_inline(channel: Any, take: Callable[[DeliveredMessage], None]) -> bool:
    """Have ``channel`` (an aiormq channel) pass each message of its consumers to ``take``
    from its reader; False (nothing changed) when the channel lacks the parts replaced."""
    header = getattr(channel, _HEADER, None)
    read = getattr(channel, "_read_content", None)
    consumers = getattr(channel, "consumers", None)
    if header is None or read is None or not isinstance(consumers, dict):
        return False
    if not callable(getattr(channel, "_on_deliver_frame", None)):
        return False

    async def on_deliver(frame: Any) -> None:
        message = await read(frame, await header())
        if frame.consumer_tag in consumers:  # (a cancelled consumer's late delivery: dropped)
            take(message)

    channel._on_deliver_frame = on_deliver
    return True
