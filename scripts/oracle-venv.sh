#!/usr/bin/env bash
# Create (idempotently) the test-oracle virtualenv holding the real Pegasus 5.1.3 tools
# (pegasus-statistics, pegasus-analyzer) that tests/test_real_clients.py runs on our
# Stampede DB. A TEST ORACLE ONLY: nothing in the project imports it or depends on it.
# Prints the venv path on stdout (everything else goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${MONITORD_ORACLE_VENV:-$PWD/.oracle-venv}
PY=${PYTHON:-python3}
PEGASUS=pegasus-wms==5.1.3

ready() {
  [ -x "$VENV/bin/python" ] && [ -f "$VENV/.oracle-ready" ] \
    && "$VENV/bin/python" -c 'import Pegasus.db, sqlalchemy' 2>/dev/null
}

if ! ready; then
  # One creator at a time: parallel test workers may all ask for it at once; the others wait
  # here and find it ready.
  command -v flock >/dev/null && exec 9>"${TMPDIR:-/tmp}/monitord-oracle-venv.lock" && flock 9
fi
if ! ready; then
  # Recreate only what is ours to delete: a half-made venv or an empty directory.
  if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    echo "oracle-venv: $VENV exists and is not a virtualenv; refusing to replace it" >&2
    exit 1
  fi
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  log=$(mktemp)
  if ! "$VENV/bin/python" -m pip install -q "$PEGASUS" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; exit 1
  fi
  rm -f "$log"
  "$VENV/bin/python" -c 'import Pegasus.db, sqlalchemy' >&2
  ver=$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("pegasus-wms"))')
  [ "$ver" = "5.1.3" ] || { echo "oracle-venv: got pegasus-wms $ver, want 5.1.3" >&2; exit 1; }
  # The tools live as scripts inside the package (the wheel installs no console scripts).
  "$VENV/bin/python" -c 'import glob, sys; sys.exit(not glob.glob(sys.argv[1]))' \
    "$VENV/lib/python3*/site-packages/Pegasus/cli/pegasus-statistics.py" >&2
  touch "$VENV/.oracle-ready"
fi
echo "$VENV"
