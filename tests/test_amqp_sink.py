"""AMQP sink without a broker: URL and properties, event filter, encoding, the durable spool.

The broker-facing behaviour (confirms, outages, replays) is in ``test_amqp_broker.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import structlog

from monitord.core.events import make_event
from sinks.amqp.config import endpoint_properties, parse_amqp_url, scrub
from sinks.amqp.connection import PublishFailed
from sinks.amqp.encoder import encode_body, encode_selected, routing_key
from sinks.amqp.event_filter import DEFAULT_EVENTS, KNOWN_EVENTS, EventFilter
from sinks.amqp.sink import AMQPSink
from sinks.amqp.stream import read_identity
from sinks.registry import build_sink
from sinks.runtime.base import SinkError
from sinks.runtime.codec import decode_marked
from sinks.runtime.factory import SinkRequest
from sinks.runtime.runner import SinkWorker
from sinks.runtime.spool import BatchSpool, SpoolSettings
from sinks.runtime.spool.segments import Spool, SpoolError, encode_frame
from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, require_corpus
from tests.event_check import wire
from tests.proxies import free_port

SECRET = "s3cr%2Fet"  # URL-quoted "s3cr/et"


# ---------------------------------------------------------------- URL and properties


def test_url_with_vhost_and_exchange() -> None:
    cfg = parse_amqp_url("amqp://u:p@h:5673/panorama/monitoring")
    assert (cfg.host, cfg.port, cfg.user, cfg.password) == ("h", 5673, "u", "p")
    assert (cfg.vhost, cfg.exchange, cfg.tls) == ("panorama", "monitoring", False)


def test_url_without_vhost_uses_the_default_one_and_default_ports() -> None:
    cfg = parse_amqp_url("amqp://u:p@h/monitoring")
    assert (cfg.vhost, cfg.exchange, cfg.port) == ("/", "monitoring", 5672)
    tls = parse_amqp_url("amqps://u:p@h/x/monitoring")
    assert (tls.port, tls.tls, tls.vhost) == (5671, True, "x")
    assert parse_amqp_url("amqp://u:p@h:1//ex").vhost == "/"


def test_url_parts_are_unquoted_and_the_safe_url_has_no_password() -> None:
    cfg = parse_amqp_url(f"amqp://us%40er:{SECRET}@h:5672/v%2Fh/ex.name")
    assert (cfg.user, cfg.password, cfg.vhost, cfg.exchange) == (
        "us@er",
        "s3cr/et",
        "v/h",
        "ex.name",
    )
    assert "s3cr" not in cfg.safe_url and "s3cr" not in repr(cfg)
    assert cfg.safe_url == "amqp://us%40er@h:5672/v%2Fh/ex.name"


def test_producer_key_depends_on_the_endpoint_not_on_the_password() -> None:
    a = parse_amqp_url("amqp://u:one@h:5672/v/ex")
    b = parse_amqp_url("amqp://u:two@h:5672/v/ex")
    c = parse_amqp_url("amqp://u:one@h:5672/v/other")
    assert a.endpoint_key == b.endpoint_key != c.endpoint_key
    assert a.producer_path("/run") == f"/run/monitord.amqp-producer/{a.endpoint_key}"
    d = parse_amqp_url("amqp://u:p@h/ex", {"spool": "/var/spool/m"})
    assert d.producer_path("/run") == f"/var/spool/m/{d.endpoint_key}"


@pytest.mark.parametrize(
    "url",
    [
        f"amqp://u:{SECRET}@h:5672/",
        f"amqp://u:{SECRET}@h:notaport/ex",
        f"amqp://u:{SECRET}@/ex",
    ],
)
def test_bad_urls_fail_without_quoting_the_password(url: str) -> None:
    with pytest.raises(SinkError) as err:
        parse_amqp_url(url)
    assert "s3cr" not in str(err.value)


def test_scrub_masks_raw_and_quoted_password() -> None:
    assert scrub("a s3cr/et b s3cr%2Fet c", "s3cr/et") == "a *** b *** c"


def test_endpoint_properties_named_default_and_catalog_wide() -> None:
    props = {
        "pegasus.catalog.*.timeout": "7",
        "pegasus.catalog.workflow.url": "amqp://u:p@h/default",
        "pegasus.catalog.workflow.events": "stampede.xwf.*",
        "pegasus.catalog.workflow.amqp.url": "amqp://u:p@h/named",
        "pegasus.catalog.workflow.amqp.events": "*",
        "pegasus.catalog.workflow.amqp.timeout": "3.5",
    }
    named = endpoint_properties(props, "amqp://u:p@h/named")
    assert named == {"timeout": "3.5", "events": "*"}
    default = endpoint_properties(props, "amqp://u:p@h/default")
    assert default == {"timeout": "7", "events": "stampede.xwf.*"}
    cfg = parse_amqp_url("amqp://u:p@h/named", named)
    assert cfg.events.everything and cfg.timeout == 3.5
    with pytest.raises(SinkError):
        parse_amqp_url("amqp://u:p@h/x", {"timeout": "soon"})


# ---------------------------------------------------------------- event filter


def test_default_filter_is_the_four_dashboard_events() -> None:
    f = EventFilter.from_property(None)
    assert {n for n in KNOWN_EVENTS if f.accepts(n)} == set(DEFAULT_EVENTS)
    assert not f.accepts("stampede.job_inst.main.end")


def test_star_selects_everything_even_unknown_events() -> None:
    f = EventFilter.from_property("stampede.inv.end,*")
    assert f.accepts("stampede.job_inst.remote_error")
    assert all(f.accepts(n) for n in KNOWN_EVENTS)


def test_elements_are_regexes_searched_in_the_known_names() -> None:
    f = EventFilter.from_property("stampede.xwf.*")
    assert f.names == {
        "stampede.xwf.start",
        "stampede.xwf.end",
        "stampede.xwf.map.subwf_job",
        "stampede.xwf.meta",
    }
    g = EventFilter.from_property("held,inv\\.end$")
    assert g.names == {
        "stampede.job_inst.held.start",
        "stampede.job_inst.held.end",
        "stampede.inv.end",
    }
    assert not g.accepts("stampede.job_inst.remote_error")  # not in the known list
    assert EventFilter.from_property(" stampede.inv.end").names == frozenset()  # no trimming


def test_invalid_regex_fails_the_endpoint() -> None:
    with pytest.raises(SinkError, match="regular expression"):
        EventFilter.from_property("*.end")
    with pytest.raises(SinkError):
        build_sink(
            "amqp://u:p@h/ex",
            run_dir="/tmp",
            restart=True,
            properties={"pegasus.catalog.workflow.events": "*.end"},
        )


# ---------------------------------------------------------------- encoding


def _inv_end() -> object:
    return make_event(
        "inv.end",
        {
            "xwf.id": "W",
            "job.id": "ls_ID1",
            "job_inst.id": 2,
            "inv.id": 1,
            "ts": 1677911060,
            "dur": 0.005,
            "parent__task.id": "T",
            "level": "Error",
            "invocations": [{"a": 1}],
            "exitcode": 0,
        },
    )


def test_routing_key_is_the_full_event_name_and_body_is_json() -> None:
    event = _inv_end()
    assert routing_key(event) == "stampede.inv.end"  # type: ignore[arg-type]
    body = encode_body(event)  # type: ignore[arg-type]
    decoded = json.loads(body)
    assert list(decoded)[-1] == "event" and decoded["event"] == "stampede.inv.end"
    assert decoded["xwf_id"] == "W" and decoded["job_inst_id"] == 2 and decoded["inv_id"] == 1
    assert decoded["parent_task_id"] == "T" and decoded["level"] == "Error"
    assert decoded["ts"] == 1677911060 and decoded["invocations"] == [{"a": 1}]
    assert not any("." in key for key in decoded)
    assert b'"xwf_id": "W", ' in body  # json.dumps separators, as the reference


def test_encode_selected_filters_and_keeps_order() -> None:
    a = make_event("wf.plan", {"xwf.id": "W", "ts": 1})
    b = make_event("xwf.start", {"xwf.id": "W", "ts": 2, "restart_count": 0})
    c = make_event(
        "inv.end",
        {"xwf.id": "W", "ts": 3, "job.id": "j", "job_inst.id": 1, "inv.id": 1, "exitcode": 0},
    )
    keys = [k for k, _ in encode_selected([a, b, c], EventFilter.from_property(None))]
    assert keys == ["stampede.wf.plan", "stampede.inv.end"]


# ---------------------------------------------------------------- spool


def _records(n: int, start: int = 0) -> list[tuple[str, bytes]]:
    return [(f"stampede.e{i % 3}", f'{{"n": {i}}}'.encode()) for i in range(start, start + n)]


def _drain(spool: Spool) -> list[bytes]:
    out: list[bytes] = []
    while True:
        batch = spool.read_batch(7)
        if not batch:
            return out
        spool.commit(batch[-1].end, len(batch))
        out.extend(r.body for r in batch)


def test_spool_reads_in_order_and_the_cursor_survives_reopening(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "s"))
    spool.open()
    spool.append(_records(10))
    spool.sync()
    assert spool.pending == 10
    first = spool.read_batch(4)
    assert [r.routing_key for r in first] == [
        "stampede.e0",
        "stampede.e1",
        "stampede.e2",
        "stampede.e0",
    ]
    spool.commit(first[-1].end, len(first))
    unconfirmed = spool.read_batch(3)  # read, never confirmed: must come again
    assert len(unconfirmed) == 3 and spool.pending == 6
    spool.close()

    again = Spool(str(tmp_path / "s"))
    again.open()
    assert again.pending == 6 and again.spool_id == spool.spool_id
    again.append(_records(2, start=10))
    assert _drain(again) == [f'{{"n": {i}}}'.encode() for i in range(4, 12)]
    assert again.pending == 0
    again.close()


def test_rewind_resends_what_was_not_confirmed(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "s"))
    spool.open()
    spool.append(_records(5))
    batch = spool.read_batch(10)
    spool.commit(batch[1].end, 2)
    spool.rewind()
    assert [r.body for r in spool.read_batch(10)] == [r.body for r in batch[2:]]
    spool.close()


def test_message_ids_are_unique_and_follow_the_spool_order(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "s"), segment_bytes=200)
    spool.open()
    for i in range(20):
        spool.append(_records(1, start=i))
    ids: list[str] = []
    while batch := spool.read_batch(3):
        ids.extend(r.message_id for r in batch)
        spool.commit(batch[-1].end, len(batch))
    assert len(ids) == len(set(ids)) == 20
    positions = [tuple(int(x) for x in i.split(":")[1:]) for i in ids]
    assert positions == sorted(positions)
    assert all(i.startswith(spool.spool_id + ":") for i in ids)
    spool.close()


def test_segments_rotate_and_delivered_ones_are_deleted(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spool = Spool(str(path), segment_bytes=100)
    spool.open()
    for i in range(30):
        spool.append(_records(1, start=i))
    segs = sorted(path.glob("*.seg"))
    assert len(segs) > 5
    body = _drain(spool)
    assert body == [f'{{"n": {i}}}'.encode() for i in range(30)]
    assert len(list(path.glob("*.seg"))) <= 2  # the write segment (and the one the cursor ends)
    spool.close()
    reopened = Spool(str(path), segment_bytes=100)
    reopened.open()
    assert reopened.pending == 0 and reopened.read_batch() == []
    reopened.close()


def test_a_torn_last_record_is_cut_off_on_open(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spool = Spool(str(path))
    spool.open()
    spool.append(_records(3))
    spool.sync()
    spool.close()
    seg = next(path.glob("*.seg"))
    whole = seg.stat().st_size
    with open(seg, "ab") as fh:
        fh.write(encode_frame("stampede.torn", b"x" * 50)[:-10])  # crash mid-write
    again = Spool(str(path))
    again.open()
    assert again.pending == 3 and seg.stat().st_size == whole
    again.append(_records(1, start=3))
    assert _drain(again) == [f'{{"n": {i}}}'.encode() for i in range(4)]
    again.close()


def test_a_corrupt_record_in_an_old_segment_does_not_stall_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "s"
    spool = Spool(str(path), segment_bytes=20)
    spool.open()
    for i in range(4):
        spool.append(_records(1, start=i))  # each record fills a segment
    spool.close()
    first = sorted(path.glob("*.seg"))[0]
    data = bytearray(first.read_bytes())
    data[-2] ^= 0xFF
    first.write_bytes(bytes(data))
    again = Spool(str(path), segment_bytes=20)
    again.open()
    assert _drain(again) == [f'{{"n": {i}}}'.encode() for i in range(1, 4)]
    again.close()


def test_a_spool_is_owned_by_one_daemon(tmp_path: Path) -> None:
    one = Spool(str(tmp_path / "s"))
    one.open()
    with pytest.raises(SpoolError, match="in use"):
        Spool(str(tmp_path / "s")).open()
    one.close()
    two = Spool(str(tmp_path / "s"))
    two.open()
    two.close()


def test_the_writer_and_the_publisher_threads_share_the_spool(tmp_path: Path) -> None:
    import threading

    spool = Spool(str(tmp_path / "s"), segment_bytes=4096)
    spool.open()
    got: list[bytes] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set() or spool.unread():
            batch = spool.read_batch(50)
            if batch:
                spool.commit(batch[-1].end, len(batch))
                got.extend(r.body for r in batch)
            else:
                time.sleep(0.001)

    t = threading.Thread(target=reader)
    t.start()
    for i in range(0, 2000, 10):
        spool.append(_records(10, start=i))
    done.set()
    t.join(30)
    assert got == [f'{{"n": {i}}}'.encode() for i in range(2000)]
    assert spool.pending == 0
    spool.close()


# ---------------------------------------------------------------- the sink, broker unreachable


def test_the_runtime_spools_while_the_broker_is_unreachable_and_keeps_it_for_later(
    tmp_path: Path,
) -> None:
    """The sink on the one delivery runtime: a publish that cannot reach the broker is a
    retryable error, so the runtime spools the batches (the producer never waits) and leaves
    them, in order, for the next daemon; no line shows the password."""
    port = free_port()
    url = f"amqp://user:{SECRET}@127.0.0.1:{port}/vh/ex"
    props = {"pegasus.catalog.workflow.events": "*"}
    events = [
        make_event("xwf.start", {"xwf.id": "W", "ts": i, "restart_count": 0}) for i in range(50)
    ]
    settings = SpoolSettings(root=str(tmp_path / "spool"), drain_timeout=0.5, first_backoff=0.05)
    with structlog.testing.capture_logs() as logs:
        sink = build_sink(url, run_dir=str(tmp_path), restart=True, properties=props)
        assert "s3cr" not in sink.name
        with pytest.raises(SinkError, match="AMQP broker unavailable") as refused:
            sink.write_batch(events[:1])
        assert refused.value.retryable
        sink.close()
        worker = SinkWorker(sink, spool=settings)
        worker.start()
        t0 = time.monotonic()
        worker.put(events[:30])
        worker.put(events[30:])
        worker.flush()
        assert time.monotonic() - t0 < 5.0  # spooled, not waiting for the broker
        worker.request_stop()
        worker.join()
    health = worker.health()
    assert health.left_behind == 50 and health.spool_path == settings.path_for(sink)
    assert any(e["event"] == "sink down, spooling its events until it is back" for e in logs)
    assert "s3cr" not in repr(logs) and "s3cr" not in repr(health)
    left = BatchSpool(settings.path_for(sink))
    left.open()
    assert left.events == 50
    batches = []
    while (head := left.head()) is not None:
        batches.append(decode_marked(head[1])[0])
        left.commit()
    left.close()
    assert [wire(e)["ts"] for batch in batches for e in batch] == list(range(50))


class FlakyLink:
    """A broker connection that confirms the first ``confirms`` messages of the next publish,
    then fails it (a connection lost mid-batch); later publishes go through."""

    def __init__(self, confirms: int) -> None:
        self.confirms: int | None = confirms
        self.sent: list[tuple[Any, str]] = []

    def publish(self, config: object, messages: list[tuple[Any, str]]) -> None:
        confirms, self.confirms = self.confirms, None
        self.sent.extend(messages if confirms is None else messages[:confirms])
        if confirms is not None:
            raise PublishFailed("AMQP broker unavailable: connection lost", confirms)

    def close(self) -> None:
        pass


def test_a_retried_batch_publishes_only_what_the_broker_did_not_confirm(tmp_path: Path) -> None:
    """The runtime retries a failed batch as it was; the messages the broker confirmed before
    the failure are not published again, the rest keep their event numbers, and the producer's
    sequence numbers only grow."""
    config = parse_amqp_url("amqp://u:p@127.0.0.1:1/vh/ex", {"events": "*"})
    sink = AMQPSink(config, run_dir=str(tmp_path), restart=True, root_wf_uuid="W")
    sink.open()
    assert sink.link is not None
    sink.link.close()
    link = FlakyLink(confirms=3)
    sink.link = link  # type: ignore[assignment]
    events = [
        make_event("xwf.start", {"xwf.id": "W", "ts": i, "restart_count": 0}) for i in range(15)
    ]
    with pytest.raises(SinkError) as failed:
        sink.write_batch(events[:10])
    assert failed.value.retryable
    sink.write_batch(events[:10])  # the runtime's retry of the same batch
    sink.write_batch(events[10:])
    sink.close()
    ids = [read_identity(m.headers or {}) for m, _ in link.sent]
    assert [i.number for i in ids] == list(range(1, 16))
    assert [json.loads(m.body)["ts"] for m, _ in link.sent] == list(range(15))
    seqs = [i.seq for i in ids if i.seq is not None]
    assert len(seqs) == len(ids)
    assert seqs == sorted(set(seqs))


@pytest.mark.parametrize(
    ("name", "value"),
    [("id", "my laptop"), ("id", "0" * 31 + "\u00e9"), ("id", "0" * 33), ("id", ""), ("seq", "-1")],
)
def test_a_hand_edited_producer_file_is_refused_and_the_events_wait_in_the_spool(
    tmp_path: Path, name: str, value: str
) -> None:
    """An id or high-water file not of the form the producer writes (an id with a space makes
    every ``monitord-id`` malformed) is refused before anything is published: a retryable
    error naming the file, so the runtime spools the events; the file is left as it is, and
    once put right the sink opens with the producer's id."""
    config = parse_amqp_url("amqp://u:p@127.0.0.1:1/vh/ex", {"events": "*"})
    sink = AMQPSink(config, run_dir=str(tmp_path), restart=True, root_wf_uuid="W")
    sink.open()
    made = sink.producer.id
    sink.close()
    path = Path(sink.producer.path) / name
    kept = path.read_text(encoding="ascii") if path.exists() else "0"
    path.write_text(value + "\n", encoding="utf-8")
    with pytest.raises(SinkError, match="not what monitord writes") as refused:
        sink.open()
    assert refused.value.retryable and str(path) in str(refused.value)
    events = [
        make_event("xwf.start", {"xwf.id": "W", "ts": i, "restart_count": 0}) for i in range(20)
    ]
    settings = SpoolSettings(root=str(tmp_path / "spool"), drain_timeout=0.3, first_backoff=0.05)
    worker = SinkWorker(sink, spool=settings)
    worker.start()
    worker.put(events)
    worker.flush()
    worker.request_stop()
    worker.join()
    health = worker.health()
    assert health.left_behind == 20 and "not what monitord writes" in str(health.last_error)
    assert path.read_text(encoding="utf-8") == value + "\n"
    path.write_text(kept, encoding="ascii")
    sink.open()
    assert sink.producer.id == made
    sink.close()


def test_the_sink_a_request_asks_for_uses_the_named_endpoint_properties(tmp_path: Path) -> None:
    url = "amqp://u:p@127.0.0.1:1/ex"
    properties = {
        "pegasus.catalog.workflow.amqp.url": url,
        "pegasus.catalog.workflow.amqp.events": "stampede.xwf.*",
        "pegasus.catalog.workflow.amqp.drain_timeout": "2",
    }
    with structlog.testing.capture_logs() as logs:
        sink = AMQPSink.from_request(
            SinkRequest(url, run_dir=str(tmp_path), restart=False, properties=properties)
        )
    assert sink.config.events.names == EventFilter.from_property("stampede.xwf.*").names
    assert sink.config.drain_timeout == 2.0
    # the runtime's drain applies (docs/amqp.md): an endpoint that sets its own is told so
    ignored = [e for e in logs if "drain_timeout is ignored" in e["event"]]
    assert len(ignored) == 1 and ignored[0]["log_level"] == "warning"
    del properties["pegasus.catalog.workflow.amqp.drain_timeout"]
    with structlog.testing.capture_logs() as logs:
        AMQPSink.from_request(
            SinkRequest(url, run_dir=str(tmp_path), restart=False, properties=properties)
        )
    assert not [e for e in logs if "drain_timeout" in e["event"]]


def test_cli_replay_with_an_unreachable_broker_still_fills_the_database(tmp_path: Path) -> None:
    """An AMQP endpoint beside the default SQLite DB: the broker's absence costs nothing else."""
    require_corpus()
    run = tmp_path / "run"
    dagman_out = copy_submit_dir(CORPUS / "process_wf_success" / "input", run)
    home = tmp_path / "home"
    home.mkdir()
    url = f"amqp://user:{SECRET}@127.0.0.1:{free_port()}/vh/ex"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "monitord.cli",
            f"-Dpegasus.catalog.workflow.amqp.url={url}",
            "-Dpegasus.catalog.workflow.amqp.events=*",
            "-Dpegasus.monitord.spool.drain_timeout=1",
            "--no-dashboard",
            "-r",
            dagman_out.name,
        ],
        cwd=run,
        env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "s3cr" not in proc.stderr and "s3cr" not in proc.stdout
    import sqlite3

    db = next(run.glob("*.stampede.db"))
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM invocation").fetchone()[0] > 0
    con.close()
    expected = sum(
        1 for line in open(CORPUS / "process_wf_success" / "expected" / "events.bp") if line.strip()
    )
    (spool_dir,) = [p for p in (run / "monitord.spool").iterdir() if any(p.iterdir())]
    spool = BatchSpool(str(spool_dir))
    spool.open()
    assert spool.events == expected
    spool.close()
