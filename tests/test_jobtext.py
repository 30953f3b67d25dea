"""Stored job text (stdout.text / stderr.text) and integrity metrics vs the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.jobtext import (
    stderr_text_from_err,
    stdout_text_from_records,
    stdout_text_without_kickstart,
)
from monitord.core.readers.bp import parse_bp_line
from monitord.core.readers.integrity import event_count, integrity_metrics
from monitord.core.readers.kickstart import KickstartRecord, parse_kickstart
from monitord.core.readers.payloads import PAYLOAD_END as E
from monitord.core.readers.payloads import PAYLOAD_START as S

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
EVENT_TEXT_LIMIT = 65535


def inv(**data) -> KickstartRecord:
    return KickstartRecord("invocation", data)


# --- unit ---------------------------------------------------------------------------


def test_pieces_numbering_and_signal_prefix():
    records = [
        inv(stdout="out1\n", stderr="err1"),
        KickstartRecord("task", {"id": "1"}),
        inv(),
        inv(stderr="e'3", signalled={"signal": "9", "action": "killed", "corefile": "false"}),
    ]
    text, payloads = stdout_text_from_records(records)
    assert text == (
        "#@ 1 stdout%0Aout1%0A%0A"
        "#@ 1 stderr%0A err1%0A"
        "#@ 3 stderr%0AJob was killed with signal 9e%273%0A"
    )
    assert payloads == []


def test_no_output_gives_empty_text():
    assert stdout_text_from_records([inv(hostname="h"), KickstartRecord("clustered", {})]) == (
        "",
        [],
    )


def test_payloads_removed_and_returned_in_record_order():
    p1 = '{"monitoring_event": "int.metric", "payload": [{"event": "check"}]}'
    p2 = '{"monitoring_event": "metadata", "payload": [{"name": "a", "value": 1}]}'
    text, payloads = stdout_text_from_records(
        [inv(stdout=f"x {S}{p1}{E} y\n"), inv(stderr=f"{S}{p2}{E}")]
    )
    assert text == "#@ 1 stdout%0Ax  y%0A%0A#@ 2 stderr%0A %0A"
    assert [p["monitoring_event"] for p in payloads] == ["int.metric", "metadata"]


def test_shared_budget_cuts_and_drops_later_pieces():
    # black-box observation of the reference (5.1.3): 40000 'a', then 40000 'b', then "c"
    records = [inv(stdout="a" * 40000 + "\n"), inv(stdout="b" * 40000 + "\n"), inv(stdout="ccc\n")]
    text, _ = stdout_text_from_records(records)
    first = "#@ 1 stdout%0A" + "a" * 40000 + "%0A%0A"
    assert text.startswith(first)
    assert text[len(first) :] == "#@ 2 stdout%0A" + "b" * 25494 + "%0A"
    assert len(text) == 65531


def test_cut_is_applied_before_quoting():
    # a quoted piece may outgrow the remainder; the event-level cut handles that
    text, _ = stdout_text_from_records([inv(stdout="'" * 70000)])
    assert text.startswith("#@ 1 stdout%0A%27%27")
    assert text.count("%27") == 65534


def test_err_and_plain_stdout_are_cut_then_quoted():
    long = "é" * 70000
    err_text, _ = stderr_text_from_err(long)
    assert err_text == "%C3%A9" * 63535
    out_text, _ = stdout_text_without_kickstart("'" * 63536)
    assert out_text == "#@ 1 stdout%0A" + "%27" * 63535
    p = '{"monitoring_event": "int.metric", "payload": []}'
    assert stderr_text_from_err(f"a\n{S}{p}{E}\nb\n") == (
        "a%0A%0Ab%0A",
        [{"monitoring_event": "int.metric", "payload": []}],
    )


def test_integrity_metrics_merge_and_sources():
    records = [
        inv(
            outputs={"f1": {"checksum.timing": "0.25"}, "f2": {"checksum.timing": "0.5"}, "f3": {}}
        ),
        inv(outputs={"g": {"checksum.timing": "1.0"}}),
        KickstartRecord(
            "multipart", {"integrity_summary": {"succeeded": 2, "failed": 1, "duration": 0.5}}
        ),
        KickstartRecord("multipart", {"location": {"site": "x"}}),
    ]
    err_payloads = [
        {
            "monitoring_event": "int.metric",
            "payload": [
                {
                    "event": "check",
                    "file_type": "input",
                    "succeeded": 1,
                    "failed": 0,
                    "duration": 0.25,
                },
                {"event": "check", "file_type": "output", "count": 2, "duration": 1.5},
            ],
        },
        {"monitoring_event": "metadata", "payload": [{"name": "a"}]},
    ]
    metrics = integrity_metrics(records, [], err_payloads)
    by_key = {(m["type"], m["file_type"]): m for m in metrics}
    assert set(by_key) == {("compute", "output"), ("check", "input"), ("check", "output")}
    assert by_key["compute", "output"]["count"] == 3
    assert by_key["compute", "output"]["duration"] == 1.75
    check_in = by_key["check", "input"]
    assert (check_in["succeeded"], check_in["failed"], check_in["duration"]) == (3, 1, 0.75)
    assert event_count(check_in) == 4
    assert event_count(by_key["check", "output"]) == 2


def test_integrity_string_durations_concatenate_like_the_reference():
    # observed: .err "0.25" then kickstart-stdout "0.5" are stored as "0.250.5"
    def payload(duration):
        item = {"event": "check", "file_type": "input", "succeeded": 1, "failed": 0}
        return {"monitoring_event": "int.metric", "payload": [dict(item, duration=duration)]}

    (metric,) = integrity_metrics([], [payload("0.5")], [payload("0.25")])
    assert metric["duration"] == "0.250.5"
    assert event_count(metric) == 2


# --- corpus -------------------------------------------------------------------------


def _main_end_events():
    if not CORPUS.is_dir():
        pytest.skip("corpus not available at ../shared/corpus")
    for sample in sorted(CORPUS.iterdir()):
        bp = sample / "expected" / "events.bp"
        if not bp.is_file():
            continue
        events = [parse_bp_line(line) for line in bp.read_text().splitlines() if line.strip()]
        metrics: dict[tuple[str, str], list[dict[str, str]]] = {}
        for ev in events:
            if ev["event"] == "stampede.int.metric":
                metrics.setdefault((ev["job.id"], ev["job_inst.id"]), []).append(ev)
        for ev in events:
            if ev["event"] == "stampede.job_inst.main.end":
                yield sample, ev, metrics.get((ev["job.id"], ev["job_inst.id"]), [])


def _read(path: Path) -> str | None:
    return path.read_text(errors="replace") if path.is_file() else None


def test_corpus_stderr_text_from_err_files():
    checked = 0
    for sample, ev, _ in _main_end_events():
        if "stderr.text" not in ev or not ev.get("stderr.file"):
            continue
        err = _read(sample / "input" / ev["stderr.file"])
        if err is None:
            continue
        assert stderr_text_from_err(err)[0][:EVENT_TEXT_LIMIT] == ev["stderr.text"], (
            sample.name,
            ev["job.id"],
        )
        checked += 1
    assert checked >= 15


def test_corpus_stdout_text_from_kickstart_files():
    checked = 0
    for sample, ev, _ in _main_end_events():
        if "stdout.text" not in ev or not ev.get("stdout.file"):
            continue
        out = _read(sample / "input" / ev["stdout.file"])
        if out is None:
            continue
        records = parse_kickstart(out)
        if any(r.kind == "invocation" for r in records):
            text = stdout_text_from_records(records)[0]
        else:
            text = stdout_text_without_kickstart(out)[0]
        assert text[:EVENT_TEXT_LIMIT] == ev["stdout.text"], (sample.name, ev["job.id"])
        checked += 1
    assert checked >= 15


def test_corpus_int_metrics():
    checked = 0
    for sample, ev, expected in _main_end_events():
        out = _read(sample / "input" / ev["stdout.file"]) if ev.get("stdout.file") else None
        err = _read(sample / "input" / ev["stderr.file"]) if ev.get("stderr.file") else None
        if out is None or err is None:
            continue
        records = parse_kickstart(out)
        _, record_payloads = stdout_text_from_records(records)
        _, err_payloads = stderr_text_from_err(err)
        got = integrity_metrics(records, record_payloads, err_payloads)
        want = sorted(
            (m["type"], m["file_type"], int(m["count"]), float(m["duration"])) for m in expected
        )
        have = sorted(
            (m["type"], m["file_type"], int(event_count(m)), float(m["duration"])) for m in got
        )
        assert len(have) == len(want), (sample.name, ev["job.id"])
        for h, w in zip(have, want, strict=True):
            assert h[:3] == w[:3]
            assert h[3] == pytest.approx(w[3], abs=1e-6)
        checked += len(want)
    assert checked >= 10
