"""``monitord.system.collector.loading``: the collector paused for a block, then as it was."""

from __future__ import annotations

import gc

import pytest

from monitord.system.collector import loading


def test_loading_pauses_the_collector_and_restores_it_even_on_an_error() -> None:
    assert gc.isenabled()
    with loading():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ImportError), loading():
        raise ImportError("a module that does not load")
    assert gc.isenabled()


def test_loading_leaves_a_collector_the_caller_disabled_disabled() -> None:
    gc.disable()
    try:
        with loading():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
