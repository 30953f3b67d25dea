#!/usr/bin/env bash
# Create .venv with the project and its test tools (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# pip's output (an editable build's warnings) only when it fails: the first thing a new user
# runs stays readable; the import check below stops the script if the install is unusable.
if ! pip_out=$(.venv/bin/python -m pip install -q -e '.[test,mysql,postgresql,ingest]' 2>&1); then
  printf '%s\n' "$pip_out" >&2
fi
.venv/bin/python -c "import monitord, sinks, sqlalchemy, aiofiles, structlog, yaml" 
# Test fixture plugins go to .test-site (tests/plugin_fixtures.py); remove those an older test
# suite installed into .venv, so that `monitord plugins` lists only what the user installed.
stale=$(.venv/bin/python - <<'PY'
from importlib.metadata import PackageNotFoundError, distribution
for name in ("monitord-contract-plugins", "monitord-capture-sink"):
    try:
        distribution(name)
        print(name)
    except PackageNotFoundError:
        pass
PY
)
if [ -n "$stale" ]; then
  .venv/bin/python -m pip uninstall -q -y $stale
fi
