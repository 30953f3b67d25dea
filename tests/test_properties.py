"""Properties file syntax and boolean values (spec 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitord.core.readers.properties import boolean_property, parse_properties, read_properties

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def test_separators_comments_and_inline_comment() -> None:
    text = (
        "# comment\n! also comment\n\n"
        "a=1\nb : two words\nc three\n  d=  padded  \n"
        "e=value # trailing comment\n"
    )
    assert parse_properties(text) == {
        "a": "1",
        "b": "two words",
        "c": "three",
        "d": "padded",
        "e": "value",
    }


def test_continuation_and_escapes() -> None:
    text = (
        "url=jdbc\\:sqlite\\:/x.db\n"
        "long=first \\\n      second\n"
        "hash=a\\#b\n"
        "tab=x\\ty\n"
        "uni=\\u00e9\n"
        "key\\ with\\ space=v\n"
        "backslash=ends\\\\\n"
        "next=1\n"
    )
    assert parse_properties(text) == {
        "url": "jdbc:sqlite:/x.db",
        "long": "first second",
        "hash": "a#b",
        "tab": "x\ty",
        "uni": "é",
        "key with space": "v",
        "backslash": "ends\\",
        "next": "1",
    }


def test_substitution() -> None:
    props = parse_properties("a=${user.home}/x ${unknown}\n", {"user.home": "/home/u"})
    assert props["a"] == "/home/u/x ${unknown}"


def test_later_key_wins() -> None:
    assert parse_properties("a=1\na=2\n") == {"a": "2"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("on", True),
        ("yes", True),
        (" 3 ", True),
        ("0", False),
        ("-1", False),
        ("false", False),
        ("off", False),
        ("", False),
        (None, False),
        ("maybe", False),
    ],
)
def test_boolean_property(value: str | None, expected: bool) -> None:
    assert boolean_property(value) is expected


def test_corpus_properties_files() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    files = sorted(CORPUS.glob("*/input/pegasus.*.properties"))
    assert files
    for path in files:
        props = read_properties(str(path))
        assert props["pegasus.catalog.replica.output.db.url"].startswith("jdbc:sqlite:/")
        assert not any(k.startswith(("#", "!")) for k in props)
