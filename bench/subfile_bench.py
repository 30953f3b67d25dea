#!/usr/bin/env python3
"""CPU seconds to parse every .sub file of a generated workflow (issue 30: the .sub stage).

Reads the files once, then parses them all ``--rounds`` times with this tree's
``parse_submit_file`` and, with ``--old FILE``, another tree's ``subfile.py`` (rounds
alternate); prints the median CPU time of each (``time.process_time``: the machine's load
does not count).

    .venv/bin/python bench/subfile_bench.py --dir /tmp/w8k --old /tmp/base/monitord/core/readers/subfile.py
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitord.core.readers import subfile  # noqa: E402


def load_old(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("old_subfile", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_subfile"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cpu(parse: Any, texts: list[tuple[str, str]]) -> float:
    start = time.process_time()
    for name, text in texts:
        parse(text, job_name=name, orig_submit_dir="/orig")
    return time.process_time() - start


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--dir", type=Path, required=True, help="a generated workflow's submit dir")
    p.add_argument("--old", type=Path, help="another tree's monitord/core/readers/subfile.py")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    files = sorted(args.dir.glob("**/*.sub"))
    texts = [(f.stem, f.read_text(encoding="utf-8", errors="replace")) for f in files]
    sides = {"this tree": subfile.parse_submit_file}
    if args.old:
        old = load_old(args.old)
        sides = {"old": old.parse_submit_file, **sides}
        for name, text in texts[:200]:
            a = old.parse_submit_file(text, job_name=name, orig_submit_dir="/orig")
            b = subfile.parse_submit_file(text, job_name=name, orig_submit_dir="/orig")
            assert asdict(a) == asdict(b), name
    times: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, parse in sides.items():
            times[side].append(cpu(parse, texts))
    for side, values in times.items():
        med = statistics.median(values)
        print(
            f"{side:10} {len(texts):,} files: median {med:.3f} CPU s "
            f"({med / len(texts) * 1e6:.1f} µs a file; rounds {', '.join(f'{v:.3f}' for v in values)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
