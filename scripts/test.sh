#!/usr/bin/env bash
# The project's test command: set up .venv, lint (ruff), type-check (mypy), start the test
# servers, run the whole suite.  Arguments go to pytest.
#
#   scripts/test.sh --quick [pytest args]   the inner loop: lint, mypy and the `quick` tests (unit
#                                          tests and conformance replays; tests/conftest.py lists
#                                          them), no servers, no tool installs; about 1.5 min here
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
if [ "$quick" = 1 ]; then
  exec .venv/bin/python -m pytest -q -m quick "$@"
fi
bash scripts/install-test-tools.sh  # chromium, systemd-analyze (CI/root only; tests skip otherwise)

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

.venv/bin/python -m pytest -q "$@"
