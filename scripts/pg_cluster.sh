#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the fleet tests (make test-fleet; docs/fleet.md).
#
#   scripts/pg_cluster.sh start DIR   # initdb + start in DIR (created, must not exist);
#                                     # prints the admin URL on stdout
#   scripts/pg_cluster.sh restart DIR # stop and start it again on the same port (tests of
#                                     # workers surviving a database restart)
#   scripts/pg_cluster.sh stop DIR    # stop the cluster and remove DIR
#
# PostgreSQL comes from Debian's packages, installed here when missing (CI runs as root on a
# clean machine; apt-get is its only way to get it). The server refuses to run as root, so as
# root the cluster belongs to the `postgres` user the package creates (runuser), in a
# directory it owns. It listens on 127.0.0.1 only, on a free port, and on a unix socket inside
# DIR; authentication is `trust` for local connections, acceptable for a cluster that lives
# for one test run and holds only test data. PG_MAX_CONNECTIONS (default 200) sets the
# server's max_connections (bench/fleet.py's 32 workers need more).
set -euo pipefail

pg_bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

ensure_postgres() {
    if pg_bindir >/dev/null; then return; fi
    if [ "$(id -u)" != 0 ]; then
        echo "pg_cluster: PostgreSQL is not installed; as root: apt-get install -y postgresql" >&2
        exit 1
    fi
    echo "pg_cluster: installing PostgreSQL from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # Only the server binaries: postgresql-common creates (and starts) no "main" cluster when
    # told so before the install; the tests make their own in DIR.
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/baton.conf
    apt-get install -y -qq postgresql >&2
}

# Runs a command as the cluster's owner: ourselves, or `postgres` when we are root.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
    local dir=$1
    ensure_postgres
    local bin
    bin=$(pg_bindir)
    if [ -e "$dir" ]; then echo "pg_cluster: $dir already exists" >&2; exit 1; fi
    mkdir -p "$dir"
    chmod 0700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    local port
    port=$(free_port)
    echo "$port" >"$dir/port"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=${PG_MAX_CONNECTIONS:-200}" \
        >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

restart() {
    local dir=$1 bin port
    bin=$(pg_bindir)
    port=$(cat "$dir/port")
    as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >/dev/null
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=${PG_MAX_CONNECTIONS:-200}" \
        >/dev/null
}

stop() {
    local dir=$1
    [ -d "$dir/data" ] || { rm -rf "$dir"; return; }
    local bin
    bin=$(pg_bindir)
    as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}

case "${1:-}" in
start) start "$2" ;;
restart) restart "$2" ;;
stop) stop "$2" ;;
*) echo "usage: $0 start|restart|stop DIR" >&2; exit 2 ;;
esac
