#!/usr/bin/env bash
# Create (idempotently) the test-oracle virtualenv holding the real Pegasus 5.1.3 tools
# (pegasus-statistics, pegasus-analyzer) that tests/test_real_clients.py runs on our
# Stampede DB. A TEST ORACLE ONLY: nothing in the project imports it or depends on it.
# Prints the venv path on stdout (everything else goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/tool-venv.sh
NAME=oracle-venv
VENV=${MONITORD_ORACLE_VENV:-$PWD/.oracle-venv}
PY=${PYTHON:-python3}
SPEC=pegasus-wms==5.1.3

ready() {
  [ -x "$VENV/bin/python" ] && [ -f "$VENV/.oracle-ready" ] \
    && "$VENV/bin/python" -c 'import Pegasus.db, sqlalchemy' 2>/dev/null
}

finish() {
  "$VENV/bin/python" -c 'import Pegasus.db, sqlalchemy' >&2
  ver=$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("pegasus-wms"))')
  [ "$ver" = "5.1.3" ] || { echo "$NAME: got pegasus-wms $ver, want 5.1.3" >&2; exit 1; }
  # The tools live as scripts inside the package (the wheel installs no console scripts).
  "$VENV/bin/python" -c 'import glob, sys; sys.exit(not glob.glob(sys.argv[1]))' \
    "$VENV/lib/python3*/site-packages/Pegasus/cli/pegasus-statistics.py" >&2
  touch "$VENV/.oracle-ready"
}

tool_venv
