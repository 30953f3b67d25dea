#!/usr/bin/env python3
"""CPU seconds to parse every .sub file of a generated workflow (issue 30: the .sub stage).

Reads the files once, then parses them all ``--rounds`` times with this tree's
``parse_submit_file`` and, with ``--old FILE``, another tree's ``subfile.py`` (rounds
alternate); prints the median CPU time of each (``time.process_time``: the machine's load
does not count).

    .venv/bin/python bench/subfile_bench.py --dir /tmp/w8k --old /tmp/base/monitord/core/readers/subfile.py
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alternate import alternate, cpu_seconds, load_module, options  # noqa: E402

from monitord.core.readers import subfile  # noqa: E402


def parse_all(parse: Any, texts: list[tuple[str, str]]) -> None:
    for name, text in texts:
        parse(text, job_name=name, orig_submit_dir="/orig")


def main() -> int:
    old_help = "another tree's monitord/core/readers/subfile.py"
    args = options(__doc__, old_help, rounds=5, path=True).parse_args()
    files = sorted(args.dir.glob("**/*.sub"))
    texts = [(f.stem, f.read_text(encoding="utf-8", errors="replace")) for f in files]
    sides = {"this tree": subfile.parse_submit_file}
    if args.old:
        old = load_module("old_subfile", args.old)
        sides = {"old": old.parse_submit_file, **sides}
        for name, text in texts[:200]:
            a = old.parse_submit_file(text, job_name=name, orig_submit_dir="/orig")
            b = subfile.parse_submit_file(text, job_name=name, orig_submit_dir="/orig")
            assert asdict(a) == asdict(b), name
    runs = {side: cpu_seconds(partial(parse_all, parse, texts)) for side, parse in sides.items()}
    times = alternate(runs, args.rounds)
    for side, values in times.items():
        med = statistics.median(values)
        print(
            f"{side:10} {len(texts):,} files: median {med:.3f} CPU s "
            f"({med / len(texts) * 1e6:.1f} µs a file; rounds {', '.join(f'{v:.3f}' for v in values)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
