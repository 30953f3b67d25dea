#!/usr/bin/env bash
# Create .venv with the project and its test tools (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -e '.[test,mysql,postgresql]' 2>&1 | grep -v "WARNING: Location" || true
.venv/bin/python -c "import monitord, sinks, sqlalchemy, aiofiles, structlog, yaml" 
