"""Parsed job files pickled as their fields (the read-ahead worker's results, issue 30)."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from typing import Any

import pytest

from monitord.core.jobreader import ErrFile, OutFile
from monitord.core.readers.kickstart.records import KickstartRecord
from monitord.core.readers.pickled import by_fields
from monitord.core.readers.subfile import SubmitInfo

RECORD = KickstartRecord("invocation", {"hostname": "h", "raw": 0, "duration": 1.5}, "xml")
EXAMPLES: list[Any] = [
    SubmitInfo(
        {"pegasus_site": '"local"'},
        "local",
        "keg",
        "ID1",
        2,
        1,
        30,
        "/bin/keg",
        "-a b",
        "in",
        "out",
        "err",
        {"A": "1"},
        "x.log",
    ),  # fmt: skip
    OutFile([RECORD, KickstartRecord("task", {"id": 1})], "%23@ 1 stdout", [{"ts": 1}], (3,)),
    ErrFile("stderr", [{"ts": 1}], ("host", "10.0.0.1"), "3"),
    RECORD,
]


@pytest.mark.parametrize("obj", EXAMPLES, ids=lambda o: type(o).__name__)
def test_a_result_comes_back_equal_field_for_field(obj: Any) -> None:
    cls, args = obj.__reduce__()
    assert cls is type(obj)
    assert args == tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))
    for protocol in (2, pickle.DEFAULT_PROTOCOL, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(obj, protocol=protocol))
        assert type(back) is type(obj) and back == obj


def test_a_class_of_one_field_is_refused() -> None:
    @dataclass(slots=True)
    class One:
        x: int

    with pytest.raises(TypeError):
        by_fields(One)
