#!/usr/bin/env python3
"""CPU seconds of a replay's job output stage, this tree against another commit (issue 30).

For a generated workflow's submit dir, every job's files are read and parsed as the replay
does at the job's end (``parse_job_output``: the .out and .err reads, the kickstart parse,
the events built), in a worker thread as in the replay, without the rest of the daemon. ``--old REV`` runs the
same stage in a child process on REV's tree (``git archive``), this tree's in another;
rounds alternate and the median ``time.thread_time`` of each side is printed. The events
and instance fields each side produced are checked equal (a digest) first.

``--parsed``: the .out and .err files are read and parsed (by each tree's own ``parse_out`` /
``parse_err``) before the timing, as the ``--read-ahead`` worker does: the time is the
daemon's share alone, what a large replay's critical path pays.

    .venv/bin/python bench/jobout_stage_bench.py --dir /tmp/w20k --old HEAD~3 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The child: imports the tree it is given, prepares every job (the .sub parsed, as the replay
# has it by then), then times the stage alone. Prints "<CPU seconds> <digest>".
CHILD = r"""
import hashlib, re, sys, threading, time
from pathlib import Path
from monitord.core.jobinstance import JobInstance
from monitord.core.jobout import parse_job_output
from monitord.core.jobout_events import JobFiles
from monitord.core.jobreader import ParsingReader, parse_err, parse_out
from monitord.core.readers.subfile import parse_submit_file
from monitord.daemon import jobfiles


class Parsed(ParsingReader):
    # the .out/.err parses made before the timing (the read-ahead worker's share)

    def __init__(self, read_text, parsed):
        super().__init__(read_text)
        self.parsed = parsed

    def out_file(self, path):
        found = self.parsed.get(path)
        return found if found is not None else super().out_file(path)

    def err_file(self, path):
        found = self.parsed.get(path)
        return found if found is not None else super().err_file(path)


run_dir = Path(sys.argv[1])
# the .sub names the files under the dir the workflow was planned in: strip it, as the replay
planned = re.search(r'^submit_dir: "?([^"\n]*)', (run_dir / "braindump.yml").read_text(), re.M)
jobs = []
for out in sorted(run_dir.glob("**/*.out.[0-9][0-9][0-9]")):
    name = out.name.rsplit(".out.", 1)[0]
    if name.endswith(".dag.dagman"):
        continue
    inst = JobInstance(name=name, seq=1, submit_dir=str(out.parent))
    inst.out_num = int(out.name[-3:])
    sub = out.parent / (name + ".sub")
    if sub.exists():
        inst.sub = parse_submit_file(sub.read_text(), job_name=name, orig_submit_dir=planned and planned[1])
    jobs.append(inst)
reader = None
if sys.argv[2] == "parsed":
    parsed = {}
    for inst in jobs:
        base = f"{inst.submit_dir}/{inst.name}"
        for path, parse in ((f"{base}.out", parse_out), (f"{base}.err", parse_err)):
            path += f".{inst.out_num:03d}"
            text = jobfiles.read_text(path)
            if text is not None:
                parsed[path] = parse(text)
    reader = Parsed(jobfiles.read_text, parsed)
files = JobFiles(
    read_text=jobfiles.read_text, run_dir=str(run_dir), wf_uuid="u", is_subdag=False,
    rotated=True, store_stdout=True, reader=reader,
)
found, cpu = [], [0.0]


def stage():
    start = time.thread_time()
    found.extend(parse_job_output(inst, files, 1.0) for inst in jobs)
    cpu[0] = time.thread_time() - start


worker = threading.Thread(target=stage)  # the replay parses in a worker thread too
worker.start()
worker.join()
digest = hashlib.sha256()
for inst, out in zip(jobs, found):
    digest.update(repr((inst, out.events, out.invocations, out.records)).encode())
print(f"{cpu[0]:.4f} {digest.hexdigest()[:16]} {len(jobs)}")
"""


def run(tree: Path, run_dir: Path, parsed: bool) -> tuple[float, str, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(run_dir), "parsed" if parsed else "files"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
        env={"PYTHONPATH": str(tree), "TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )
    cpu, digest, jobs = done.stdout.split()
    return float(cpu), digest, int(jobs)


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--dir", type=Path, required=True, help="a generated workflow's submit dir")
    p.add_argument("--old", required=True, help="the commit to compare with")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--parsed", action="store_true", help="the files parsed before the timing (--read-ahead)"
    )
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        old_tree = Path(work)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.old], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
        times: dict[str, list[float]] = {"old": [], "new": []}
        digests: dict[str, set[str]] = {"old": set(), "new": set()}
        jobs = 0
        for n in range(args.rounds):
            sides = (("old", old_tree), ("new", ROOT))
            for side, tree in sides if n % 2 == 0 else sides[::-1]:
                cpu, digest, jobs = run(tree, args.dir, args.parsed)
                times[side].append(cpu)
                digests[side].add(digest)
        if digests["old"] != digests["new"] or len(digests["new"]) != 1:
            print(f"results differ: old {digests['old']} new {digests['new']}")
            return 1
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        print(
            f"job output stage ({jobs:,} jobs)  old {old:6.3f}  new {new:6.3f} CPU s  ({new / old - 1:+.0%})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
