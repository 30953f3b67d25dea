"""PostgreSQL: a batch's reads of the ingest's store (marks, streams, workflows) share one
pooled connection (``Store.reading``: one checkout and its pre-ping, not one a read), and a
connection the server dropped meanwhile still fails the read as an outage (retryable), after
which the next batch's reads get a working one (issue 30, the ingest's database thread)."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text

from monitord.ingest.store import Store
from sinks.runtime.base import SinkError


def _store(url: str) -> tuple[Store, list[int]]:
    store = Store(url, master_db_url=url)
    store.open()
    checkouts: list[int] = []
    event.listen(store.sink._require_engine(), "checkout", lambda *_: checkouts.append(1))
    return store, checkouts


def test_a_batchs_reads_take_one_checkout(pg_url: str) -> None:
    store, checkouts = _store(pg_url)
    try:
        with store.reading():
            assert store.marks({"p1", "p2"}) == {}
            assert store.streams({("s", "wf")}) == {}
            assert store.workflows({"wf"}) == set()
        assert len(checkouts) == 1
        store.marks({"p1"})  # (outside: a checkout of its own, as before)
        assert len(checkouts) == 2
    finally:
        store.close()


def test_a_connection_dropped_while_held_fails_the_read_as_an_outage(pg_url: str) -> None:
    store, _ = _store(pg_url)
    engine = store.sink._require_engine()
    try:
        with pytest.raises(SinkError) as failed, store.reading():
            pid = store._read(text("SELECT pg_backend_pid()"))[0][0]
            with engine.connect() as other:
                other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            store.marks({"p1"})
        assert failed.value.retryable
        with store.reading():  # the next batch: a working connection
            assert store.marks({"p1"}) == {}
    finally:
        store.close()
