"""The event classes are source generated from the catalogue (``core/event_classes.py``):
the checked-in file is what the generator makes now, and mypy sees every kind's fields, so
a misspelt field or keyword is a type error before it is a test failure (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core import eventgen
from monitord.core.catalogue import CATALOGUE, FIXED, NO_ROWS, _e
from monitord.core.eventbase import Fixed

ROOT = Path(__file__).resolve().parents[1]


def test_the_checked_in_classes_are_what_the_catalogue_generates_now() -> None:
    text = eventgen.TARGET.read_text(encoding="utf-8")
    assert text == eventgen.source(), "stale: run python -m monitord.core.eventgen"


def test_a_catalogue_change_makes_the_checked_in_classes_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grown = (*CATALOGUE, _e("test.kind", "xwf.id:s! ts:i! note:sn", NO_ROWS))
    monkeypatch.setattr(eventgen, "CATALOGUE", grown)
    text = eventgen.source()
    assert "class TestKind(WithFixed):" in text and "note: str | None = UNSET," in text
    assert text != eventgen.TARGET.read_text(encoding="utf-8")


def test_the_fixed_fields_spelt_out_for_mypy_are_the_catalogue_s() -> None:
    spelt = {k: v for k, v in Fixed.__annotations__.items() if k in Fixed.__slots__}
    spelt = {k: v for k, v in spelt.items() if k not in ("items", "tail", "mapping")}
    assert spelt == {a.field: eventgen.annotation(a) for a in FIXED}


def test_mypy_sees_a_misspelt_field_and_keyword(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "typo.py"
    snippet.write_text(
        "from monitord.core.events import XwfStart\n"
        "\n"
        "\n"
        "def restarts(ev: XwfStart) -> int:\n"
        "    return ev.restart_cout\n"
        "\n"
        "\n"
        'XwfStart(xwf_id="x", ts=1, restart_count=0, restart_cout=1)\n'
        'XwfStart(xwf_id="x", ts=1, restart_count="0")\n'
    )
    out, _, status = api.run([str(snippet), "--cache-dir", str(tmp_path / "cache")])
    assert status == 1, out
    assert '"XwfStart" has no attribute "restart_cout"' in out
    assert 'Unexpected keyword argument "restart_cout" for "XwfStart"' in out
    assert 'Argument "restart_count" to "XwfStart" has incompatible type "str"' in out
