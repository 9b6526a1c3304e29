#!/usr/bin/env bash
# A throw-away PostgreSQL 15 primary with a synchronous streaming standby, under a private
# directory, for failover tests and benchmarks (docs/operations.md, "High availability").
#   tools/pg_test_pair.sh start DIR [PORT_A PORT_B]  # prints the multi-host URL (as `conninfo`)
#   tools/pg_test_pair.sh conninfo DIR [--keywords]  # the URL, or the same as libpq keywords
#   tools/pg_test_pair.sh status DIR                 # "primary a" / "standby b" / "down a" lines
#   tools/pg_test_pair.sh kill-primary DIR           # kill -9 the primary's postmaster and backends
#   tools/pg_test_pair.sh promote DIR                # pg_ctl promote the standby
#   tools/pg_test_pair.sh fence DIR                  # stop the old primary, if it still runs
#   tools/pg_test_pair.sh rebuild DIR                # the dead node anew, as the new standby
#   tools/pg_test_pair.sh stop DIR
# The `postgres` user must be able to reach DIR (not under a directory only root may enter).
# The two nodes are DIR/a and DIR/b, each with its data, its log and its Unix socket in its own
# directory (and on 127.0.0.1:PORT when ports are given). Replication is synchronous:
# synchronous_commit=on and, on the primary while its standby streams,
# synchronous_standby_names='*', so a COMMIT returns only once the standby has flushed it.
# `promote` does what Patroni's synchronous_mode does when no synchronous standby is left: the new
# primary stops waiting for one (synchronous_standby_names='') until `rebuild` has given it a
# standby that streams again; with STRICT=1 it keeps waiting, and commits block until then.
# `rebuild` takes a fresh pg_basebackup from the new primary (the test databases are small; for a
# large one pg_rewind would be the faster way). As root every server runs as the `postgres` user.
# FSYNC=off in the environment starts the servers with fsync=off (tests; see below).
set -euo pipefail
usage() {
  echo "usage: $0 start DIR [PORT_A PORT_B] | conninfo DIR [--keywords] | status DIR |" \
    "kill-primary DIR | promote DIR | fence DIR | rebuild DIR | stop DIR" >&2
  exit 2
}
cmd=${1:-}
dir=${2:-}
[ -n "$dir" ] || usage
[ "$cmd" = start ] && mkdir -p "$dir"
[ -d "$dir" ] || { echo "$0: no pair in $dir" >&2; exit 1; }
dir=$(cd "$dir" && pwd)  # absolute: libpq takes a host that starts with / for a socket directory
bin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$bin/initdb" ] || bin=/usr/lib/postgresql/15/bin
# FSYNC=off: the servers never fsync (a test that kills processes, not machines, loses nothing
# by it, and a standby's start skips syncing its whole data directory, seconds on a busy disk).
fsync=${FSYNC:-on}
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)

port_of() { cat "$dir/$1/port"; }
# Runs one statement on node $1 and prints its answer (empty when the node is down).
sql() { "$bin/psql" -h "$dir/$1" -p "$(port_of "$1")" -U postgres -qAt -c "$2" postgres 2>/dev/null; }
running() { "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/$1/data" status >/dev/null 2>&1; }
role() {
  if ! running "$1"; then echo down; return; fi
  case "$(sql "$1" 'SELECT pg_is_in_recovery()')" in
    f) echo primary ;;
    t) echo standby ;;
    *) echo down ;;
  esac
}
other() { [ "$1" = a ] && echo b || echo a; }
# The node that is the primary, as this script last made it (DIR/primary).
primary() { cat "$dir/primary"; }
start_node() {
  local n=$1 port listen=""
  port=$(port_of "$n")
  [ "$(cat "$dir/$n/tcp")" = 1 ] && listen=127.0.0.1
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/$n/data" -l "$dir/$n/server.log" -w \
    -o "-p $port -k $dir/$n -c listen_addresses='$listen' -c max_connections=200 -c fsync=$fsync" \
    start >/dev/null ||
    { cat "$dir/$n/server.log" >&2; exit 1; }
}
# Waits (up to 30 s) for node $1 to answer as $2 (primary or standby).
await_role() {
  for _ in $(seq 300); do [ "$(role "$1")" = "$2" ] && return; sleep 0.1; done
  echo "$0: node $1 is not $2 after 30 s" >&2
  exit 1
}
# Waits (up to 30 s) for the primary $1 to see a standby streaming, then makes it synchronous.
make_synchronous() {
  sql "$1" "DO \$\$ BEGIN
      FOR i IN 1..300 LOOP
        EXIT WHEN EXISTS (SELECT FROM pg_stat_replication WHERE state = 'streaming');
        PERFORM pg_sleep(0.1);
      END LOOP; END \$\$" >/dev/null
  sql "$1" "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
  sql "$1" 'SELECT pg_reload_conf()' >/dev/null
  [ "$(sql "$1" "DO \$\$ BEGIN
      FOR i IN 1..300 LOOP
        EXIT WHEN EXISTS (SELECT FROM pg_stat_replication WHERE sync_state = 'sync');
        PERFORM pg_sleep(0.05);
      END LOOP; END \$\$; SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ] &&
    return
  echo "$0: the standby of $1 is not synchronous after 30 s" >&2
  exit 1
}
# A standby of the primary $2 in node $1's directory, from a fresh base backup.
clone_standby() {
  local n=$1 from=$2
  rm -rf "$dir/$n/data"
  "${as_owner[@]}" "$bin/pg_basebackup" -D "$dir/$n/data" -h "$dir/$from" -p "$(port_of "$from")" \
    -U postgres -X stream -c fast --no-sync -R \
    -d "application_name=$n" >"$dir/$n/basebackup.log" 2>&1 ||
    { cat "$dir/$n/basebackup.log" >&2; exit 1; }
  # The copy carries the primary's ALTER SYSTEM settings; as a standby it waits for nobody.
  "${as_owner[@]}" sed -i '/synchronous_standby_names/d' "$dir/$n/data/postgresql.auto.conf"
  start_node "$n"  # pg_ctl -w: returns once the standby takes (read-only) connections
}
conninfo() {
  local pa pb
  pa=$(port_of a)
  pb=$(port_of b)
  if [ "${1:-}" = --keywords ]; then
    if [ "$(cat "$dir/a/tcp")" = 1 ]; then
      echo "host=127.0.0.1,127.0.0.1 port=$pa,$pb user=postgres dbname=agentstream target_session_attrs=read-write"
    else
      echo "host=$dir/a,$dir/b port=$pa,$pb user=postgres dbname=agentstream target_session_attrs=read-write"
    fi
  elif [ "$(cat "$dir/a/tcp")" = 1 ]; then
    echo "postgresql://postgres@127.0.0.1:$pa,127.0.0.1:$pb/agentstream?target_session_attrs=read-write"
  else
    echo "postgresql://postgres@/agentstream?host=$dir/a,$dir/b&port=$pa,$pb&target_session_attrs=read-write"
  fi
}

case "$cmd" in
  start)
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
    for n in a b; do
      mkdir -p "$dir/$n"
      [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir/$n"
      if [ -n "${3:-}" ]; then
        [ "$n" = a ] && echo "$3" >"$dir/$n/port" || echo "${4:?PORT_B}" >"$dir/$n/port"
        echo 1 >"$dir/$n/tcp"
      else
        echo 5432 >"$dir/$n/port"  # names only the socket file DIR/n/.s.PGSQL.5432
        echo 0 >"$dir/$n/tcp"
      fi
    done
    if [ ! -d "$dir/a/data" ]; then
      "${as_owner[@]}" "$bin/initdb" -D "$dir/a/data" -A trust -U postgres --no-sync \
        >"$dir/a/initdb.log" 2>&1 || { cat "$dir/a/initdb.log" >&2; exit 1; }
      # Trust, also for replication over TCP; the servers listen on 127.0.0.1 only.
      echo "host replication all 127.0.0.1/32 trust" >>"$dir/a/data/pg_hba.conf"
      cat >>"$dir/a/data/postgresql.conf" <<EOF
synchronous_commit = on
wal_level = replica
max_wal_senders = 10
hot_standby = on
wal_keep_size = '256MB'
EOF
      start_node a
      sql a 'CREATE DATABASE agentstream' >/dev/null
      echo a >"$dir/primary"
      clone_standby b a
      make_synchronous a
    else
      for n in a b; do running "$n" || start_node "$n"; done
    fi
    conninfo
    ;;
  conninfo)
    conninfo "${3:-}"
    ;;
  status)
    for n in a b; do echo "$(role "$n") $n"; done
    ;;
  kill-primary)
    p=$(primary)
    running "$p" || { echo "$0: the primary $p is not running" >&2; exit 1; }
    pid=$(head -1 "$dir/$p/data/postmaster.pid")
    # The postmaster and every server process it started, at once, as when the host dies.
    kill -9 "$pid" $(pgrep -P "$pid") 2>/dev/null || true
    echo "$p"
    ;;
  promote)
    s=$(other "$(primary)")
    [ "$(role "$s")" = standby ] || { echo "$0: $s is not a running standby" >&2; exit 1; }
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/$s/data" -w promote >/dev/null
    await_role "$s" primary
    echo "$s" >"$dir/primary"
    if [ "${STRICT:-0}" != 1 ]; then
      sql "$s" "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
      sql "$s" 'SELECT pg_reload_conf()' >/dev/null
    fi
    echo "$s"
    ;;
  fence)
    # The old primary, when it still runs after the promotion (it was cut off, not killed), is
    # stopped at once (pg_ctl stop -m immediate), as Patroni stops a leader that lost its lock:
    # it takes no write once the other node is the primary.
    s=$(other "$(primary)")
    if running "$s"; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/$s/data" -m immediate -w stop >/dev/null || true
    fi
    echo "$s"
    ;;
  rebuild)
    p=$(primary)
    s=$(other "$p")
    # Whatever is left of the old primary goes (its data is made anew).
    if [ -f "$dir/$s/data/postmaster.pid" ]; then
      pid=$(head -1 "$dir/$s/data/postmaster.pid")
      kill -9 "$pid" $(pgrep -P "$pid") 2>/dev/null || true
    fi
    # A killed postmaster's socket and its lock file stay behind, and the new server refuses to
    # start while the lock names a live process: a zombie counts, and a container's init may reap
    # the old postmaster seconds later.
    rm -f "$dir/$s"/.s.PGSQL.*
    clone_standby "$s" "$p"
    make_synchronous "$p"
    echo "$s"
    ;;
  stop)
    for n in a b; do
      if running "$n"; then
        "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/$n/data" -m fast -w stop >/dev/null || true
      fi
    done
    ;;
  *)
    usage
    ;;
esac
