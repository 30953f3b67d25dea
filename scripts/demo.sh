#!/usr/bin/env bash
# Replay an example workflow into SQLite on a fresh machine (the main job on its embedded default).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/monitord demo "$@"
