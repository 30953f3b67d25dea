#!/usr/bin/env bash
# Issue 30's mypyc experiment: a copy of the packages with the hot core modules compiled.
#
#   scripts/compile.sh DEST [MODULE.py ...]
#
# Copies monitord/, sinks/ and notifications/ to DEST (the sources stay the truth: nothing is
# built in the tree), then compiles with mypyc, in DEST, the modules given (default: the ones
# that compile and pass the conformance corpus, bench/README.md "Issue 30, seventh session:
# mypyc30"). Python imports DEST's extension modules before the .py beside them: run the
# daemon with PYTHONPATH=DEST (bench/mypyc_bench.py). Needs mypy (the test extra), gcc and
# Python.h; takes ~45 CPU seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/compile.sh DEST [MODULE.py ...]" >&2; exit 2; }
dest=$1
shift
M=monitord/core
if [ $# -eq 0 ]; then
  # Not compiled: workflow.py and jobactions.py (the handler table names methods in the class
  # body; snapshots pickle the machine's __dict__), jobinstance.py (FinishedJob subclasses
  # bytes), generated.py and its users' exec-built functions.
  set -- $M/jobmachine.py $M/dagman.py $M/timeparse.py $M/quoting.py $M/jobout.py \
    $M/jobout_events.py $M/jobtext.py $M/readers/subfile.py $M/readers/kickstart/fast.py \
    $M/readers/staticbp.py
fi
mkdir -p "$dest"
rsync -a --delete --exclude __pycache__ --exclude '*.so' monitord sinks notifications "$dest/"
# mypy's settings of pyproject.toml, without pyproject.toml itself: mypyc's generated setup.py
# would read the project's [project] table with the venv's older setuptools.
printf '[mypy]\npython_version = 3.11\nignore_missing_imports = True\nwarn_unused_ignores = False\n' \
  >"$dest/mypy.ini"
py=$(pwd)/.venv/bin/python
(cd "$dest" && "$py" -m mypyc "$@" >build.log 2>&1) || { tail -20 "$dest/build.log" >&2; exit 1; }
"$py" -m compileall -q "$dest/monitord" "$dest/sinks" "$dest/notifications" >/dev/null
find "$dest" -name '*.so' -newer "$dest/mypy.ini" | sed "s|^$dest/||"
