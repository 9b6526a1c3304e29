#!/usr/bin/env bash
# A throw-away PostgreSQL 15 cluster for the tests, under a private directory.
#   tools/pg_test_cluster.sh start DIR [PORT]   # prints the server's URL (postgresql://...)
#   tools/pg_test_cluster.sh stop DIR
# Without PORT (what tools/test.sh does) the server listens on no TCP port at all, only on a
# Unix socket in DIR (postgresql://postgres@/agentstream?host=DIR): a TCP port would have to be
# chosen before the server starts (PostgreSQL cannot bind port 0 and report the port it got), and
# another test or any outgoing connection could take it in between; a socket in a directory of
# our own collides with nothing, so clusters of several test runs side by side never meet. With
# PORT it also listens on 127.0.0.1:PORT (for benchmarks or a client that needs TCP), and the URL
# names that.
# initdb refuses to run as root, so as root the cluster runs as the `postgres` user. Trust
# authentication, no fsync at initdb (the tests' durability is the server's own business).
set -euo pipefail
cmd=${1:-}
dir=${2:-}
if [ -z "$dir" ]; then
  echo "usage: $0 start DIR [PORT] | stop DIR" >&2
  exit 2
fi
[ "$cmd" = start ] && mkdir -p "$dir"
dir=$(cd "$dir" && pwd)  # absolute: libpq takes a host that starts with / for a socket directory
bin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$bin/initdb" ] || bin=/usr/lib/postgresql/15/bin
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)
case "$cmd" in
  start)
    tcp_port=${3:-}
    # The socket file is DIR/.s.PGSQL.PORT; without TCP the number only names that file.
    port=${tcp_port:-5432}
    listen=""
    [ -n "$tcp_port" ] && listen=127.0.0.1
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
    if [ ! -d "$dir/data" ]; then
      "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses='$listen' -c max_connections=200" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    "$bin/psql" -h "$dir" -p "$port" -U postgres -qAt -c 'CREATE DATABASE agentstream' \
      postgres >/dev/null 2>&1 || true  # exists from an earlier start
    if [ -n "$tcp_port" ]; then
      echo "postgresql://postgres@127.0.0.1:$port/agentstream"
    else
      echo "postgresql://postgres@/agentstream?host=$dir&port=$port"
    fi
    ;;
  stop)
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *)
    echo "usage: $0 start DIR [PORT] | stop DIR" >&2
    exit 2
    ;;
esac
