"""``monitord ingest`` exactly once whatever the producer does (scripts/services.sh servers).

Events *produced again* carry the numbers they had (``monitord-stream`` / ``monitord-event``):
a second ``-r`` replay of a workflow, and a live ``pegasus-monitord`` killed with ``kill -9``
and resumed from its snapshot, load nothing twice.  A producer with ``ingest = true``
declares the ingest's topology itself, so what it publishes before the first ingest process
starts waits in the partition queues.  Rows compared with each workflow's own SQLite replay.
Nothing here stops a shared server.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path

import pytest

from monitord.core.events import make_event
from sinks.amqp.stream import EVENT, ID, PRODUCER, SEQ, STREAM, read_identity
from sinks.runtime.marks import Marks, line_one_stream
from sinks.sql import SQLSink
from tests.ingest_harness import (
    Broker,
    IngestProcess,
    TapMessage,
    assert_rows_match,
    finish,
    ingest_workflows,
    start_ingests,
    start_producers,
    wait_acked,
    wait_marks,
)
from tests.kills import PLAY_SECONDS, ResumingFollowing, generated_source, kill_points
from tests.servers import require_server
from tests.test_follow_played import Following
from tests.test_sql_servers import Generated, drop, fresh_db

pytest_plugins = ("tests.ingest_harness",)  # the fixtures broker and central

KILL_SEED = 20


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> list[Generated]:
    return ingest_workflows(tmp_path_factory.mktemp("ingest-once"), 2, 40, 4000)


def _ingest(broker: Broker, url: str, tmp: Path) -> IngestProcess:
    return start_ingests(broker, url, tmp, 1, batch=50)[0]


def _identities(sent: list[TapMessage]) -> set[tuple[str, int, bytes]]:
    """(stream, number, body) of every numbered message: one per event, however often sent."""
    ids = [(read_identity(h), body) for _, h, body, _ in sent]
    return {(i.stream, i.number, body) for i, body in ids if i.stream and i.number}


def test_a_second_replay_of_a_workflow_loads_nothing_twice(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """Each workflow replayed (``-r``) twice into the exchange, from two copies of its submit
    dir (two spools, two producers): the central database holds it once, as the reference's
    replay into a server database (purge, then load again) would; every message of the
    second replay is a duplicate."""
    ingest = _ingest(broker, central, tmp_path)
    try:
        finish(start_producers(workflows, broker, tmp_path / "first"))
        first = broker.drain(broker.tap)
        wait_marks(central, first)
        counts = assert_rows_match(central, workflows, tmp_path)
        loaded = ingest.metric("monitord_ingest_messages_total", outcome="loaded")
        finish(start_producers(workflows, broker, tmp_path / "second"))
        second = broker.drain(broker.tap)
        assert len(second) == len(first)
        producers = {read_identity(h).producer for _, h, _, _ in first}
        assert not producers & {read_identity(h).producer for _, h, _, _ in second}
        assert _identities(second) == _identities(first)  # the same numbers, the same events
        wait_marks(central, second)
        wait_acked([ingest], len(first) + len(second))  # one process, never restarted
        assert ingest.metric("monitord_ingest_messages_total", outcome="loaded") == loaded
        assert ingest.metric("monitord_ingest_messages_total", outcome="duplicate") == len(second)
        assert assert_rows_match(central, workflows, tmp_path) == counts
    finally:
        ingest.stop()


def _as_an_earlier_monitord_sent(sent: list[TapMessage]) -> list[TapMessage]:
    """The messages in the separate headers a monitord sent before ``monitord-id``."""
    out = []
    for key, headers, body, user in sent:
        ident = read_identity(headers)
        assert ident.producer is not None and ident.stream is not None  # (every one numbered)
        old = {k: v for k, v in headers.items() if k != ID}
        old.update({PRODUCER: ident.producer, SEQ: ident.seq})
        old.update({STREAM: ident.stream, EVENT: ident.number})
        out.append((key, old, body, user))
    return out


def test_an_earlier_monitord_s_messages_load_once(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """Messages an earlier monitord published (separate headers, no ``monitord-id``), still in
    the queues when the ingest is upgraded, load as today's: each workflow's rows; the same
    messages again (a redelivery, a resent spool) are duplicates and change no row."""
    capture = Broker(broker.base)  # (a scratch exchange: the ingest's sees only what is sent)
    capture.declare_tap()
    try:
        finish(start_producers(workflows, capture, tmp_path / "produced"))
        earlier = _as_an_earlier_monitord_sent(capture.drain(capture.tap))
    finally:
        capture.delete()
    assert earlier
    ingest = _ingest(broker, central, tmp_path)
    try:
        broker.publish(earlier)
        wait_acked([ingest], len(earlier))
        wait_marks(central, earlier, timeout=30)  # (committed before acknowledged)
        counts = assert_rows_match(central, workflows, tmp_path)
        broker.publish(earlier)
        wait_acked([ingest], 2 * len(earlier))
        assert ingest.metric("monitord_ingest_messages_total", outcome="duplicate") == len(earlier)
        assert assert_rows_match(central, workflows, tmp_path) == counts
    finally:
        ingest.stop()


#: seconds a due kill waits at most for the daemon to publish past its snapshot
PUBLISH_WAIT = 10.0


class PublishingFollowing(ResumingFollowing):
    """A live daemon with crash resume publishing every event to the exchange (no database).

    A kill is made once the daemon has published past its latest snapshot, else put off to a
    later flush (for at most :data:`PUBLISH_WAIT`): a kill before that (a successor killed
    as it resumed, before its first publish: a loaded machine slows that) leaves nothing to
    produce again and tests nothing.  Published past: the tap holds more messages than when
    that snapshot was first seen; the snapshot is written once the broker has confirmed all
    it covers, so those came after it."""

    def __init__(self, src: Path, tmp_path: Path, broker: Broker, **kw: object) -> None:
        super().__init__(src, tmp_path, **kw)  # type: ignore[arg-type]
        cmd = list(self.cmd)  # the daemon tests/kills.py runs, with the broker for the database
        cmd[cmd.index("-d") + 1] = broker.url
        head = cmd.index("monitord.cli") + 1  # -D first, as pegasus-monitord takes it
        self.cmd = [*cmd[:head], *broker.producer_properties(), *cmd[head:]]
        self.broker = broker
        self.seen: tuple[tuple[int, int] | None, int] | None = None  # (snapshot, tap count)
        self.due_since: float | None = None

    def _snapshot_mark(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.store.path(os.path.join(self.run_dir, self.root_out)))
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns

    def _ready_to_kill(self) -> bool:
        now = time.monotonic()
        if self.due_since is None:
            self.due_since = now
        mark, count = self._snapshot_mark(), self.broker.count(self.broker.tap)
        if self.seen is None or self.seen[0] != mark:
            self.seen = (mark, count)  # a new snapshot: count from it
            ready = False
        else:
            ready = count > self.seen[1]
        if ready or now - self.due_since > PUBLISH_WAIT:
            self.seen = self.due_since = None
            return True
        return False


def test_kill9_of_a_producer_resumed_from_its_snapshot_loads_nothing_twice(
    broker: Broker, central: str, tmp_path: Path
) -> None:
    """A live pegasus-monitord following a played workflow is killed with ``kill -9`` at
    seeded moments; each successor resumes from the last snapshot and publishes the events
    after it again (new spool positions).  The central database equals the replay."""
    src = generated_source(tmp_path / "src", 60, seed=KILL_SEED)
    with sqlite3.connect(src / "expected" / "stampede.db") as con:
        (wf_uuid,) = con.execute(
            "SELECT wf_uuid FROM workflow WHERE parent_wf_id IS NULL"
        ).fetchone()
    rng = random.Random(KILL_SEED)
    lines = len(Following(src, tmp_path / "probe").root_lines)
    rate = min(200.0, max(20.0, lines / PLAY_SECONDS))  # as tests/kills.py plays
    following = PublishingFollowing(
        src, tmp_path / "play", broker, kills=kill_points(rng, lines, 4), rate=rate, seed=1
    )
    ingest = _ingest(broker, central, tmp_path)
    try:
        following.run()
        assert len(following.done_kills) >= 3, following.done_kills
        assert all(k.reread is not None for k in following.done_kills), "a kill found no snapshot"
        sent = broker.drain(broker.tap)
        again = len(sent) - len(_identities(sent))
        assert again > 0, "no event was produced again: the kills tested nothing"
        wait_marks(central, sent)
        wait_acked([ingest], len(sent))  # each message once: the ingest is never restarted
        dagman_out = following.run_dir / Path(following.root_out).name
        made = [Generated(dagman_out, wf_uuid, src / "expected" / "stampede.db")]
        assert_rows_match(central, made, tmp_path)
        assert ingest.metric("monitord_ingest_messages_total", outcome="duplicate") >= again
        print(f"\n[producer kill -9] {len(sent)} messages, {again} produced again, skipped")
    finally:
        ingest.stop()


def test_what_producers_publish_before_the_first_ingest_starts_is_loaded(
    workflows: list[Generated], broker: Broker, central: str, tmp_path: Path
) -> None:
    """No ingest process has ever run: the producers (``ingest = true``) declare the topology
    themselves, their messages wait in the partition queues, the ingest started afterwards
    loads every one."""
    finish(start_producers(workflows, broker, tmp_path))
    sent = broker.drain(broker.tap)
    assert sent
    # a quorum queue's count (passive declare) can lag its confirms a little: read it until it
    # settles; what cannot lag is the ingest's count below, once it has loaded them
    deadline = time.monotonic() + 30
    while sum((waiting := broker.ready()).values()) < len(sent) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sum(waiting.values()) == len(sent), waiting
    ingest = _ingest(broker, central, tmp_path)
    try:
        wait_marks(central, sent)
        wait_acked([ingest], len(sent))
        assert_rows_match(central, workflows, tmp_path)
        assert ingest.metric("monitord_ingest_messages_total", outcome="loaded") == len(sent)
    finally:
        ingest.stop()


def test_a_restart_purge_takes_the_workflows_delivery_marks_with_its_rows() -> None:
    """Starts from line 1 count in one stream (line_one_stream), so the marks a crashed daemon
    left in a server database must go with the rows a recovery purges: else the recovery's
    events, numbered as before, would be skipped as held and the rows lost."""
    require_server("postgres")
    url = fresh_db("postgres", f"ingest_purge_marks{os.getpid()}")
    stream = line_one_stream("root")
    events = [make_event("wf.plan", {"xwf.id": "root", "ts": 1, "root.xwf.id": "root"})]
    try:
        sink = SQLSink(url)
        sink.open()
        sink.write_marked(events, Marks(stream, {"root": 1}))
        assert sink.read_marks(stream) == {"root": 1}
        sink.close()
        again = SQLSink(url, restart=True, purge_wf_uuid="root")
        again.open()
        assert again.read_marks(stream) == {}
        again.close()
    finally:
        drop("postgres", url)
