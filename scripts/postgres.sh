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
# A cluster stopped uncleanly (a machine image taken while it ran) first recovers, and recovery
# syncs every file of the data directory: on a large cluster that outlasts pg_ctl's 60 s, so
# pg_ctl waits up to 10 minutes and the script waits for readiness as long, saying so.
start() {
  # shellcheck disable=SC2086
  pg_ctlcluster --skip-systemctl-redirect $cluster start -- -t 600 >&2 2>&1 || true
  for i in $(seq 1 600); do
    pg_isready -q -h 127.0.0.1 && break
    [ $((i % 30)) -eq 0 ] && log "waiting for PostgreSQL to accept connections (${i} s)"
    sleep 1
  done
  pg_isready -h 127.0.0.1 >&2
}
start
psql_su() { runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtA "$@"; }
# Recovery syncs the data directory with one syncfs per file system instead of one fsync per
# file (PostgreSQL 14 and later; applies from the next start). Set once: an older server has no
# such setting, and one already set is left alone.
if [ "$(psql_su -c "SHOW recovery_init_sync_method" 2>/dev/null || true)" = "fsync" ]; then
  psql_su -c "ALTER SYSTEM SET recovery_init_sync_method = 'syncfs'" >&2 &&
    psql_su -c "SELECT pg_reload_conf()" >/dev/null
fi
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
  start
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
