"""A stock producer: the reference pegasus-monitord 5.1.3 (tests/oracle.py, a black box)
replays each corpus sample publishing every event to the exchange; ``monitord ingest`` loads
them (no stream headers: at least once, through the legacy partition) into a SQLite central
database, which must hold every row the reference's own SQLite replay holds (stampede-diff),
plus the dashboard's master rows of the root workflow; loaded twice, still exactly those rows."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS, CORPUS_TZ, copy_submit_dir, corpus_samples, require_corpus
from tests.ingest_harness import MASTER_TABLES, Broker, IngestProcess, TapMessage, wait_acked
from tests.oracle import find_oracle
from tests.servers import require_server
from tests.test_sql_servers import assert_same, row_counts


@pytest.fixture
def broker() -> Iterator[Broker]:
    made = Broker(require_server("amqp"), partitions=2)
    made.declare_tap()
    yield made
    made.delete()


@pytest.mark.parametrize("sample", corpus_samples() or ["corpus-missing"])
def test_reference_producer_into_sqlite(sample: str, broker: Broker, tmp_path: Path) -> None:
    """The reference's stream as the reference's own replay; then loaded twice (the whole
    stream again; every stretch of it again right after itself, as an ingest crash between
    commit and acknowledgement redelivers it), each into a fresh database: the keys of the
    schema refuse every row a second time, so the rows are still exactly the reference's."""
    require_corpus()
    oracle = find_oracle()
    central = tmp_path / "central.db"
    ingest = IngestProcess(broker, f"sqlite:///{central}", tmp_path, "1/1")
    ingest.start()
    try:
        ingest.wait_healthy()
        run = tmp_path / "run"
        dagman_out = copy_submit_dir(CORPUS / sample / "input", run)
        (tmp_path / "home").mkdir()
        proc = subprocess.run(
            [
                *oracle.tool("pegasus-monitord"),
                f"-Dpegasus.catalog.workflow.amqp.url={broker.url}",
                "-Dpegasus.catalog.workflow.amqp.events=*",
                "-r",
                dagman_out.name,
            ],
            cwd=run,
            env={**os.environ, "TZ": CORPUS_TZ, "HOME": str(tmp_path / "home")},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        wait_acked([ingest], broker.count(broker.tap))
        assert ingest.metric("monitord_ingest_messages_total", outcome="dead") == 0
    finally:
        ingest.stop()
    _assert_as_the_reference(sample, central)
    sent = broker.drain(broker.tap)
    assert sent and not any(headers for _, headers, _, _ in sent)  # a stock producer's
    # (a plan or a job seen again is logged; a stretch again rarely holds a wf.plan)
    seen_again = ("wf.plan ignored", "job.info ignored")
    for name, stream, lines in (
        ("twice", sent + sent, seen_again),
        ("redelivered", redelivered(sent), ()),
    ):
        db = tmp_path / f"{name}.db"
        log = _load(stream, db, tmp_path / name)
        _assert_as_the_reference(sample, db)
        for line in ("batch rejected, written row by row: rows skipped", *lines):
            assert line in log, log[-3000:]  # (docs/ingest.md)


def redelivered(sent: list[TapMessage], stretch: int = 40, again: int = 25) -> list[TapMessage]:
    """``sent`` with the last ``again`` messages of every ``stretch`` repeated right after it:
    what a consumer sees when it crashes after committing them and before acknowledging."""
    out: list[TapMessage] = []
    for i in range(0, len(sent), stretch):
        chunk = sent[i : i + stretch]
        out += chunk + chunk[-again:]
    return out


def _load(messages: list[TapMessage], db: Path, tmp: Path) -> str:
    """``messages`` published in order to a scratch topology and loaded by one ingest into
    the SQLite database ``db``: every one acknowledged as loaded (a stock producer's carry no
    marks), none dead-lettered.  Returns the ingest's log."""
    tmp.mkdir()
    made = Broker(require_server("amqp"), partitions=2)
    made.declare_tap()
    ingest = IngestProcess(made, f"sqlite:///{db}", tmp, "1/1")
    ingest.start()
    try:
        ingest.wait_healthy()
        made.publish(messages)
        wait_acked([ingest], len(messages))
        assert ingest.metric("monitord_ingest_messages_total", outcome="loaded") == len(messages)
        assert ingest.metric("monitord_ingest_messages_total", outcome="dead") == 0
    finally:
        ingest.stop()
        made.delete()
    return ingest.log.read_text()


def _assert_as_the_reference(sample: str, central: Path) -> None:
    expected = CORPUS / sample / "expected" / "stampede.db"
    tables = [t for t in row_counts(expected) if t not in MASTER_TABLES]
    assert_same(expected, central, "--tables", ",".join(tables))
    with sqlite3.connect(central) as con:
        roots = con.execute("SELECT wf_uuid FROM workflow WHERE parent_wf_id IS NULL").fetchall()
        masters = con.execute("SELECT wf_uuid FROM master_workflow").fetchall()
        states = con.execute("SELECT COUNT(*) FROM master_workflowstate").fetchone()[0]
    assert masters == roots and len(roots) == 1 and states >= 2
