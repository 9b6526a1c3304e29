# The shared prelude of the end-to-end shell tests (bash). Source it first, then name the binary:
#
#   source "$(cd "$(dirname "$0")/../../.." && pwd)/tests/lib/e2e.sh"   # from src/cli/commands/
#   E2E_BIN=$1                                                          # the agentstream binary
#
# Sourcing creates a private temporary directory and installs a trap that, however the test ends
# (success, `fail`, a failed command, SIGINT/SIGTERM/SIGHUP), kills every process the test
# started (SIGKILL), drops every database `pg_database` created and removes the directory (kept
# when E2E_KEEP=1, and its path printed). Every server starts on port 0 and is found by the port
# it prints; no test guesses a free port. It also exports AGENTSTREAM_CONFIG=/dev/null, so that
# no agentstream the test runs reads the user's configuration file (a test of the file sets its
# own). Works under `set -euo pipefail` too.
#
# Variables
#   E2E_DIR    the private temporary directory of this run (under $TMPDIR, else /tmp)
#   E2E_BIN    the agentstream binary; the test sets it before start_daemon
#   NAME_url   set by start_daemon NAME / start_proxy NAME: http://127.0.0.1:PORT (https://
#   NAME_port  127.0.0.1:PORT for a daemon started with --tls-cert, https://localhost:PORT for a
#              TLS proxy) and PORT; exported. NAME is an identifier.
#
# Functions
#   fail MESSAGE...          prints "FAIL: MESSAGE", the tail of every daemon's log and of every
#                            file named by show_on_failure, and exits 1
#   skip MESSAGE...          prints MESSAGE and exits 77 (ctest's SKIP_RETURN_CODE)
#   show_on_failure FILE...  fail also prints the last lines of FILE
#   until_true SECONDS COMMAND...
#                            runs COMMAND every 0.1 s until it succeeds (returns 0) or SECONDS
#                            pass (returns 1)
#   track_pid PID            the cleanup kills PID (a child of the test's own shell: `cmd &
#                            track_pid $!`); kill it earlier yourself if the test needs to
#   wait_for_output FILE REGEX [SECONDS]
#                            waits (default 60 s) until a line of FILE matches the extended
#                            REGEX and prints the regex's first group of the first such line
#   start_daemon NAME [ARG...]
#                            starts `$E2E_BIN --data $E2E_DIR/NAME.data serve --listen
#                            127.0.0.1:0 ARG...` (ARG may hold global options such as --store
#                            URL), stdout and stderr appended to $E2E_DIR/NAME.log, waits for its
#                            "serving on" line and sets NAME_url and NAME_port. Fails the test
#                            when the daemon exits first or does not start within 60 s. Again
#                            after kill_daemon NAME: the same data directory, a new port.
#   kill_daemon NAME [SIGNAL]
#                            sends SIGNAL (default TERM: a clean stop; KILL: a crash) to daemon
#                            NAME and waits until it has exited (also fine when it already has)
#   daemon_pid NAME, daemon_url NAME, daemon_port NAME, daemon_data NAME
#                            print the pid (empty when it is not running), URL, port and data
#                            directory of daemon NAME
#   start_proxy NAME TARGET [--tls CERT_PEM KEY_PEM]
#                            a TCP proxy (tests/lib/tcp_proxy.mjs) in front of daemon TARGET that
#                            keeps one address while TARGET is restarted on other ports (its
#                            connections close while TARGET is down); sets NAME_url and NAME_port
#   contract_proxy NAME TARGET
#                            an HTTP proxy (tests/openapi/contract_proxy.mjs) in front of daemon
#                            TARGET, restarts included, that checks every answer of an operation
#                            of docs/openapi.yaml passing through it against the document; sets
#                            NAME_url and NAME_port. A test whose clients use NAME_url fails at its
#                            end when an answer did not match (each problem is printed). Without
#                            tests/openapi's packages (npm ci there) it is start_proxy's TCP proxy
#                            and nothing is checked (a line says so)
#   at_cleanup COMMAND...    the cleanup runs COMMAND (after killing the test's processes, before
#                            removing E2E_DIR), e.g. to unmount what the test mounted in it
#   pg_database              creates a database of its own on the PostgreSQL server of
#                            AGENTSTREAM_TEST_PG and prints its postgresql:// URL (dropped at
#                            exit); returns 1 when AGENTSTREAM_TEST_PG is unset or the server
#                            refuses
#
# Internal names start with _e2e.

_e2e_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_e2e_test_name=$(basename "$0" .sh)
E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-${_e2e_test_name}.XXXXXX")
E2E_BIN=${E2E_BIN:-}
export AGENTSTREAM_CONFIG=/dev/null  # not ~/.config/agentstream/config.toml (docs/cli.md)
declare -gA _e2e_daemon_pid=()
_e2e_show=()
_e2e_at_cleanup=()

# _e2e_child PID PARENT: PID runs (not a zombie) and is still a child of PARENT. A pid the
# kernel has given to another process since is not.
_e2e_child() {
  local stat state ppid
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  read -r state ppid _ <<<"${stat##*) }"
  [ "$ppid" = "$2" ] && [ "$state" != Z ]
}

_e2e_cleanup() {
  local status=$? pid parent db hook
  trap - EXIT
  if [ "$status" -eq 0 ] && [ -s "$E2E_DIR/contract.failures" ]; then
    echo "FAIL: answers that docs/openapi.yaml does not describe (tests/openapi/contract_proxy.mjs):"
    cat "$E2E_DIR/contract.failures"
    status=1
  fi
  # (bash reports each killed job on stderr; that is no news here)
  if [ -f "$E2E_DIR/.pids" ]; then
    {
      while read -r pid parent; do
        if _e2e_child "$pid" "$parent"; then kill -9 "$pid" || true; fi
      done <"$E2E_DIR/.pids"
      while read -r pid parent; do
        if [ "$parent" = "$$" ]; then wait "$pid" || true; fi
      done <"$E2E_DIR/.pids"
    } 2>/dev/null
  fi
  for hook in "${_e2e_at_cleanup[@]}"; do eval "$hook" || true; done
  if [ -f "$E2E_DIR/.databases" ]; then
    while read -r db; do
      psql "$AGENTSTREAM_TEST_PG" -qAt -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
        >/dev/null 2>&1 || echo "e2e: could not drop database $db" >&2
    done <"$E2E_DIR/.databases"
  fi
  if [ "${E2E_KEEP:-0}" = 1 ]; then
    echo "e2e: kept $E2E_DIR" >&2
  else
    # Never into a file system the test mounted inside it and failed to unmount.
    rm -rf --one-file-system "$E2E_DIR"
  fi
  exit "$status"
}
trap _e2e_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

fail() {
  local f
  echo "FAIL: $*"
  for f in "$E2E_DIR"/*.log "${_e2e_show[@]}"; do
    [ -f "$f" ] || continue
    echo "--- $f"
    tail -n 30 "$f"
  done
  exit 1
}

skip() {
  echo "SKIP: $*"
  exit 77
}

show_on_failure() { _e2e_show+=("$@"); }

at_cleanup() { _e2e_at_cleanup+=("$(printf '%q ' "$@")"); }

until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
  return 0
}

track_pid() { echo "$1 $BASHPID" >>"$E2E_DIR/.pids"; }

_e2e_name() {
  [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || fail "e2e: '$1' is not a valid name (an identifier)"
}

# _e2e_match FILE REGEX [OFFSET]: the first group of the first line of FILE from byte OFFSET on
# that matches REGEX.
_e2e_match() {
  local line
  [ -f "$1" ] || return 1
  while IFS= read -r line; do
    if [[ $line =~ $2 ]]; then
      printf '%s\n' "${BASH_REMATCH[1]}"
      return 0
    fi
  done < <(tail -c +$((${3:-0} + 1)) "$1")
  return 1
}

wait_for_output() {
  local file=$1 regex=$2 deadline=$((SECONDS + ${3:-60}))
  until _e2e_match "$file" "$regex"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.05
  done
}

_e2e_set() {  # _e2e_set NAME URL PORT
  printf -v "$1_url" '%s' "$2"
  printf -v "$1_port" '%s' "$3"
  export "$1_url" "$1_port"
}

daemon_data() { echo "$E2E_DIR/$1.data"; }
daemon_pid() {
  local pid=${_e2e_daemon_pid[$1]:-}
  if [ -n "$pid" ] && _e2e_child "$pid" "$$"; then echo "$pid"; fi
}
daemon_url() {
  local v="$1_url"
  echo "${!v:-}"
}
daemon_port() {
  local v="$1_port"
  echo "${!v:-}"
}

start_daemon() {
  local name=$1 log offset pid url deadline
  shift
  _e2e_name "$name"
  [ -n "$E2E_BIN" ] || fail "e2e: set E2E_BIN before start_daemon"
  [ -z "$(daemon_pid "$name")" ] || fail "e2e: daemon $name is already running"
  log="$E2E_DIR/$name.log"
  touch "$log"
  offset=$(stat -c %s "$log")
  "$E2E_BIN" --data "$(daemon_data "$name")" serve --listen 127.0.0.1:0 "$@" >>"$log" 2>&1 &
  pid=$!
  track_pid "$pid"
  _e2e_daemon_pid[$name]=$pid
  deadline=$((SECONDS + 60))
  until url=$(_e2e_match "$log" '^agentstream: serving on (https?://[^ ]+)' "$offset"); do
    if ! kill -0 "$pid" 2>/dev/null; then
      _e2e_daemon_pid[$name]=""
      fail "daemon $name exited before it served"
    fi
    [ "$SECONDS" -ge "$deadline" ] && fail "daemon $name did not start within 60 s"
    sleep 0.05
  done
  _e2e_set "$name" "$url" "${url##*:}"
  # For proxies in front of it (start_proxy): written whole, then renamed.
  echo "${url##*:}" >"$E2E_DIR/.$name.port.new"
  mv "$E2E_DIR/.$name.port.new" "$E2E_DIR/.$name.port"
}

kill_daemon() {
  local name=$1 signal=${2:-TERM} pid=${_e2e_daemon_pid[$1]:-}
  [ -n "$pid" ] || fail "e2e: daemon $name is not running"
  # First the proxies stop sending it connections, so none reaches whatever takes its port next.
  rm -f "$E2E_DIR/.$name.port"
  {
    if _e2e_child "$pid" "$$"; then kill -s "$signal" "$pid" || true; fi
    wait "$pid" || true
  } 2>/dev/null
  _e2e_daemon_pid[$name]=""
}

start_proxy() {
  local name=$1 target=$2 tls=() scheme=http host=127.0.0.1 out port
  shift 2
  _e2e_name "$name"
  if [ "${1:-}" = --tls ]; then
    tls=(--tls "$2" "$3")
    scheme=https
    host=localhost
  fi
  out="$E2E_DIR/$name.proxy.out"
  node "$_e2e_lib_dir/tcp_proxy.mjs" "${tls[@]}" --target-file "$E2E_DIR/.$target.port" \
    >"$out" 2>&1 &
  track_pid $!
  show_on_failure "$out"
  port=$(wait_for_output "$out" '^listening ([0-9]+)$' 30) || fail "proxy $name did not start"
  _e2e_set "$name" "$scheme://$host:$port" "$port"
}

contract_proxy() {
  local name=$1 target=$2 out port
  _e2e_name "$name"
  if [ ! -d "$_e2e_lib_dir/../openapi/node_modules/ajv" ]; then
    echo "e2e: tests/openapi/node_modules is missing (npm ci there): answers are not checked"
    start_proxy "$name" "$target"
    return 0
  fi
  out="$E2E_DIR/$name.proxy.out"
  node "$_e2e_lib_dir/../openapi/contract_proxy.mjs" --target-file "$E2E_DIR/.$target.port" \
    --failures "$E2E_DIR/contract.failures" >"$out" 2>&1 &
  track_pid $!
  show_on_failure "$out"
  port=$(wait_for_output "$out" '^listening ([0-9]+)$' 30) || fail "contract proxy $name did not start"
  _e2e_set "$name" "http://127.0.0.1:$port" "$port"
}

pg_database() {
  local db url
  [ -n "${AGENTSTREAM_TEST_PG:-}" ] || { echo "e2e: AGENTSTREAM_TEST_PG is not set" >&2; return 1; }
  command -v psql >/dev/null || { echo "e2e: psql is not installed" >&2; return 1; }
  # postgresql://[USER@][HOST][:PORT][/DATABASE][?PARAMS]: the same with DATABASE replaced.
  [[ $AGENTSTREAM_TEST_PG =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]] ||
    { echo "e2e: AGENTSTREAM_TEST_PG is not a postgresql:// URL" >&2; return 1; }
  db="e2e_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  url="${BASH_REMATCH[1]}/$db${BASH_REMATCH[4]}"
  echo "$db" >>"$E2E_DIR/.databases"
  psql "$AGENTSTREAM_TEST_PG" -v ON_ERROR_STOP=1 -qAt -c "CREATE DATABASE $db" >/dev/null ||
    { echo "e2e: could not create database $db" >&2; return 1; }
  echo "$url"
}
