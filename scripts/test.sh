#!/usr/bin/env bash
# The project's test command: set up .venv, lint (ruff), type-check (mypy), check the layers
# (lint-imports), start the test servers, run the whole suite.  Arguments go to pytest.
#
#   scripts/test.sh --quick [pytest args]   the inner loop: lint, mypy and the `quick` tests (unit
#                                          tests and conformance replays; tests/conftest.py lists
#                                          them), no servers, no tool installs
#
# The full suite runs in two parts: every test not marked `serial` on N pytest-xdist workers
# (MONITORD_TEST_WORKERS, default 4: most tests wait on subprocesses, players and sleeps, so more
# workers than CPUs pay; a module is one unit of work, longest first, tests/conftest.py), then
# the `serial` tests, which stop and restart the shared servers, one at a time and alone.
# Pytest arguments go to both parts (so give no -m of your own: run pytest for that).
#
# The servers (RabbitMQ, PostgreSQL, MariaDB on 127.0.0.1, scripts/services.sh) need root. They
# are skipped with MONITORD_SERVICES=0, or when not root; the tests needing them then skip
# (or fail, when CI=true). They are stopped when this script exits (and purged when CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
bash scripts/setup.sh
.venv/bin/ruff check monitord sinks notifications tests bench
.venv/bin/mypy monitord sinks notifications tests bench
.venv/bin/lint-imports --no-logo  # the layer contracts of pyproject.toml (tests/test_layers.py)
if [ "$quick" = 1 ]; then
  exec .venv/bin/python -m pytest -q -m quick "$@"
fi
bash scripts/install-test-tools.sh  # chromium, systemd-analyze, prometheus (CI only; tests skip otherwise)

if [ "${MONITORD_SERVICES:-1}" = 1 ] && [ "$(id -u)" = 0 ]; then
  stop_services() {
    if [ "${CI:-}" = true ]; then bash scripts/services.sh stop --purge; else bash scripts/services.sh stop; fi
  }
  trap stop_services EXIT
  urls=$(bash scripts/services.sh start rabbitmq postgres mariadb)
  eval "$urls"
  export MONITORD_TEST_AMQP_URL MONITORD_TEST_POSTGRES_URL MONITORD_TEST_MYSQL_URL
else
  echo "test.sh: test servers not started (MONITORD_SERVICES=${MONITORD_SERVICES:-1}, uid $(id -u))" >&2
fi

# the side venvs before the workers start (they would all wait for the first to make it), the
# two pip installs side by side: the oracle's, and Arize Phoenix, the tracing backend of
# tests/test_otlp_phoenix.py (outside the clone)
bash scripts/phoenix-venv.sh >/dev/null &
phoenix_venv=$!
bash scripts/oracle-venv.sh >/dev/null \
  || echo "test.sh: no oracle venv; the tests needing it will say why" >&2
wait "$phoenix_venv" \
  || echo "test.sh: no phoenix venv; tests/test_otlp_phoenix.py will say why" >&2

workers=${MONITORD_TEST_WORKERS:-4}
codes=()
# --durations: the slowest tests are named in every CI log (CI's budget is 20 min)
.venv/bin/python -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder --durations=25 \
  -m "not serial" "$@" && codes+=(0) || codes+=($?)
echo "test.sh: the serial tests (servers stopped and restarted), one at a time" >&2
.venv/bin/python -m pytest -q -m serial --durations=11 "$@" && codes+=(0) || codes+=($?)
# 5: no test selected in that part (arguments naming only some tests); 5 only if in both
for code in "${codes[@]}"; do
  if [ "$code" != 0 ] && [ "$code" != 5 ]; then exit "$code"; fi
done
if [ "${codes[*]}" = "5 5" ]; then exit 5; fi
