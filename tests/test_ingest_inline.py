"""A lane's deliveries from the channel's reader, without aiormq's task per delivery
(monitord/ingest/inline.py); the ingest's exactly-once tests run on it (tests/test_ingest*.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
from aiormq.abc import DeliveredMessage

from monitord.ingest.inline import deliver_inline
from tests.servers import require_server

COUNT = 40


async def test_deliveries_reach_the_lane_in_order_without_a_task_each() -> None:
    """Every message reaches ``take`` in the broker's order, none through the consumer
    callback (the library's path), and the channel starts no task for them."""
    url = require_server("amqp")
    async with await aio_pika.connect(url) as conn:
        channel = await conn.channel()
        queue = await channel.declare_queue(f"inline-{uuid.uuid4().hex[:8]}", exclusive=True)
        for n in range(COUNT):
            await channel.default_exchange.publish(aio_pika.Message(str(n).encode()), queue.name)
        raw: Any = await channel.get_underlay_channel()
        taken: list[bytes] = []
        via_callback: list[bytes] = []
        arrived = asyncio.Event()
        tasks = 0
        create_task = raw.create_task

        def counting(coro: Any) -> Any:
            nonlocal tasks
            tasks += 1
            return create_task(coro)

        raw.create_task = counting

        def take(message: DeliveredMessage) -> None:
            taken.append(message.body)
            if len(taken) == COUNT:
                arrived.set()

        async def callback(message: DeliveredMessage) -> None:
            via_callback.append(message.body)
            take(message)

        assert deliver_inline(raw, take)
        await raw.basic_consume(queue.name, callback, no_ack=True)
        await asyncio.wait_for(arrived.wait(), 30)
        assert taken == [str(n).encode() for n in range(COUNT)]
        assert via_callback == []
        assert tasks < COUNT // 2  # (the consume's own RPC may start one)


def test_a_channel_without_the_parts_keeps_the_library_path() -> None:
    """An aiormq release without the replaced parts: nothing is changed, the lane consumes
    through ``basic_consume``'s callback."""

    class Other:
        consumers: dict[str, Any] = {}

        async def _on_deliver_frame(self, frame: object) -> None:
            """(the library's own)"""

    other = Other()
    assert not deliver_inline(other, lambda message: None)
    assert "_on_deliver_frame" not in vars(other)
