#!/usr/bin/env bash
# Throwaway RabbitMQ / PostgreSQL / MariaDB servers for the tests, on 127.0.0.1 only.
#
#   scripts/services.sh start   [rabbitmq] [postgres] [mariadb]   (default: all three)
#   scripts/services.sh stop    [--purge] [names...]              (default: all three)
#   scripts/services.sh restart <names...>
#   scripts/services.sh status | urls             (status: one 'NAME running|stopped' line each)
#
# Debian 12 packages (installed with apt-get when missing), plain background processes (no
# systemd), every path under $SVC_DIR. Idempotent: starting a running server only re-applies
# its (idempotent) user/database/vhost setup; stopping a stopped one does nothing.
#
# stdout carries only KEY=URL lines (logs go to stderr), so a caller can `eval` them:
#   MONITORD_TEST_AMQP_URL=amqp://USER:PASS@127.0.0.1:PORT/VHOST   (topic exchange $AMQP_EXCHANGE)
#   MONITORD_TEST_POSTGRES_URL=postgresql://USER:PASS@127.0.0.1:PORT/DB
#   MONITORD_TEST_MYSQL_URL=mysql://USER:PASS@127.0.0.1:PORT/DB
# The lines of the running servers are kept in $SVC_DIR/urls.env.
#
# Settings (environment): SVC_DIR (/tmp/monitord-services), SVC_USER (monitord), SVC_PASS
# (random, generated once), SVC_DB (monitord_test; the user may also create databases named
# SVC_DB<anything>), AMQP_PORT (5672), AMQP_DIST_PORT (25672), RMQ_NODENAME
# (monitord@localhost), AMQP_VHOST (monitord), AMQP_EXCHANGE (monitord.events), PG_PORT (5432),
# MYSQL_PORT (3306), SVC_INSTALL (1: apt-get what is missing), SVC_TIMEOUT (120 s).
# The first start records them in $SVC_DIR/settings.env; later calls (restart, stop) reuse the
# recorded values unless the environment sets them again.
#
# Only processes whose PIDs this script recorded are ever signalled (and only while
# /proc/PID/comm still names the expected program): a server started by anyone else is left alone.
set -euo pipefail

SVC_DIR=${SVC_DIR:-/tmp/monitord-services}
SETTINGS_FILE=$SVC_DIR/settings.env
URLS_FILE=$SVC_DIR/urls.env
SETTING_NAMES=(SVC_USER SVC_PASS SVC_DB AMQP_PORT AMQP_DIST_PORT RMQ_NODENAME AMQP_VHOST
               AMQP_EXCHANGE PG_PORT MYSQL_PORT)

say() { printf '[services] %s\n' "$*" >&2; }
fail() { printf '[services] error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- settings
load_settings() {
  local name line
  if [ -r "$SETTINGS_FILE" ]; then
    for name in "${SETTING_NAMES[@]}"; do
      [ -n "${!name+set}" ] && continue
      line=$(grep -m1 "^$name=" "$SETTINGS_FILE" || true)
      [ -n "$line" ] && printf -v "$name" '%s' "${line#*=}"
    done
  fi
  SVC_USER=${SVC_USER:-monitord}
  SVC_PASS=${SVC_PASS:-pw$(od -An -N12 -tx1 /dev/urandom | tr -dc 'a-f0-9')}
  SVC_DB=${SVC_DB:-monitord_test}
  AMQP_PORT=${AMQP_PORT:-5672}
  AMQP_DIST_PORT=${AMQP_DIST_PORT:-25672}
  RMQ_NODENAME=${RMQ_NODENAME:-monitord@localhost}
  AMQP_VHOST=${AMQP_VHOST:-monitord}
  AMQP_EXCHANGE=${AMQP_EXCHANGE:-monitord.events}
  PG_PORT=${PG_PORT:-5432}
  MYSQL_PORT=${MYSQL_PORT:-3306}
  SVC_INSTALL=${SVC_INSTALL:-1}
  SVC_TIMEOUT=${SVC_TIMEOUT:-120}
  local value
  for value in "$SVC_USER" "$SVC_PASS" "$SVC_DB" "$AMQP_VHOST" "$AMQP_EXCHANGE"; do
    [[ $value =~ ^[A-Za-z0-9_.-]+$ ]] || fail "user, password, database, vhost and exchange must match [A-Za-z0-9_.-]+"
  done
}

save_settings() {
  local name
  (umask 077
   for name in "${SETTING_NAMES[@]}"; do printf '%s=%s\n' "$name" "${!name}"; done > "$SETTINGS_FILE.new")
  mv -f "$SETTINGS_FILE.new" "$SETTINGS_FILE"
}

# url_put KEY URL / url_drop KEY: keep urls.env equal to the running servers
url_put() {
  url_drop "$1"
  (umask 077; printf '%s=%s\n' "$1" "$2" >> "$URLS_FILE")
  printf '%s=%s\n' "$1" "$2"
}
url_drop() { if [ -f "$URLS_FILE" ]; then sed -i "/^$1=/d" "$URLS_FILE"; fi; }

# ---------------------------------------------------------------- processes
# A process counts as ours and alive only if /proc has it, it is not a zombie (PID 1 in the
# sandbox may leave killed servers unreaped for a while) and its comm is the expected program.
is_up() {  # is_up PID COMM
  local pid=${1:-}
  [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
  grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && return 1
  grep -qs -- "$2" "/proc/$pid/comm"
}
read_pid() { if [ -s "$1" ]; then head -n1 "$1" | tr -dc '0-9'; fi; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# detach PIDFILE LOGFILE COMMAND...: own session, no inherited stdio (so `$(services.sh start)`
# never waits on the server), PID recorded before exec.
detach() {
  local pidfile=$1 logfile=$2; shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016  # $$, $1 and $@ belong to the inner shell
  setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' detach "$pidfile" "$@" \
    </dev/null >>"$logfile" 2>&1 &
  local _
  for _ in $(seq 200); do [ -s "$pidfile" ] && return 0; sleep 0.01; done
  fail "could not launch $1"
}

# terminate NAME PID COMM: SIGTERM, wait up to STOP_WAIT s, then SIGKILL
terminate() {
  local name=$1 pid=${2:-} comm=$3 _
  is_up "$pid" "$comm" || return 0
  say "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((${STOP_WAIT:-60} * 10))); do is_up "$pid" "$comm" || return 0; sleep 0.1; done
  say "$name (pid $pid) still up after SIGTERM; SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 50); do is_up "$pid" "$comm" || return 0; sleep 0.1; done
}

# ---------------------------------------------------------------- packages
APT_READY=0
# need_package FILE-GLOB PACKAGE...: apt-get install the packages unless FILE-GLOB exists
need_package() {
  local probe=$1; shift
  compgen -G "$probe" >/dev/null && return 0
  [ "$SVC_INSTALL" = 1 ] || fail "$probe is missing (apt-get install $*), and SVC_INSTALL=0"
  [ "$(id -u)" = 0 ] || fail "installing $* needs root"
  # With no systemd, maintainer scripts go through invoke-rc.d, which may start the
  # distribution's own service: forbid that for the duration unless a policy already exists.
  local policy=/usr/sbin/policy-rc.d ours=0 status=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod 755 "$policy"; ours=1; fi
  say "installing $*"
  if [ "$APT_READY" = 0 ]; then apt-get update -q >&2 && APT_READY=1 || status=$?; fi
  if [ "$status" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2 || status=$?
  fi
  if [ "$ours" = 1 ]; then rm -f "$policy"; fi
  [ "$status" = 0 ] || fail "apt-get install $* failed"
}

# ================================================================ RabbitMQ
RMQ_HOME() { printf '%s' "$SVC_DIR/rabbitmq"; }
rabbit_env() {  # the environment shared by the server and every CLI call (cookie in HOME)
  local d; d=$(RMQ_HOME)
  RABBIT_ENV=(
    HOME="$d" RABBITMQ_NODENAME="$RMQ_NODENAME"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$AMQP_PORT"
    RABBITMQ_DIST_PORT="$AMQP_DIST_PORT" ERL_EPMD_ADDRESS=127.0.0.1
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log"
    RABBITMQ_PID_FILE="$d/beam.pid" RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf"
    RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins"
    RABBITMQ_CONF_ENV_FILE="$d/rabbitmq-env.conf" ERL_CRASH_DUMP="$d/erl_crash.dump"
  )
}
# The /usr/sbin wrappers switch to the rabbitmq user (another HOME, another cookie): call the
# real programs with our environment instead.
rabbitctl() { env "${RABBIT_ENV[@]}" /usr/lib/rabbitmq/bin/rabbitmqctl -q "$@"; }

rabbit_boot() {
  local d; d=$(RMQ_HOME)
  port_taken "$AMQP_PORT" && fail "127.0.0.1:$AMQP_PORT is taken (set AMQP_PORT)"
  port_taken "$AMQP_DIST_PORT" && fail "127.0.0.1:$AMQP_DIST_PORT is taken (set AMQP_DIST_PORT)"
  printf 'listeners.tcp.default = 127.0.0.1:%s\nlog.console = false\nlog.file.level = info\n' \
    "$AMQP_PORT" > "$d/rabbitmq.conf"
  echo '[].' > "$d/enabled_plugins"
  : > "$d/rabbitmq-env.conf"
  if [ ! -s "$d/.erlang.cookie" ]; then  # made before the first CLI call, so both agree on it
    (umask 077; od -An -N16 -tx1 /dev/urandom | tr -dc 'a-f0-9' > "$d/.erlang.cookie")
    chmod 400 "$d/.erlang.cookie"
  fi
  # Our own epmd on loopback (erl would fork one on every interface that outlives the broker);
  # an epmd someone else runs is used as it is and never stopped by us.
  if ! epmd -names >/dev/null 2>&1; then
    detach "$d/epmd.pid" "$d/epmd.log" epmd -address 127.0.0.1
    local _
    for _ in $(seq 100); do epmd -names >/dev/null 2>&1 && break; sleep 0.05; done
  elif ! is_up "$(read_pid "$d/epmd.pid")" epmd; then
    rm -f "$d/epmd.pid"
  fi
  rm -f "$d/beam.pid"
  detach "$d/launcher.pid" "$d/server.log" env "${RABBIT_ENV[@]}" /usr/lib/rabbitmq/bin/rabbitmq-server
  # `rabbitmqctl wait` can sit out its whole timeout if the node dies before writing its pid
  # file: watch the launcher meanwhile.
  local _
  for _ in $(seq $((SVC_TIMEOUT * 10))); do
    [ -s "$d/beam.pid" ] && break
    is_up "$(read_pid "$d/launcher.pid")" rabbitmq || break
    sleep 0.1
  done
  if [ ! -s "$d/beam.pid" ] \
     || ! timeout "$SVC_TIMEOUT" env "${RABBIT_ENV[@]}" /usr/lib/rabbitmq/bin/rabbitmqctl -q \
          wait --timeout "$SVC_TIMEOUT" "$d/beam.pid" >&2; then
    tail -n 20 "$d/server.log" >&2 || true
    rabbit_halt
    fail "rabbitmq did not come up (logs in $d)"
  fi
}

start_rabbitmq() {
  need_package /usr/lib/rabbitmq/bin/rabbitmq-server rabbitmq-server
  local d; d=$(RMQ_HOME)
  mkdir -p "$d"
  rabbit_env
  if is_up "$(read_pid "$d/beam.pid")" beam; then
    say "rabbitmq is running (pid $(read_pid "$d/beam.pid"))"
  else
    say "starting rabbitmq on 127.0.0.1:$AMQP_PORT (node $RMQ_NODENAME)"
    rabbit_boot
  fi
  rabbitctl add_vhost "$AMQP_VHOST" >&2
  if rabbitctl list_users | cut -f1 | grep -qxF "$SVC_USER"; then
    rabbitctl change_password "$SVC_USER" "$SVC_PASS" >&2
  else
    rabbitctl add_user "$SVC_USER" "$SVC_PASS" >&2
  fi
  rabbitctl set_permissions -p "$AMQP_VHOST" "$SVC_USER" '.*' '.*' '.*' >&2
  # rabbitmqctl 3.10 cannot declare exchanges; importing definitions can (and is idempotent).
  printf '{"exchanges":[{"name":"%s","vhost":"%s","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{}}]}\n' \
    "$AMQP_EXCHANGE" "$AMQP_VHOST" > "$d/definitions.json"
  rabbitctl import_definitions "$d/definitions.json" >&2
  url_put MONITORD_TEST_AMQP_URL "amqp://$SVC_USER:$SVC_PASS@127.0.0.1:$AMQP_PORT/$AMQP_VHOST"
}

rabbit_halt() {
  local d; d=$(RMQ_HOME)
  terminate rabbitmq "$(read_pid "$d/beam.pid")" beam   # SIGTERM = orderly broker shutdown
  terminate rabbitmq-launcher "$(read_pid "$d/launcher.pid")" rabbitmq
  # our epmd goes only when no other node is registered with it
  local epmd_pid; epmd_pid=$(read_pid "$d/epmd.pid")
  if is_up "$epmd_pid" epmd; then
    if epmd -names 2>/dev/null | grep -q '^name '; then
      say "epmd (pid $epmd_pid) still serves other nodes; left running"
    else
      terminate epmd "$epmd_pid" epmd
      rm -f "$d/epmd.pid"
    fi
  fi
  rm -f "$d/beam.pid" "$d/launcher.pid"
}

stop_rabbitmq() {
  [ -d "$(RMQ_HOME)" ] || return 0
  rabbit_env
  rabbit_halt
  url_drop MONITORD_TEST_AMQP_URL
}

# ================================================================ PostgreSQL
pg_bindir() { find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1; }
as_postgres() { runuser -u postgres -- "$@"; }   # initdb and postgres refuse to run as root

start_postgres() {
  need_package '/usr/lib/postgresql/*/bin/initdb' postgresql
  local d=$SVC_DIR/postgres bin; bin=$(pg_bindir)
  mkdir -p "$d"; chown postgres:postgres "$d"; chmod 700 "$d"
  if is_up "$(read_pid "$d/data/postmaster.pid")" postgres; then
    say "postgres is running (pid $(read_pid "$d/data/postmaster.pid"))"
  else
    # a dead (or zombie) postmaster leaves lock files that would block the start
    rm -f "$d/data/postmaster.pid" "$d"/.s.PGSQL.*.lock
    if [ ! -s "$d/data/PG_VERSION" ]; then
      rm -rf "$d/data"
      as_postgres "$bin/initdb" -D "$d/data" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 > "$d/initdb.log" 2>&1 \
        || { cat "$d/initdb.log" >&2; fail "initdb failed"; }
    fi
    port_taken "$PG_PORT" && fail "127.0.0.1:$PG_PORT is taken (set PG_PORT)"
    say "starting postgres on 127.0.0.1:$PG_PORT"
    # own socket directory (Debian's /var/run/postgresql may be missing); durability off:
    # the data is thrown away
    as_postgres "$bin/pg_ctl" -D "$d/data" -l "$d/postgres.log" -w -t "$SVC_TIMEOUT" -o \
      "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$d -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >&2 || { tail -n 20 "$d/postgres.log" >&2; fail "postgres did not start"; }
  fi
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$d" -p "$PG_PORT" -U postgres -d postgres \
    -v u="$SVC_USER" -v p="$SVC_PASS" -v db="$SVC_DB" >&2 <<'SQL'
SELECT format('CREATE ROLE %I', :'u') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'u')\gexec
SELECT format('ALTER ROLE %I LOGIN CREATEDB PASSWORD %L', :'u', :'p')\gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'u') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db')\gexec
SQL
  url_put MONITORD_TEST_POSTGRES_URL "postgresql://$SVC_USER:$SVC_PASS@127.0.0.1:$PG_PORT/$SVC_DB"
}

stop_postgres() {
  local d=$SVC_DIR/postgres pid; pid=$(read_pid "$d/data/postmaster.pid")
  [ -d "$d" ] || return 0
  if is_up "$pid" postgres; then
    say "stopping postgres (pid $pid)"
    # fast: roll back open transactions, disconnect clients, clean shutdown
    as_postgres "$(pg_bindir)/pg_ctl" -D "$d/data" -m fast -w -t 60 stop >&2 \
      || terminate postgres "$pid" postgres
  fi
  url_drop MONITORD_TEST_POSTGRES_URL
}

# ================================================================ MariaDB
start_mariadb() {
  need_package /usr/sbin/mariadbd mariadb-server
  local d=$SVC_DIR/mariadb
  mkdir -p "$d"; chown mysql:mysql "$d"
  # --defaults-file (always the first option) keeps /etc/mysql out of the picture
  cat > "$d/my.cnf" <<CNF
[client-server]
socket = $d/mysqld.sock
port = $MYSQL_PORT
[mariadbd]
user = mysql
datadir = $d/data
pid-file = $d/mariadbd.pid
log-error = $d/error.log
bind-address = 127.0.0.1
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
innodb_buffer_pool_size = 64M
innodb_flush_log_at_trx_commit = 2
max_connections = 200
CNF
  local cnf=--defaults-file=$d/my.cnf
  if is_up "$(read_pid "$d/mariadbd.pid")" mariadbd; then
    say "mariadb is running (pid $(read_pid "$d/mariadbd.pid"))"
  else
    if [ ! -d "$d/data/mysql" ]; then
      rm -rf "$d/data"
      mariadb-install-db "$cnf" --skip-test-db --skip-name-resolve \
        --auth-root-authentication-method=socket > "$d/install.log" 2>&1 \
        || { cat "$d/install.log" >&2; fail "mariadb-install-db failed"; }
    fi
    port_taken "$MYSQL_PORT" && fail "127.0.0.1:$MYSQL_PORT is taken (set MYSQL_PORT)"
    say "starting mariadb on 127.0.0.1:$MYSQL_PORT"
    rm -f "$d/mariadbd.pid"
    detach "$d/launcher.pid" "$d/stdout.log" mariadbd "$cnf"
    local _ ready=0
    for _ in $(seq $((SVC_TIMEOUT * 10))); do
      if mariadb-admin "$cnf" -uroot --connect-timeout=2 ping >/dev/null 2>&1; then ready=1; break; fi
      is_up "$(read_pid "$d/launcher.pid")" mariadbd || break
      sleep 0.1
    done
    if [ "$ready" = 0 ]; then
      tail -n 20 "$d/error.log" >&2 || true
      terminate mariadb "$(read_pid "$d/launcher.pid")" mariadbd
      fail "mariadb did not come up"
    fi
  fi
  # The user owns SVC_DB and any database whose name starts with it (tests make scratch ones).
  mariadb "$cnf" -uroot >&2 <<SQL
CREATE DATABASE IF NOT EXISTS \`$SVC_DB\` CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS '$SVC_USER'@'%' IDENTIFIED BY '$SVC_PASS';
ALTER USER '$SVC_USER'@'%' IDENTIFIED BY '$SVC_PASS';
GRANT ALL PRIVILEGES ON \`$SVC_DB%\`.* TO '$SVC_USER'@'%';
SQL
  url_put MONITORD_TEST_MYSQL_URL "mysql://$SVC_USER:$SVC_PASS@127.0.0.1:$MYSQL_PORT/$SVC_DB"
}

stop_mariadb() {
  local d=$SVC_DIR/mariadb
  [ -d "$d" ] || return 0
  terminate mariadb "$(read_pid "$d/mariadbd.pid")" mariadbd   # SIGTERM: clean InnoDB shutdown
  terminate mariadb "$(read_pid "$d/launcher.pid")" mariadbd
  rm -f "$d/launcher.pid"
  url_drop MONITORD_TEST_MYSQL_URL
}

# ================================================================ main
canonical() {
  case $1 in
    rabbitmq|amqp) echo rabbitmq ;;
    postgres|postgresql|pg) echo postgres ;;
    mariadb|mysql) echo mariadb ;;
    *) fail "unknown service '$1' (rabbitmq, postgres, mariadb)" ;;
  esac
}

main() {
  local action=${1:-}; shift || true
  local purge=0 names=() arg
  for arg in "$@"; do
    if [ "$arg" = --purge ]; then purge=1; else names+=("$(canonical "$arg")"); fi
  done
  local all=0
  [ ${#names[@]} -gt 0 ] || { names=(rabbitmq postgres mariadb); all=1; }
  mkdir -p "$SVC_DIR"; chmod 755 "$SVC_DIR"   # postgres and mysql users must traverse it
  load_settings
  case $action in
    start)
      [ "$(id -u)" = 0 ] || fail "run as root (apt-get, runuser)"
      save_settings
      for arg in "${names[@]}"; do "start_$arg"; done ;;
    stop)
      for arg in "${names[@]}"; do
        "stop_$arg"
        if [ "$purge" = 1 ]; then rm -rf "${SVC_DIR:?}/$arg"; fi
      done
      if [ "$purge" = 1 ] && [ "$all" = 1 ]; then rm -rf "$SVC_DIR"; fi ;;
    restart)
      [ "$all" = 0 ] || fail "restart needs the service names"
      [ "$(id -u)" = 0 ] || fail "run as root (apt-get, runuser)"
      save_settings
      for arg in "${names[@]}"; do "stop_$arg"; "start_$arg"; done ;;
    status)
      local pidfile comm
      for arg in "${names[@]}"; do
        case $arg in
          rabbitmq) pidfile=$SVC_DIR/rabbitmq/beam.pid comm=beam ;;
          postgres) pidfile=$SVC_DIR/postgres/data/postmaster.pid comm=postgres ;;
          mariadb) pidfile=$SVC_DIR/mariadb/mariadbd.pid comm=mariadbd ;;
        esac
        if is_up "$(read_pid "$pidfile")" "$comm"; then echo "$arg running"; else echo "$arg stopped"; fi
      done ;;
    urls) if [ -r "$URLS_FILE" ]; then cat "$URLS_FILE"; fi ;;
    *) fail "usage: services.sh start|stop [--purge]|restart|status|urls [rabbitmq] [postgres] [mariadb]" ;;
  esac
}

main "$@"
