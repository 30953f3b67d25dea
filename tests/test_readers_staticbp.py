"""static.bp relay reader (spec 1.2)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from monitord.core.readers import staticbp
from monitord.core.readers.bp import parse_bp_line
from monitord.core.readers.staticbp import (
    StaticBPError,
    parse_static_bp,
    read_static_bp,
    static_bp_name,
    tokenize,
    tokenize_regex,
)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def test_record_ts_to_int_epoch_and_order_kept() -> None:
    line = (
        'ts=1970-02-06T22:59:29.144084Z event=task.info xwf.id=f00c task.id="ID0000001" '
        'type="1" argv="-l /"\n'
    )
    [(name, attrs)] = list(parse_static_bp([line]))
    assert name == "task.info"
    assert attrs == {
        "ts": 3193169,
        "xwf.id": "f00c",
        "task.id": "ID0000001",
        "type": "1",
        "argv": "-l /",
    }
    assert list(attrs) == ["ts", "xwf.id", "task.id", "type", "argv"]


def test_prefix_stripped_escapes_and_odd_ts_kept_verbatim() -> None:
    [(name, attrs)] = list(
        parse_static_bp(['ts=garbage event=stampede.xwf.meta key="a \\"b\\"" v=x\\\\y'])
    )
    assert name == "xwf.meta"
    assert attrs == {"ts": "garbage", "key": 'a "b"', "v": "x\\\\y"}


def test_bare_word_is_skipped() -> None:
    assert tokenize('a=1 solo b="x y"') == {"a": "1", "b": "x y"}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # empty quoted and empty bare values, an unterminated quote, a quote inside a bare word
        ('a="" b= c="x', {"a": "", "b": "", "c": "x"}),
        ('k=b"c d="\\"" e="\\"', {"k": 'b"c', "d": '"', "e": '"'}),
        # a repeated key keeps its first place and takes the last value, as a dict does
        ('k="1" j=2 k=3', {"k": "3", "j": "2"}),
        ('q="a b" r=x"y z"', {"q": "a b", "r": 'x"y'}),
    ],
)
def test_tokenize_quoted_bare_and_empty_values(line: str, expected: dict[str, str]) -> None:
    got = tokenize(line)
    assert got == expected
    assert list(got) == list(expected)


@pytest.mark.parametrize("bad", ["", "   \n", "event=task.info a=1", "ts=2020-01-01T00:00:00Z a=1"])
def test_line_without_ts_or_event_raises_with_location(bad: str) -> None:
    good = "ts=1970-01-01T00:00:01Z event=task.info\n"
    with pytest.raises(StaticBPError, match=r"wf\.static\.bp:2"):
        list(parse_static_bp([good, bad], path="wf.static.bp"))


def test_static_bp_name() -> None:
    assert static_bp_name("process-0.dag") == "process-0.static.bp"


def test_corpus_static_bp_files_parse_like_bp_reader() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    files = sorted(CORPUS.glob("*/input/**/*.static.bp"))
    assert files
    for path in files:
        records = read_static_bp(str(path))
        lines = path.read_text().splitlines()
        assert len(records) == len(lines)
        for (name, attrs), line in zip(records, lines, strict=True):
            raw = parse_bp_line(line)
            assert name == raw["event"]
            assert isinstance(attrs["ts"], int)
            assert {k: v for k, v in attrs.items() if k != "ts"} == {
                k: v for k, v in raw.items() if k not in ("ts", "event")
            }


# Pieces a BP line is made of, the awkward ones included: an escape, a lone or doubled
# quote, ``=`` in every place, whitespace str.split and the regex's \s both know.
_PIECES = ('k="v w"', "a", "b", "=", '"', " ", "\\", '\\"', "\t", "x=", '="', "\xa0", "\x1c")


def test_split_tokenizer_agrees_with_the_regex_on_random_lines() -> None:
    """The str.split fast path and the regex give the same items in the same order."""
    rnd = random.Random(30)
    fast = 0
    for _ in range(30_000):
        line = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 12)))
        assert list(tokenize(line).items()) == list(tokenize_regex(line).items()), repr(line)
        fast += "\\" not in line and line.count('"') % 2 == 0
    assert fast > 5_000  # the fast path was taken, not only the fallback


def test_planner_lines_take_the_split_path_and_agree() -> None:
    line = (
        'ts=1970-02-16T16:11:29.467813Z event=task.info xwf.id=78e5 task.id="ID0000001" '
        'type="1" argv="-a keg -T 253 -i f.0.in -o f.0.0" empty="" bare= solo'
    )
    got = tokenize(line)
    assert list(got.items()) == list(tokenize_regex(line).items())
    assert got["argv"] == "-a keg -T 253 -i f.0.in -o f.0.0"
    assert got["empty"] == "" and got["bare"] == "" and "solo" not in got
    # a text that is only the next key's ``key=`` is remembered; the second cut uses it
    assert staticbp._KEY_OF[" type="] == "type" and " empty=" in staticbp._KEY_OF
    assert not any("solo" in text for text in staticbp._KEY_OF)
    assert list(tokenize(line).items()) == list(got.items())


def test_split_path_keys_are_shared_strings() -> None:
    """Two lines' same keys are one object (a crossing pickles a repeat as a reference)."""
    one, two = (
        tokenize(f'ts=1 event=job.edge xwf.id=x{n} parent.job.id="a{n}" child.job.id="b{n}" k=v')
        for n in (1, 2)
    )
    assert list(one) == list(two) == ["ts", "event", "xwf.id", "parent.job.id", "child.job.id", "k"]
    assert all(a is b for a, b in zip(one, two, strict=True))


# A line's first text, before its first quoted value: a ``ts`` word, then words a kind's
# lines share, the awkward ones included (whitespace other than a space in the ts word, a
# bare word, an ``=`` with no key, ``ts`` or the quoted value's key again).
_TS_WORDS = ("ts=1", "ts=", "ts=a=b", "ts=1\t2", "ts=1\xa02", "tsx=1", "", "\x1cts=1")
_HEADS = (
    " event=a xwf.id=b k=",
    " k=",
    "  event=a\tk=",
    " solo k=",
    " =x k=",
    " ts=2 k=",
    " k=x k=",
    " event=a",
    " event=a =",
    "",
)


def test_a_first_text_seen_before_is_cut_from_memory_and_agrees() -> None:
    """The second line of a kind takes its first text's items from :data:`_HEAD_OF`, the
    same items in the same order as the regex gives (and as the first line's cut)."""
    staticbp._HEAD_OF.clear()
    for word in _TS_WORDS:
        for head in _HEADS:
            for n in range(2):
                line = f'{word}{head}"v{n}" type="t" tail=x'
                assert list(tokenize(line).items()) == list(tokenize_regex(line).items()), line
    planner = 'ts=1970-01-01T00:00:01Z event=job.info xwf.id=x job.id="a" type="1"'
    assert tokenize(planner) == tokenize(planner.replace("01Z", "02Z")) | {
        "ts": "1970-01-01T00:00:01Z"
    }
    assert staticbp._HEAD_OF["event=job.info xwf.id=x job.id="] == (
        (("event", "job.info"), ("xwf.id", "x")),
        "job.id",
    )
    assert not any(head.startswith("=x") for head in staticbp._HEAD_OF)  # the regex's
