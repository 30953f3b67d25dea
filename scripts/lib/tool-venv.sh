# Sourced by scripts/oracle-venv.sh and scripts/phoenix-venv.sh: make (idempotently) the
# virtualenv of a test tool that nothing in the project imports, and print its path on stdout
# (everything else goes to stderr).
#
# The caller sets NAME (its messages' prefix and its lock's name), VENV, PY and SPEC (what pip
# installs), and defines two functions: `ready` (is the venv complete?) and `finish` (after the
# install: check what it got, then mark the venv ready).
tool_venv() {
  if ! ready; then
    # One creator at a time: parallel test workers (or clones) may all ask for it at once; the
    # others wait here and find it ready.
    command -v flock >/dev/null && exec 9>"${TMPDIR:-/tmp}/monitord-$NAME.lock" && flock 9
  fi
  if ! ready; then
    # Recreate only what is ours to delete: a half-made venv or an empty directory.
    if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
      echo "$NAME: $VENV exists and is not a virtualenv; refusing to replace it" >&2
      exit 1
    fi
    rm -rf "$VENV"
    "$PY" -m venv "$VENV" || { echo "$NAME: $PY -m venv $VENV failed" >&2; exit 1; }
    local log
    log=$(mktemp)
    if ! "$VENV/bin/python" -m pip install -q "$SPEC" >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"; exit 1
    fi
    rm -f "$log"
    finish
  fi
  echo "$VENV"
}
