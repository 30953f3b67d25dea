#!/usr/bin/env python3
"""CPU seconds of the job-file readers of a replay, this tree against another commit (issue 30).

For a generated workflow's submit dir, each stage runs over every file it reads in a replay:
static.bp (``parse_static_bp`` over its lines), the .dag (``parse_dag``), job file reads
(``jobfiles.read_text`` of every .out, .err and .sub), the PegasusLite exit code (``errfile.pegasus_lite_exitcode`` of every
.err text) and the .sub parse (``parse_submit_file``). ``--old REV`` loads those modules as
they are at REV (``git show``; each is one file) beside this tree's; rounds alternate and the
median ``time.process_time`` of each side is printed (the machine's load does not count).
Each stage's results are checked equal between the sides first.

    .venv/bin/python bench/readers_stage_bench.py --dir /tmp/w20k --old 1ab06fb --rounds 3
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alternate import alternate, cpu_seconds, load_module, options  # noqa: E402

from monitord.core.readers import dagfile, errfile, staticbp, subfile  # noqa: E402
from monitord.daemon import jobfiles  # noqa: E402

MODULES = {
    "staticbp": "monitord/core/readers/staticbp.py",
    "jobfiles": "monitord/daemon/jobfiles.py",
    "errfile": "monitord/core/readers/errfile.py",
    "subfile": "monitord/core/readers/subfile.py",
    "braindump": "monitord/core/readers/braindump.py",  # static.bp's stamps
    "dagfile": "monitord/core/readers/dagfile.py",
}


def load_old(rev: str, work: Path) -> dict[str, ModuleType]:
    modules = {}
    for name, path in MODULES.items():
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True, capture_output=True
        ).stdout
        file = work / f"old_{name}.py"
        file.write_bytes(source)
        modules[name] = load_module(f"old_{name}", file)
    # the old static.bp parse with the old stamp conversion, not this tree's it imported
    vars(modules["staticbp"])["planner_iso_epoch"] = modules["braindump"].planner_iso_epoch
    return modules


def stages(mods: dict[str, Any], run_dir: Path) -> dict[str, Callable[[], Any]]:
    bp = (next(run_dir.glob("*.static.bp"))).read_text(encoding="utf-8").splitlines(True)
    files = sorted(
        str(p) for ext in ("*.out*", "*.err*", "*.sub") for p in run_dir.glob(f"**/{ext}")
    )
    errs = [Path(f).read_text(errors="replace") for f in files if ".err" in Path(f).name]
    subs = [
        (Path(f).stem, Path(f).read_text(errors="replace")) for f in files if f.endswith(".sub")
    ]
    sub = mods["subfile"].parse_submit_file
    dag = next(run_dir.glob("*.dag")).read_text(encoding="utf-8")
    return {
        f".dag parse ({dag.count(chr(10)):,} lines)": lambda: repr(
            mods["dagfile"].parse_dag(dag).nodes
        ),
        f"static.bp ({len(bp):,} lines)": lambda: list(mods["staticbp"].parse_static_bp(bp)),
        f"read job files ({len(files):,})": lambda: [mods["jobfiles"].read_text(f) for f in files],
        f"PegasusLite exit code ({len(errs):,} .err)": lambda: [
            mods["errfile"].pegasus_lite_exitcode(t) for t in errs
        ],
        f".sub parse ({len(subs):,})": lambda: [
            repr(sub(t, job_name=n, orig_submit_dir="/orig")) for n, t in subs
        ],
    }


def main() -> int:
    args = options(__doc__, "the commit to compare with", rounds=3, required=True).parse_args()
    new = {
        "staticbp": staticbp,
        "jobfiles": jobfiles,
        "errfile": errfile,
        "subfile": subfile,
        "dagfile": dagfile,
    }
    with tempfile.TemporaryDirectory() as work:
        sides = {
            "old": stages(load_old(args.old, Path(work)), args.dir),
            "new": stages(new, args.dir),
        }
        for name in sides["new"]:
            assert sides["old"][name]() == sides["new"][name](), f"{name}: results differ"
        for name in sides["new"]:
            times = alternate({side: cpu_seconds(sides[side][name]) for side in sides}, args.rounds)
            old, new_ = statistics.median(times["old"]), statistics.median(times["new"])
            print(f"{name:40} old {old:6.3f}  new {new_:6.3f} CPU s  ({new_ / old - 1:+.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
