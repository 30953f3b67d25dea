"""ISO timestamps (kickstart ``start``, cluster summaries): the cached fast form equals the regex."""

from __future__ import annotations

import random

import pytest

from monitord.core import timeparse
from monitord.core.timeparse import iso_to_epoch


def _general(text: str) -> object:
    """The one-regex conversion, or the exception it raises."""
    try:
        return timeparse._iso_general(text)
    except (ValueError, OverflowError) as exc:
        return type(exc)


def _fast(text: str) -> object:
    try:
        return iso_to_epoch(text)
    except (ValueError, OverflowError) as exc:
        return type(exc)


def _texts(seed: int, n: int) -> list[str]:
    """Kickstart-shaped stamps, many sharing an hour, with edge fields (minute 99, month 13)."""
    rng = random.Random(seed)
    zones = ["Z", "-08:00", "+05:30", "-00:00", "+14:00", "-12:45", "+0530"]
    out = []
    for _ in range(n):
        year = rng.choice([1970, 2000, 2023, 2024, 2038, 9999, 1])
        month = rng.choice([1, 2, 3, 10, 12, 0, 13])
        day = rng.choice([1, 4, 28, 29, 31, 0, 99])
        hour, minute, second = (
            rng.choice([0, 7, 23, 24, 99]),
            rng.randrange(100),
            rng.randrange(100),
        )
        frac = rng.choice(["", ".393", ".5", ".000001", ".0", "." + "9" * 12])
        sep = rng.choice(["T", "T", "T", " "])
        text = f"{year:04d}-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:{second:02d}"
        out.append(text + frac + rng.choice(zones))
    return out


def test_kickstart_form_equals_the_general_conversion_value_and_type():
    timeparse._iso_hours.clear()
    texts = _texts(30, 4000)
    for text in texts + texts:  # the second round hits the hour cache
        fast, general = _fast(text), _general(text)
        assert fast == general, text
        assert type(fast) is type(general), text  # a float even without a fraction


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        ("2023-02-04T18:25:35.393-08:00", 1675563935.393),
        ("2023-02-04T18:25:35-08:00", 1675563935.0),
        ("2023-02-05T02:25:35Z", 1675563935.0),
        ("2023-02-05T07:55:35.5+05:30", 1675563935.5),
    ],
)
def test_kickstart_form_known_epochs(text, epoch):
    timeparse._iso_hours.clear()
    assert iso_to_epoch(text) == epoch
    assert iso_to_epoch(text) == epoch  # from the cache


def test_other_forms_still_convert():
    assert iso_to_epoch("20230303T222333-0800") == 1677911013.0
    assert iso_to_epoch(" 2023-03-03T22:23:33-08:00\n") == 1677911013.0
    assert iso_to_epoch("2023-03-03T22:23") is None
    assert iso_to_epoch("not a time") is None
