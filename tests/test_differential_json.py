"""The JSON event stream (``-e json``) equals the reference's, number types included.

JSON shows what BP hides: an ``int`` ``ts`` is written ``1678036227``, a float one
``1678036227.0``, and consumers of the stream (AMQP, files) see the difference.  Each input is
replayed by the reference (the oracle venv, as a black box) and by monitord with ``-e json``;
the two streams must hold the same objects, compared as text after a canonical re-encoding
that keeps the int/float distinction (order of events across workflows aside).  Inputs: one
corpus sample (host.info, rc.meta, int.metric, every job event kind) and the generated cases
that add tags, holds, clusters and sub-workflows.  Every object of the reference's stream must
also decode through the event catalogue (what an ingest of its AMQP messages does).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sinks.encoding import DecodeError, decode_json
from tests.conftest import CORPUS
from tests.differential import replay_both
from tests.oracle import Oracle, differential_oracle

CASES = Path(__file__).resolve().parent / "data" / "cases"
INPUTS = {
    "process_wf_success": CORPUS / "process_wf_success" / "input",
    "no_kickstart_and_xml": CASES / "no_kickstart_and_xml" / "input",
    "held_released_aborted": CASES / "held_released_aborted" / "input",
}
# Wall-clock values: the time static.bp was read.
WALL_CLOCK = {"stampede.static.start", "stampede.static.end", "stampede.rc.pfn"}


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return differential_oracle()


def _objects(path: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if obj["event"] in WALL_CLOCK:
            obj.pop("ts", None)
        out[json.dumps(obj, sort_keys=True)] += 1
    return out


def _types(objs: Counter[str]) -> Counter[str]:
    """(event, key, JSON type) triples: says which attribute differs in type."""
    out: Counter[str] = Counter()
    for text, n in objs.items():
        obj = json.loads(text)
        for key, value in obj.items():
            out[f"{obj['event']} {key} {type(value).__name__}"] += n
    return out


def _undecodable(path: Path) -> list[str]:
    """Why lines of a JSON stream do not decode to catalogue events (an AMQP ingest's view)."""
    out = []
    for line in path.read_text().splitlines():
        try:
            decode_json(line)
        except DecodeError as exc:
            out.append(str(exc))
    return sorted(set(out))


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_json_stream_matches_reference(name: str, oracle: Oracle, tmp_path: Path) -> None:
    ref, ours = replay_both(oracle, INPUTS[name], tmp_path, encoding="json")
    assert ref.clean, ref.stderr[-3000:]
    assert ours.clean, ours.stderr[-3000:]
    assert not ours.violations
    assert _undecodable(ref.events) == [], "the reference's JSON must decode via the catalogue"
    expected, actual = _objects(ref.events), _objects(ours.events)
    types_e, types_a = _types(expected), _types(actual)
    assert types_e == types_a, {
        "reference only": types_e - types_a,
        "monitord only": types_a - types_e,
    }
    missing, extra = expected - actual, actual - expected
    assert not missing and not extra, (list(missing)[:3], list(extra)[:3])
