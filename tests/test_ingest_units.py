"""monitord ingest without servers: decoding, the batch rules, the producer's stream headers,
the ``ingest`` endpoint property and the configuration's errors."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from aiormq.abc import FieldValue
from structlog.testing import capture_logs

from monitord.core.events import StampedeEvent, make_event
from monitord.ingest import consumer
from monitord.ingest import run as ingest_run
from monitord.ingest.batch import classify, plan
from monitord.ingest.config import ConfigError, load_config
from monitord.ingest.consumer import Ingest, Lane
from monitord.ingest.decode import DecodeError, decode
from monitord.ingest.run import loop_factory
from monitord.ingest.store import Mark, Store
from sinks.amqp.broker import amqp_message
from sinks.amqp.config import parse_amqp_url
from sinks.amqp.encoder import encode_selected
from sinks.amqp.event_filter import EventFilter
from sinks.amqp.producer import BLOCK, Producer
from sinks.amqp.stream import (
    EVENT,
    ID,
    PRODUCER,
    SEQ,
    SLOT,
    SLOTS,
    STREAM,
    Identity,
    Numbering,
    read_identity,
    slot_of,
    split_key,
    spool_key,
    stream_headers,
)
from sinks.encoding import FixedCache, _loads, decode_json, encode_json
from sinks.runtime.base import SinkError
from sinks.runtime.marks import MarkedBatch, Marks, line_one_stream
from sinks.runtime.policy import DeliveryState, RetryPolicy
from tests.collector_check import collector_after

# ---------------------------------------------------------------- decode


# The decode is the catalogue's (sinks/encoding.py decode_json): its typed round trip of every
# kind is tests/test_catalogue.py, the reference's JSON stream decoding is
# tests/test_differential_json.py, and the reference publishing into an ingest end to end is
# tests/test_ingest_reference.py.


@pytest.mark.parametrize(
    ("key", "body", "kind"),
    [
        ("stampede.xwf.start", b"{not json", "malformed"),
        ("stampede.xwf.start", b"[1, 2]", "malformed"),
        ("stampede.xwf.start", b'{"xwf_id": "u", "event": "stampede.xwf.end"}', "malformed"),
        ("stampede.xwf.start", b'{"xwf_id": "u", "event": "stampede.xwf.start"}', "malformed"),
        ("stampede.no.such", b'{"xwf_id": "u", "event": "stampede.no.such"}', "unknown-event"),
        # nested deeper than ``json`` recurses (orjson refuses it first): not a RecursionError
        # that fails the lane, and its redelivery the next session, for ever
        ("stampede.rc.meta", b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}", "malformed"),
    ],
)
def test_decode_refuses_with_a_reason(key: str, body: bytes, kind: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode(key, body)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    "body",
    [
        b'{"event": "stampede.xwf.start", "restart_count": 18446744073709551616}',
        b'{"event": "stampede.xwf.start", "restart_count": -9223372036854775809}',
        b'{"event": "stampede.xwf.start", "ts": NaN, "big": 1e400}',
        b'{"event": "stampede.xwf.start", "xwf_id": "\\ud800"}',
        '\ufeff{"event": "stampede.xwf.start"}'.encode(),
        '{"event": "stampede.xwf.start"}'.encode("utf-16"),
        b'{"event": "stampede.xwf.start", "xwf_id": "a", "xwf_id": "b", "list": [1e400]}',
        b'{"event": "stampede.xwf.start", "xwf_id": "\xc3\xa9", "ts": 1.5e9}',
    ],
)
def test_the_fast_json_parse_gives_what_json_gives(body: bytes) -> None:
    """The decode parses with orjson where it agrees with ``json`` (which the reference's
    consumers use): big integers, NaN, lone surrogates, a BOM, UTF-16 and containers
    come out as ``json`` has them, type for type."""
    assert repr(_loads(body)) == repr(json.loads(body))


def _fixed_body(name: str, job: str, dax: object, **more: object) -> bytes:
    attrs: dict[str, object] = {"xwf.id": "wf-1", "ts": 1, **more}
    if name == "job.edge":
        attrs.update({"parent.job.id": "a", "child.job.id": job})
    else:
        attrs["job.id"] = job
    attrs.update(
        {
            "root.xwf.id": "wf-1",
            "dax": dax,
            "dag": "wf.dag",
            "wf.ts": 1700000000,
            "submit.dir": "/submit",
            "pegasus.version": "5.0.5",
            "submit.hostname": "host",
            "wf.user": "me",
        }
    )
    return encode_json(make_event(name, attrs))


def test_the_decode_shares_one_fixed_per_workflow_and_changes_no_event() -> None:
    """The ingest's decode takes a workflow's fixed attributes from a cache
    (sinks/encoding.py FixedCache): the events are those the plain decode gives, their
    ``Fixed`` is one object while the values are the same, and values that hash alike but
    differ in type (``1``, ``1.0``, ``True``) get a ``Fixed`` each."""
    bodies = [
        ("job.info", _fixed_body("job.info", "a", "wf.yml", type_desc="compute")),
        ("job.info", _fixed_body("job.info", "b", "wf.yml", clustered="0")),
        ("job.edge", _fixed_body("job.edge", "c", "wf.yml")),
        ("job.info", _fixed_body("job.info", "d", 1)),
        ("job.info", _fixed_body("job.info", "e", 1.0)),
        ("job.info", _fixed_body("job.info", "f", True)),
    ]
    events = [decode("stampede." + name, body) for name, body in bodies]
    plain = [decode_json(body) for _, body in bodies]
    assert events == plain
    assert [e.wire_items() for e in events] == [e.wire_items() for e in plain]
    assert [repr(e.fixed) for e in events] == [repr(e.fixed) for e in plain]
    assert [type(getattr(e.fixed, "dax", None)) for e in events] == [
        str,
        str,
        str,
        int,
        float,
        bool,
    ]
    assert events[0].fixed is events[1].fixed is events[2].fixed
    assert len({id(e.fixed) for e in events}) == 4


def test_the_fixed_cache_is_bounded_and_skips_what_it_cannot_key() -> None:
    cache = FixedCache(limit=2)
    for n in range(5):
        body = _fixed_body("job.info", "a", f"wf{n}.yml")
        event = decode_json(body, fixed=cache)
        assert event == decode_json(body)
    assert len(cache._held) <= 2
    partial = {"xwf.id": "wf-1", "dax": "x"}  # not all eight: its own Fixed, not cached
    assert cache.get(partial) is None
    unhashable = {a: ["list"] for a in FixedCache._values.__reduce__()[1]}
    assert cache.get(unhashable) is None


# ---------------------------------------------------------------- batch rules


def _msg(
    tag: int,
    name: str,
    wf: str,
    producer: str | None,
    seq: int | None,
    user: str = "u",
    number: tuple[str, int] | None = None,
):
    attrs: dict[str, object] = {"xwf.id": wf, "ts": 1}
    if name != "wf.plan":
        attrs["restart_count"] = 0
    if name == "xwf.end":
        attrs["status"] = 0
    body = encode_json(make_event(name, attrs))
    headers: dict[str, object] | None = (
        {PRODUCER: producer, SEQ: seq} if producer is not None else None
    )
    if number is not None:
        headers = {**(headers or {}), STREAM: number[0], EVENT: number[1]}
    return classify(tag, "stampede." + name, body, headers, user, 1 << 20)


def test_plan_skips_at_or_below_the_mark_and_dead_letters_unknown_workflows() -> None:
    items = [
        _msg(1, "xwf.start", "a", "p1", 10),  # below p1's mark 20: loaded before
        _msg(2, "xwf.start", "a", "p1", 20),  # at the mark
        _msg(3, "xwf.end", "a", "p1", 30),
        _msg(4, "xwf.end", "a", "p1", 30),  # the same position again in one batch
        _msg(5, "wf.plan", "b", "p2", 5),
        _msg(6, "xwf.start", "b", "p2", 6),  # its wf.plan is in the batch
        _msg(7, "xwf.start", "ghost", "p2", 7),  # never planned
        _msg(8, "xwf.start", "a", None, None),  # a stock producer: always loaded
        _msg(9, "xwf.start", "a", "p1", 40, user="mallory"),
    ]
    asked: list[set[str]] = []

    def known(uuids: set[str]) -> set[str]:
        asked.append(set(uuids))
        return uuids & {"a"}

    out = plan(items, {"p1": Mark("u", 20)}, known)
    assert [i.tag for i in out.load] == [3, 5, 6, 8]
    assert {i.tag: i.reason for i in out.dead} == {7: "unknown-workflow", 9: "user-mismatch"}
    assert out.duplicates == 3
    assert {p: (m.old, m.new) for p, m in out.marks.items()} == {"p1": (20, 30), "p2": (None, 7)}
    assert asked == [{"a", "ghost"}]


def test_plan_skips_events_produced_again_under_new_positions() -> None:
    """A resumed producer spools the events after its snapshot again (new spool positions,
    the same stream numbers); a second replay is another spool with the same numbers."""
    items = [
        _msg(1, "xwf.start", "a", "p1", 50, number=("s", 4)),  # regenerated: 4 <= 5
        _msg(2, "xwf.end", "a", "p1", 60, number=("s", 5)),  # regenerated
        _msg(3, "xwf.start", "a", "p1", 70, number=("s", 6)),  # new
        _msg(4, "xwf.start", "a", "p9", 1, number=("s", 6)),  # another spool, same event
        _msg(5, "xwf.end", "b", "p1", 80, number=("s", 1)),  # another workflow of the stream
        _msg(6, "xwf.end", "a", "p1", 90, number=("t", 1)),  # another stream (a continuation)
        _msg(7, "xwf.end", "a", "p7", 1, number=("s", 7), user="mallory"),  # not s's user
    ]
    streams = {("s", "a"): Mark("u", 5)}
    out = plan(items, {"p1": Mark("u", 40)}, lambda uuids: uuids, streams)
    assert [i.tag for i in out.load] == [3, 5, 6]
    assert out.duplicates == 3
    assert {i.tag: i.reason for i in out.dead} == {7: "user-mismatch"}
    assert {k: (m.old, m.new) for k, m in out.streams.items()} == {
        ("s", "a"): (5, 6),
        ("s", "b"): (None, 1),
        ("t", "a"): (None, 1),
    }
    assert {p: (m.old, m.new) for p, m in out.marks.items()} == {
        "p1": (40, 90),
        "p9": (None, 1),
        "p7": (None, 1),
    }


def test_the_spool_key_carries_the_stream_and_number() -> None:
    key = spool_key("stampede.xwf.start", "abc", 12)
    assert split_key(key) == ("stampede.xwf.start", {STREAM: "abc", EVENT: 12})
    assert split_key("stampede.xwf.start") == ("stampede.xwf.start", {})  # an older spool
    msg, routing = amqp_message(*split_key(key), b"{}", "producer-1", 7, "alice")
    assert routing == "stampede.xwf.start"
    assert msg.headers is not None
    assert read_identity(msg.headers) == Identity("producer-1", 7, "abc", 12)


def _events(*specs: tuple[str, str]) -> list[StampedeEvent]:
    return [make_event(name, {"xwf.id": wf, "ts": 1, "restart_count": 0}) for name, wf in specs]


def test_numbering_follows_the_marks_else_counts_in_the_line_one_stream() -> None:
    """Marked batches (a resumable daemon): the marks' numbers, so a resumed daemon numbers its
    regenerated events as before.  Unmarked (a replay): counted from 1 in the root workflow's
    line-1 stream, which a first start or recovery of a resumable daemon also counts in."""
    events = _events(("xwf.start", "a"), ("xwf.start", "b"), ("xwf.start", "a"))
    marked = MarkedBatch(events, Marks("s1", {"a": 9, "b": 4}))
    assert Numbering(restart=False, root_uuid="a").of(marked) == ("s1", [8, 4, 9])
    replay = Numbering(restart=True, root_uuid="a")
    assert replay.of(events) == (line_one_stream("a"), [1, 1, 2])
    assert replay.of(events[:1]) == (line_one_stream("a"), [3])
    assert Numbering(restart=True, root_uuid="a").of(events) == replay.of(events)[:1] + ([1, 1, 2],)
    live = Numbering(restart=False, root_uuid="a")  # may continue a clean stop: its own stream
    assert live.stream != line_one_stream("a") != Numbering(restart=False, root_uuid="a").stream
    filtered = list(
        encode_selected(events, EventFilter.from_property("stampede.xwf.*"), ("s1", [8, 4, 9]))
    )
    assert [k for k, _ in filtered] == [
        "stampede.xwf.start s1 8",
        "stampede.xwf.start s1 4",
        "stampede.xwf.start s1 9",
    ]
    only_b = list(encode_selected(marked[1:2], EventFilter.from_property("*"), ("s1", [4])))
    assert [k for k, _ in only_b] == ["stampede.xwf.start s1 4"]


def test_classify_refuses_bad_headers_and_oversized_bodies() -> None:
    body = encode_json(make_event("xwf.start", {"xwf.id": "a", "ts": 1.0, "restart_count": 0}))
    big = classify(1, "stampede.xwf.start", body, None, "u", max_body=10)
    assert big.reason == "oversized"
    bad = classify(1, "stampede.xwf.start", body, {PRODUCER: "p", SEQ: "7"}, "u", 1 << 20)
    assert bad.reason == "malformed"
    good = classify(1, "stampede.xwf.start", body, {PRODUCER: "p", SEQ: 7}, "u", 1 << 20)
    assert good.reason is None and good.seq == 7 and good.event is not None
    for bad_identity in ({STREAM: "s", EVENT: 0}, {STREAM: "", EVENT: 3}, {STREAM: "s"}):
        refused = classify(1, "stampede.xwf.start", body, bad_identity, "u", 1 << 20)
        assert refused.reason == "malformed"
    numbered = classify(1, "stampede.xwf.start", body, {STREAM: b"s", EVENT: 3}, "u", 1 << 20)
    assert (numbered.stream, numbered.number, numbered.reason) == ("s", 3, None)
    for bad_id in ("p", "p 7 s", "p -7", "p 7 s 0", "p 7 s 3 x", " 7", "p ७", "p +7", 7):
        refused = classify(1, "stampede.xwf.start", body, {ID: bad_id}, "u", 1 << 20)
        assert (refused.reason, refused.detail) == ("malformed", f"bad {ID} header")


def test_an_earlier_monitord_s_separate_headers_read_as_the_one_header() -> None:
    """A message an earlier monitord published (five headers), still in a queue or a spool
    when the ingest is upgraded, carries the same identity as the one ``monitord-id``."""
    identities: list[dict[str, FieldValue]] = [{}, {STREAM: "s", EVENT: 3}]
    for identity in identities:
        new = stream_headers("p", 7, identity)
        old = {PRODUCER: "p", SEQ: 7, SLOT: slot_of("p"), **identity}
        assert read_identity(new) == read_identity(old) != Identity()
        assert ID in new and PRODUCER not in new
    assert read_identity({}) == Identity()  # a stock pegasus-monitord's


# ---------------------------------------------------------------- producer side


def test_stream_headers_name_the_producer_and_its_sequence_number() -> None:
    msg, key = amqp_message("stampede.xwf.end", {}, b"{}", "producer-1", 90, "alice")
    assert key == "stampede.xwf.end"
    assert msg.headers == {SLOT: slot_of("producer-1"), ID: "producer-1 90"}
    assert read_identity(msg.headers) == Identity("producer-1", 90)
    assert msg.user_id == "alice"
    assert msg.message_id == "producer-1:90"
    slots = {slot_of(f"spool-{i}") for i in range(1000)}
    assert slots == {str(n) for n in range(SLOTS)}


def test_a_producer_keeps_its_id_and_never_reuses_a_sequence_number(tmp_path: Path) -> None:
    """The id survives a restart (the producer keeps its partition); a later daemon, even after
    a crash that saved nothing, starts past every number the last one may have sent."""
    first = Producer(str(tmp_path / "p"))
    first.open()
    with pytest.raises(SinkError, match="another monitord"):
        Producer(str(tmp_path / "p")).open()
    used = [first.reserve(10), first.reserve(5), first.reserve(BLOCK)]
    assert used == [0, 10, 15]
    last = 15 + BLOCK - 1  # the highest number handed out
    ident = first.id
    first.close()  # (as a kill -9 would: nothing is written at close)
    second = Producer(str(tmp_path / "p"))
    second.open()
    assert second.id == ident and len(ident) <= 64
    assert second.reserve(1) > last
    second.close()


def test_ingest_property_means_every_event() -> None:
    url = "amqp://u:p@h/v/x"
    assert parse_amqp_url(url, {"ingest": "true"}).events.everything
    assert parse_amqp_url(url, {"ingest": "true", "events": "*"}).events.everything
    assert not parse_amqp_url(url, {}).events.everything
    with pytest.raises(SinkError, match="every event"):
        parse_amqp_url(url, {"ingest": "true", "events": "stampede.xwf.*"})


# ---------------------------------------------------------------- configuration


def test_config_errors_name_file_line_and_key(tmp_path: Path) -> None:
    conf = tmp_path / "ingest.toml"
    conf.write_text(
        '[ingest]\ndatabase = "sqlite:///x.db"\nbatchsize = 3\n[amqp]\nurl = "amqp://u:secret@h/v/x"\n'
    )
    with pytest.raises(ConfigError) as info:
        load_config(str(conf))
    assert str(info.value) == f"{conf}:3: [ingest] batchsize: unknown key"
    conf.write_text('[ingest]\ndatabase = "sqlite:///x.db"\n[amqp]\nurl = "http://u:secret@h/x"\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(conf))
    assert f"{conf}:4: [amqp] url:" in str(info.value) and "secret" not in str(info.value)
    conf.write_text(
        '[ingest]\ndatabase = "sqlite:///x.db"\nmember = "2/4"\n[amqp]\nurl = "amqp://u:s@h/v/x"\npartitions = 8\n'
    )
    cfg = load_config(str(conf))
    assert [p for p in range(8) if cfg.preferred(p)] == [1, 5]
    assert cfg.broker.exchange == "x" and cfg.master_db_url == "sqlite:///x.db"


def test_the_example_configuration_is_valid() -> None:
    cfg = load_config(str(Path(__file__).resolve().parents[1] / "conf" / "monitord-ingest.toml"))
    assert cfg.partitions == 8 and cfg.broker.tls and cfg.broker.tls_verify
    assert "secret" not in cfg.master_db_url


# ---------------------------------------------------------------- outages


FORCED = "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"


def test_one_warning_per_outage_of_the_broker(tmp_path: Path) -> None:
    """A broker restarting (the close, then refused connects), then a cut after it came back:
    two outages, two warnings (the first with the broker's reason), an info line when the
    error changes within an outage, never the password."""
    conf = tmp_path / "ingest.toml"
    conf.write_text(
        '[ingest]\ndatabase = "sqlite:///x.db"\n[amqp]\nurl = "amqp://u:s3cret@h/v/x"\n'
    )
    ingest = Ingest(load_config(str(conf)), [cast(Store, None)])
    ingest.link = DeliveryState(RetryPolicy(first=0.001, cap=0.001))  # (no waiting)
    refused = ConnectionRefusedError("amqp://u:s3cret@h:5672/v refused")
    steps: list[object] = [
        "up",
        ConnectionError(FORCED),
        refused,
        refused,
        "up",
        OSError("Server connection reset"),
        "up",
        "stop",
    ]

    async def session(stop: asyncio.Event) -> None:
        """What a session does, by the script: connects ("up"), then fails or stops."""
        ingest._was_connected = False
        while (step := steps.pop(0)) == "up":
            ingest._was_connected = True
            ingest.link.succeeded(backlog=False)
        if step == "stop":
            stop.set()
            return
        assert isinstance(step, Exception)
        raise step

    ingest._session = session  # type: ignore[method-assign]
    with capture_logs() as logs:
        asyncio.run(asyncio.wait_for(ingest.run(asyncio.Event()), 30))
    lost = "ingest: broker connection lost, reconnecting"
    assert [(e["log_level"], e["event"]) for e in logs] == [
        ("warning", lost),
        ("info", "ingest: broker still unavailable"),
        ("warning", lost),
    ]
    assert FORCED in logs[0]["error"] and "s3cret" not in str(logs)
    assert ingest.stats.broker_outages == 2 and not steps


def _batches_of_a_lane_whose_first_commit_is_long(
    monkeypatch: pytest.MonkeyPatch, arriving: tuple[str, ...], batches_to_take: int
) -> list[list[str]]:
    """The batches a lane (``batch`` 2, ``batch_wait`` an hour) takes from "a", "b" (a full
    batch, taken at once) and ``arriving``, which come while that first batch commits, a
    commit longer than ``batch_wait``; the lane stops after ``batches_to_take`` batches."""
    now = [0.0]
    monkeypatch.setattr(consumer, "clock", lambda: now[0], raising=False)
    batches: list[list[str]] = []

    class Committing:
        cfg = SimpleNamespace(batch=2, batch_wait=3600.0)

        async def process(self, lane: Lane, batch: list[str]) -> None:
            batches.append(batch)
            if len(batches) == 1:
                for message in arriving:  # (arrive in the commit ...)
                    await lane.on_message(message)  # type: ignore[arg-type]
                now[0] += 3601.0  # (... which takes longer than batch_wait)
            if len(batches) == batches_to_take:
                lane.stop()

    async def run() -> None:
        lane = Lane(Committing(), 0, None, None)  # type: ignore[arg-type]
        for message in ("a", "b"):
            await lane.on_message(message)  # type: ignore[arg-type]
        await asyncio.wait_for(lane.run(), 10)

    asyncio.run(run())
    return batches


def test_a_partial_batch_waits_from_its_first_message_not_from_the_lane_s_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Messages that came while the previous batch was committed have waited already: once
    ``batch_wait`` has passed since the first of them, the lane takes them at once (it waited
    a whole ``batch_wait`` more, on top of each commit of a steady stream)."""
    batches = _batches_of_a_lane_whose_first_commit_is_long(monkeypatch, ("c",), 2)
    assert batches == [["a", "b"], ["c"]]


def test_what_is_left_after_a_full_batch_waits_from_its_own_first_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full batch taken, the messages left over are the next batch: they wait
    ``batch_wait`` from the arrival of the first of them, not from the cut (which came a
    long commit later here, so they are due at once)."""
    batches = _batches_of_a_lane_whose_first_commit_is_long(monkeypatch, ("c", "d", "e"), 3)
    assert batches == [["a", "b"], ["c", "d"], ["e"]]


def test_the_ingest_runs_on_uvloop_when_it_is_installed_and_on_asyncio_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uvloop = pytest.importorskip("uvloop")
    assert loop_factory() is uvloop.new_event_loop
    monkeypatch.setitem(sys.modules, "uvloop", None)  # (not installed: its import fails)
    assert loop_factory() is None


def test_the_ingest_program_settles_the_collector_once_the_database_is_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frozen start-up state and rarer young collections (messages wait in the lanes until
    their batch commits); a subprocess, so this test process keeps its collector."""
    seen: list[object] = []

    async def ingest(cfg: object, opened: object = None) -> int:
        seen.append(opened)
        return 0

    monkeypatch.setattr(ingest_run, "ingest", ingest)
    assert ingest_run.run_ingest(None) == 0  # type: ignore[arg-type]
    assert seen == [ingest_run.settle_collector]
    settled = collector_after("from monitord.ingest import run\nrun.settle_collector()")
    assert settled.frozen > 10_000 and settled.threshold == [ingest_run.YOUNG, 10, 10]
