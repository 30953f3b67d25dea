#!/usr/bin/env bash
# Create (idempotently) the virtualenv holding Arize Phoenix, the tracing backend that
# tests/test_otlp_phoenix.py runs (`phoenix serve`) to receive a replay's spans over OTLP/HTTP and
# read them back through its REST API and UI. A TEST TOOL ONLY: nothing in the project imports
# it or depends on it. It is large (~850 MB, ~150 packages), so it lives outside the clone, beside
# it (shared by the clones in one directory): $MONITORD_PHOENIX_VENV, else ../phoenix-venv.
# Prints the venv path on stdout (everything else goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/tool-venv.sh
NAME=phoenix-venv
VENV=${MONITORD_PHOENIX_VENV:-$(cd .. && pwd)/phoenix-venv}
PY=${PYTHON:-python3}
VERSION=20.26.1  # the REST API (/v1/projects/{id}/spans) and UI routes the test uses
SPEC=arize-phoenix==$VERSION

ready() {
  [ -x "$VENV/bin/phoenix" ] && [ -f "$VENV/.phoenix-ready" ] \
    && [ "$(cat "$VENV/.phoenix-ready")" = "$VERSION" ]
}

finish() {
  ver=$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("arize-phoenix"))')
  [ "$ver" = "$VERSION" ] || { echo "$NAME: got arize-phoenix $ver, want $VERSION" >&2; exit 1; }
  [ -x "$VENV/bin/phoenix" ] || { echo "$NAME: no $VENV/bin/phoenix" >&2; exit 1; }
  echo "$VERSION" >"$VENV/.phoenix-ready"
}

tool_venv
