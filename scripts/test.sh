#!/usr/bin/env bash
# The project's test command: set up .venv, lint, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check monitord sinks notifications tests bench
.venv/bin/python -m pytest -q "$@"
