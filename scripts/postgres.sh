#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster (installing the server when missing), makes the
# credo role and test database, and prints the export line for CREDO_TEST_POSTGRES.
# Usage: eval "$(bash scripts/postgres.sh)"
set -euo pipefail
log() { echo "postgres.sh: $*" >&2; }
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing the PostgreSQL server"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $1" "$2}')
if [ -z "$cluster" ]; then
  ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
  log "creating cluster $ver main"
  pg_createcluster "$ver" main >&2
  cluster="$ver main"
fi
# shellcheck disable=SC2086
pg_ctlcluster --skip-systemctl-redirect $cluster start >&2 2>&1 || true
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
pg_isready -h 127.0.0.1 >&2
psql_su() { runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtA "$@"; }
# The suites run packages in parallel, and some start whole credo processes (each with a pool of
# up to --database-max-conns connections plus its health connection): PostgreSQL's default of
# 100 connections is too few for a loaded test run, so the cluster gets 400 (restarted once for
# it). A cluster that cannot be restarted keeps its setting: that is logged, never fatal.
max=$(psql_su -c "SHOW max_connections" || echo 0)
if [ "${max:-0}" -lt 400 ] 2>/dev/null; then
  log "raising max_connections from ${max} to 400"
  if psql_su -c "ALTER SYSTEM SET max_connections = 400" >&2; then
    # shellcheck disable=SC2086
    pg_ctlcluster --skip-systemctl-redirect $cluster restart >&2 2>&1 ||
      log "restart failed; starting the cluster again with its previous setting"
  fi
  # shellcheck disable=SC2086
  pg_ctlcluster --skip-systemctl-redirect $cluster start >&2 2>&1 || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
  pg_isready -h 127.0.0.1 >&2
  log "max_connections is now $(psql_su -c "SHOW max_connections")"
fi
if [ "$(psql_su -c "SELECT 1 FROM pg_roles WHERE rolname='credo'")" != "1" ]; then
  psql_su -c "CREATE ROLE credo LOGIN PASSWORD 'credo' CREATEDB" >&2
fi
for db in credo_test credo; do
  if [ "$(psql_su -c "SELECT 1 FROM pg_database WHERE datname='$db'")" != "1" ]; then
    psql_su -c "CREATE DATABASE $db OWNER credo" >&2
  fi
done
echo "export CREDO_TEST_POSTGRES='postgres://credo:credo@127.0.0.1:5432/credo_test?sslmode=disable'"
