#!/usr/bin/env bash
# Create (idempotently) the virtualenv holding Arize Phoenix, the tracing backend that
# tests/test_otlp_phoenix.py runs (`phoenix serve`) to receive a replay's spans over OTLP/HTTP and
# read them back through its REST API and UI. A TEST TOOL ONLY: nothing in the project imports
# it or depends on it. It is large (~850 MB, ~150 packages), so it lives outside the clone, beside
# it (shared by the clones in one directory): $MONITORD_PHOENIX_VENV, else ../phoenix-venv.
# Prints the venv path on stdout (everything else goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${MONITORD_PHOENIX_VENV:-$(cd .. && pwd)/phoenix-venv}
PY=${PYTHON:-python3}
VERSION=20.26.1  # the REST API (/v1/projects/{id}/spans) and UI routes the test uses
PHOENIX=arize-phoenix==$VERSION

ready() {
  [ -x "$VENV/bin/phoenix" ] && [ -f "$VENV/.phoenix-ready" ] \
    && [ "$(cat "$VENV/.phoenix-ready")" = "$VERSION" ]
}

if ! ready; then
  # One creator at a time: parallel test workers (or clones) may all ask for it at once; the
  # others wait here and find it ready.
  command -v flock >/dev/null && exec 9>"${TMPDIR:-/tmp}/monitord-phoenix-venv.lock" && flock 9
fi
if ! ready; then
  # Recreate only what is ours to delete: a half-made venv or an empty directory.
  if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    echo "phoenix-venv: $VENV exists and is not a virtualenv; refusing to replace it" >&2
    exit 1
  fi
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || { echo "phoenix-venv: $PY -m venv $VENV failed" >&2; exit 1; }
  log=$(mktemp)
  if ! "$VENV/bin/python" -m pip install -q "$PHOENIX" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; exit 1
  fi
  rm -f "$log"
  ver=$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("arize-phoenix"))')
  [ "$ver" = "$VERSION" ] || { echo "phoenix-venv: got arize-phoenix $ver, want $VERSION" >&2; exit 1; }
  [ -x "$VENV/bin/phoenix" ] || { echo "phoenix-venv: no $VENV/bin/phoenix" >&2; exit 1; }
  echo "$VERSION" >"$VENV/.phoenix-ready"
fi
echo "$VENV"
