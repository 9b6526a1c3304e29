#!/usr/bin/env bash
# A throw-away PostgreSQL 15 cluster for the tests, under a private directory on 127.0.0.1.
#   tools/pg_test_cluster.sh start DIR [PORT]   # prints the server's URL (postgresql://...)
#   tools/pg_test_cluster.sh stop DIR
# initdb refuses to run as root, so as root the cluster runs as the `postgres` user. Trust
# authentication, no fsync at initdb (the tests' durability is the server's own business).
set -euo pipefail
cmd=$1
dir=$2
bin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$bin/initdb" ] || bin=/usr/lib/postgresql/15/bin
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)
case "$cmd" in
  start)
    port=${3:-55432}
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
    if [ ! -d "$dir/data" ]; then
      "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qAt -c 'CREATE DATABASE agentstream' \
      postgres >/dev/null 2>&1 || true  # exists from an earlier start
    echo "postgresql://postgres@127.0.0.1:$port/agentstream"
    ;;
  stop)
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *)
    echo "usage: $0 start DIR [PORT] | stop DIR" >&2
    exit 2
    ;;
esac
