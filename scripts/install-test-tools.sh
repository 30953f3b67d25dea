#!/usr/bin/env bash
# Debian packages that some tests drive from outside Python: `chromium` (the status page is
# rendered headless by tests/test_service_status_page.py), `systemd` (for `systemd-analyze
# verify` in tests/test_systemd_units.py; the package installs fine on a machine where systemd
# is not running) and `prometheus` (`promtool check rules` over conf/prometheus/, and a real
# Prometheus server scraping the service, in tests/test_operator_tools.py; the tests start
# their own on a free loopback port, so the package's own service is stopped again). Installs only what is missing, and only where that is expected: in CI
# (CI=true) or when MONITORD_INSTALL_TEST_TOOLS=1, as root (or with password-less sudo), with
# apt-get present. Anywhere else it says what is missing and the tests concerned skip.
set -euo pipefail

missing=()
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0

note() { echo "install-test-tools: $*" >&2; }

if [ "${CI:-}" != "true" ] && [ "${MONITORD_INSTALL_TEST_TOOLS:-}" != "1" ]; then
  note "not installing ${missing[*]} outside CI (set MONITORD_INSTALL_TEST_TOOLS=1 to do so); the tests needing them skip"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  note "apt-get not found: cannot install ${missing[*]}"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  note "not root and no password-less sudo: cannot install ${missing[*]}"
  exit 0
fi

# A failed install does not stop the test run: the tests concerned then fail in CI, naming
# the missing tool.
export DEBIAN_FRONTEND=noninteractive
if "${as_root[@]}" apt-get update -qq >/dev/null \
  && "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  note "installed ${missing[*]}"
  if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null 2>&1 \
    && systemctl is-active --quiet prometheus 2>/dev/null; then
    "${as_root[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
else
  note "apt-get could not install ${missing[*]}"
fi
