"""bench/alternate.py, the benches' one old-against-new timing loop: sides alternate within
each round (so the machine's load falls on both alike) and a side's figure is its median."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import PROJECT

sys.path.insert(0, str(PROJECT / "bench"))

from alternate import alternate, cpu_seconds, medians, options, run_child  # noqa: E402

pytestmark = pytest.mark.quick


def test_sides_alternate_within_each_round_and_medians_are_per_figure() -> None:
    calls: list[str] = []

    def side(name: str) -> Callable[[], int]:
        def run() -> int:
            calls.append(name)
            return len(calls)

        return run

    got = alternate({"old": side("old"), "new": side("new")}, 3)
    assert calls == ["old", "new"] * 3
    assert got == {"old": [1, 3, 5], "new": [2, 4, 6]}
    rounds = [{"cpu": 3.0, "wall": 1.0}, {"cpu": 1.0, "wall": 9.0}, {"cpu": 2.0, "wall": 2.0}]
    assert medians(rounds) == {"cpu": 2.0, "wall": 2.0}
    assert cpu_seconds(lambda: sum(range(10_000)))() >= 0.0


def test_the_options_every_old_new_bench_takes() -> None:
    args = options("doc", "the old tree", rounds=4, path=True).parse_args(["--dir", "/w"])
    assert (str(args.dir), args.old, args.rounds) == ("/w", None, 4)
    with pytest.raises(SystemExit):
        options("doc", "a commit", rounds=3, required=True).parse_args(["--dir", "/w"])


def test_a_child_imports_from_its_side_s_tree_and_hands_back_its_last_json_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "side_mark.py").write_text("MARK = 'the old tree'\n")
    code = (
        "import json, side_mark\n"
        "print('noise')\n"
        "print(json.dumps({'mark': side_mark.MARK, 'args': sys.argv[1:]}))"
    )
    assert run_child(tmp_path, code, "a", "2") == {"mark": "the old tree", "args": ["a", "2"]}
