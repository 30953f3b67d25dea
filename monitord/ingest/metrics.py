"""What the ingest counts, and its Prometheus families (``/metrics``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

if TYPE_CHECKING:
    from monitord.ingest.batch import Plan


@dataclass
class IngestStats:
    received: int = 0  # messages acknowledged
    loaded: int = 0  # events committed
    duplicates: int = 0  # messages at or below their producer's mark
    batches: int = 0
    dead: dict[str, int] = field(default_factory=dict)  # by reason
    broker_up: bool = False
    broker_error: str | None = None
    broker_outages: int = 0  # connections lost, or first connects failed
    partitions: int = 0  # partition queues subscribed to (active or standby)
    db_down_since: float | None = None
    db_error: str | None = None
    last_commit: float | None = None

    def count(self, plan: Plan, messages: int) -> None:
        self.loaded += len(plan.load)
        self.duplicates += plan.duplicates
        self.batches += 1
        self.last_commit = time.time()

    def health(self) -> tuple[bool, dict[str, object]]:
        problems = []
        if not self.broker_up:
            problems.append(f"broker down: {self.broker_error or 'not connected'}")
        if self.db_down_since is not None:
            problems.append(
                f"database down for {time.time() - self.db_down_since:.0f} s "
                f"(consumption paused): {self.db_error}"
            )
        return not problems, {"ok": not problems, "problems": problems}


class StatsCollector:
    def __init__(self, stats: IngestStats) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        s = self.stats
        messages = CounterMetricFamily(
            "monitord_ingest_messages", "Messages acknowledged, by outcome", labels=["outcome"]
        )
        messages.add_metric(["loaded"], s.loaded)
        messages.add_metric(["duplicate"], s.duplicates)
        messages.add_metric(["dead"], sum(s.dead.values()))
        yield messages
        dead = CounterMetricFamily(
            "monitord_ingest_dead_letters", "Messages dead-lettered, by reason", labels=["reason"]
        )
        for reason, n in sorted(s.dead.items()):
            dead.add_metric([reason], n)
        yield dead
        yield CounterMetricFamily(
            "monitord_ingest_batches", "Transactions committed", value=s.batches
        )
        yield CounterMetricFamily(
            "monitord_ingest_broker_outages",
            "Broker outages: connections lost (a restart, a network cut) or refused at start",
            value=s.broker_outages,
        )
        yield GaugeMetricFamily(
            "monitord_ingest_broker_up", "Connected to the broker", value=int(s.broker_up)
        )
        yield GaugeMetricFamily(
            "monitord_ingest_database_up",
            "The database takes writes",
            value=int(s.db_down_since is None),
        )
        yield GaugeMetricFamily(
            "monitord_ingest_partitions", "Partition queues subscribed", value=s.partitions
        )
        if s.last_commit is not None:
            yield GaugeMetricFamily(
                "monitord_ingest_last_commit_timestamp_seconds",
                "Wall time of the last commit",
                value=s.last_commit,
            )


def registry(stats: IngestStats) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(StatsCollector(stats))  # type: ignore[arg-type]
    return reg
