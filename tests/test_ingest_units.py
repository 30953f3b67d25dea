"""monitord ingest without servers: decoding, the batch rules, the producer's stream headers,
the ``ingest`` endpoint property and the configuration's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.events import make_event
from monitord.ingest.batch import classify, plan
from monitord.ingest.config import ConfigError, load_config
from monitord.ingest.decode import DecodeError, decode
from monitord.ingest.store import Mark
from sinks.amqp.broker import _message
from sinks.amqp.config import parse_amqp_url
from sinks.amqp.stream import PRODUCER, SEQ, SLOT, SLOTS, seq_of, slot_of
from sinks.encoding import encode_json
from sinks.runtime.base import SinkError
from sinks.runtime.spool.segments import Position, Record

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
    ],
)
def test_decode_refuses_with_a_reason(key: str, body: bytes, kind: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode(key, body)
    assert info.value.kind == kind


# ---------------------------------------------------------------- batch rules


def _msg(tag: int, name: str, wf: str, producer: str | None, seq: int | None, user: str = "u"):
    attrs: dict[str, object] = {"xwf.id": wf, "ts": 1}
    if name != "wf.plan":
        attrs["restart_count"] = 0
    if name == "xwf.end":
        attrs["status"] = 0
    body = encode_json(make_event(name, attrs))
    headers = {PRODUCER: producer, SEQ: seq} if producer is not None else None
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


def test_classify_refuses_bad_headers_and_oversized_bodies() -> None:
    body = encode_json(make_event("xwf.start", {"xwf.id": "a", "ts": 1.0, "restart_count": 0}))
    big = classify(1, "stampede.xwf.start", body, None, "u", max_body=10)
    assert big.reason == "oversized"
    bad = classify(1, "stampede.xwf.start", body, {PRODUCER: "p", SEQ: "7"}, "u", 1 << 20)
    assert bad.reason == "malformed"
    good = classify(1, "stampede.xwf.start", body, {PRODUCER: "p", SEQ: 7}, "u", 1 << 20)
    assert good.reason is None and good.seq == 7 and good.event is not None


# ---------------------------------------------------------------- producer side


def test_stream_headers_come_from_the_spool_position() -> None:
    first = Record(Position(3, 0), Position(3, 90), "stampede.xwf.start", b"{}", "spool-1")
    later = Record(Position(3, 90), Position(3, 200), "stampede.xwf.end", b"{}", "spool-1")
    next_segment = Record(Position(4, 0), Position(4, 50), "stampede.xwf.end", b"{}", "spool-1")
    seqs = [seq_of(r.start) for r in (first, later, next_segment)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    msg = _message(later, "alice")
    assert msg.headers == {
        PRODUCER: "spool-1",
        SEQ: seq_of(Position(3, 90)),
        SLOT: slot_of("spool-1"),
    }
    assert msg.user_id == "alice"
    assert msg.message_id == later.message_id
    assert _message(later, "alice").headers == msg.headers  # republished: the same position
    slots = {slot_of(f"spool-{i}") for i in range(1000)}
    assert slots == {str(n) for n in range(SLOTS)}


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
