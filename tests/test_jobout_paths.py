"""A finished job's file paths (``monitord/core/jobout.py``): the short join is os.path.join."""

from __future__ import annotations

import os

import pytest

from monitord.core import jobout
from monitord.core.readers.kickstart import KickstartRecord
from monitord.core.readers.kickstart.records import RecordKind


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        ("/run/00/00", "job_1"),
        ("/run/00/00/", "job_1"),  # a trailing slash is not doubled
        ("", "job_1"),  # no dir: the name alone
        ("/run", "/elsewhere/job_1.err"),  # an absolute .sub error path replaces the run dir
        ("relative/dir", "sub/job_1.err"),
    ],
)
def test_join_is_os_path_join(head: str, tail: str) -> None:
    assert jobout._join(head, tail) == os.path.join(head, tail)


def test_records_by_kind_keep_their_order() -> None:
    kinds: list[RecordKind] = ["task", "invocation", "clustered", "multipart", "invocation", "task"]
    records = [KickstartRecord(kind, {"n": n}) for n, kind in enumerate(kinds)]
    by_kind = jobout._by_kind(records)
    assert [[r.data["n"] for r in group] for group in by_kind] == [[1, 4], [2], [0, 5], [3]]
    one = [KickstartRecord("invocation", {})]
    assert jobout._by_kind(one) == [one, [], [], []] and jobout._by_kind(one)[0] is not one
