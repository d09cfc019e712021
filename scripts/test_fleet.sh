#!/usr/bin/env bash
# make test-fleet: the fleet suite (tests/fleet) and the run store's tests on PostgreSQL, in a
# throwaway cluster (scripts/pg_cluster.sh) that is stopped and removed however the run ends.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.venv/bin}
CLUSTER=$(mktemp -d -u /tmp/baton-fleet-pg.XXXXXX)
trap 'scripts/pg_cluster.sh stop "$CLUSTER"' EXIT
URL=$(scripts/pg_cluster.sh start "$CLUSTER")
echo "test-fleet: PostgreSQL at $URL (cluster in $CLUSTER)"
# BATON_TEST_POSTGRES_CLUSTER lets the restart test stop and start the server.
BATON_TEST_POSTGRES_URL="$URL" BATON_TEST_POSTGRES_CLUSTER="$CLUSTER" \
    "$BIN/pytest" -q -p no:cacheprovider tests/store tests/fleet tests/service/test_fleet_view.py
