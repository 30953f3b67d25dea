"""``monitord.system.collector.Paused``: the collector paused for a block, then as it was."""

from __future__ import annotations

import gc

import pytest

from monitord.system.collector import Paused
from tests.collector_check import collector_after


def test_paused_pauses_the_collector_and_restores_it_even_on_an_error() -> None:
    assert gc.isenabled()
    with Paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ImportError), Paused():
        raise ImportError("a module that does not load")
    assert gc.isenabled()


def test_paused_leaves_a_collector_the_caller_disabled_disabled() -> None:
    gc.disable()
    try:
        with Paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_leaving_the_pause_sets_off_no_collection(collections: list[int]) -> None:
    """The exit allocates nothing once the collector is back on (a ``@contextmanager``'s
    ``StopIteration`` did: one young collection over all the block made)."""
    kept: list[list[int]] = []
    gc.collect()
    collections.clear()
    with Paused():
        kept.extend([i] for i in range(3000))
    started = len(collections)  # before anything else allocates: its first container collects
    assert started == 0
    assert len(kept) == 3000


def test_settle_freezes_what_is_alive_and_sets_the_young_threshold_only() -> None:
    """The one settle of the replay's start-up and of the ingest (a fresh interpreter)."""
    settled = collector_after(
        "import sqlalchemy\nfrom monitord.system.collector import settle\nsettle(1234)"
    )
    assert settled.frozen > 10_000 and settled.threshold == [1234, 10, 10]
