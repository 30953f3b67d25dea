"""The reference's own event streams, loaded by our SQL sink, must give the reference's DB.

For each corpus sample, ``expected/events.bp`` (what the reference sent) is fed to
``SQLSink`` in batches of several sizes, and ``stampede-diff`` must report every
table of the result identical to ``expected/stampede.db``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sinks.sql import SQLSink
from sinks.sql.loader import BatchLoader
from tests.bp_events import CORPUS, SAMPLES, SHARED, load_bp_events

DIFF = SHARED / "tools" / "stampede-diff"

pytestmark = pytest.mark.skipif(
    not (CORPUS.is_dir() and DIFF.is_file()),
    reason=f"conformance corpus / stampede-diff not available under {SHARED}",
)


def _load(sample: str, db: Path, batch: int | None) -> None:
    events = load_bp_events(CORPUS / sample / "expected" / "events.bp")
    sink = SQLSink(f"sqlite:///{db}", restart=True)
    sink.open()
    size = batch or len(events)
    for i in range(0, len(events), size):
        sink.write_batch(events[i : i + size])
    sink.flush()
    sink.close()


def _diff(sample: str, db: Path) -> subprocess.CompletedProcess[str]:
    expected = CORPUS / sample / "expected" / "stampede.db"
    return subprocess.run(
        [sys.executable, str(DIFF), str(expected), str(db)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("batch", [1, 7, 1000, None], ids=["b1", "b7", "b1000", "all"])
@pytest.mark.parametrize("sample", SAMPLES)
def test_events_bp_reproduces_reference_db(tmp_path: Path, sample: str, batch: int | None) -> None:
    db = tmp_path / "x.stampede.db"
    _load(sample, db, batch)
    result = _diff(sample, db)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.parametrize("sample", SAMPLES)
def test_row_by_row_mode_gives_the_same_db(
    tmp_path: Path, sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The integrity-error fallback path must load exactly what the fast path loads."""
    original = BatchLoader.load

    def always_slow(self: BatchLoader, conn: object, events: object, *, slow: bool = False) -> None:
        original(self, conn, events, slow=True)  # type: ignore[arg-type]

    monkeypatch.setattr(BatchLoader, "load", always_slow)
    db = tmp_path / "x.stampede.db"
    _load(sample, db, 50)
    result = _diff(sample, db)
    assert result.returncode == 0, result.stdout[-4000:]
