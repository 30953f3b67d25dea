"""A small fixed set of differential fuzz variants (tests/fuzz.py) against the reference.

Each variant is a seeded mutation of a corpus sample replayed by the reference (oracle venv,
black box) and by monitord on the same bytes.  Where the reference exits cleanly, the outputs
must agree or differ only in a kept way (monitord keeping more, README *Differences*); where
it fails, monitord must exit without a traceback and keep every row the reference kept.

The seeds are chosen to cover every mutation kind on the two smallest samples (about 6 s a
variant); ``python -m tests.fuzz --variants N`` runs a large set on demand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, require_corpus
from tests.fuzz import MUTATIONS, make_variant, run_variant
from tests.oracle import Oracle, differential_oracle

# (sample, seed): together they apply every mutation kind at least once (checked below).
FIXED = [
    ("process_wf_success", 3),
    ("process_wf_success", 10),
    ("process_wf_success", 13),
    ("process_wf_success", 16),
    ("process_wf_failure", 5),
    ("process_wf_failure", 17),
    ("process_wf_failure", 20),
    ("process_wf_failure", 26),
]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return differential_oracle()


def test_fixed_set_covers_every_mutation(tmp_path: Path) -> None:
    require_corpus()
    used: set[str] = set()
    for i, (sample, seed) in enumerate(FIXED):
        done = make_variant(CORPUS / sample / "input", seed, tmp_path / str(i))
        used.update(d.split(":", 1)[0] for d in done)
    assert used == {m.name for m in MUTATIONS}, sorted({m.name for m in MUTATIONS} - used)


@pytest.mark.parametrize(("sample", "seed"), FIXED, ids=[f"{s}-{n}" for s, n in FIXED])
def test_variant(oracle: Oracle, sample: str, seed: int, tmp_path: Path) -> None:
    outcome = run_variant(oracle, sample, seed, tmp_path)
    assert outcome.ok, "\n".join([outcome.verdict, *outcome.mutations, *outcome.details[:20]])
