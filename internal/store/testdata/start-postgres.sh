#!/usr/bin/env bash
# Copyright agenteval-collector contributors
# SPDX-License-Identifier: Apache-2.0
#
# Installs (when missing) and starts a local PostgreSQL server on 127.0.0.1:5432 for the
# internal/store tests, creates the test role and database, and prints the DSN to use as
# AGENTEVAL_TEST_POSTGRES_DSN on stdout (one line; everything else goes to stderr):
#
#   export AGENTEVAL_TEST_POSTGRES_DSN="$(internal/store/testdata/start-postgres.sh)"
#   go test ./internal/store/...
#
# Idempotent: safe to run again on a machine where the server already runs. Needs root on
# Debian/Ubuntu (apt-get, pg_createcluster, pg_ctlcluster from postgresql-common).
# Overrides: AGENTEVAL_PG_USER, AGENTEVAL_PG_PASSWORD, AGENTEVAL_PG_DB (defaults agenteval,
# agenteval, agenteval_test).
set -euo pipefail

user="${AGENTEVAL_PG_USER:-agenteval}"
password="${AGENTEVAL_PG_PASSWORD:-agenteval}"
db="${AGENTEVAL_PG_DB:-agenteval_test}"
host=127.0.0.1
port=5432

log() { echo "start-postgres: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	log "must run as root (installs packages and starts the server)"
	exit 1
fi

if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
	log "installing postgresql"
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
fi

version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if ! pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
	log "creating cluster $version/main"
	pg_createcluster "$version" main --port "$port" >&2
fi

# Loopback only, fixed port: a drop-in file read through the cluster's include_dir
# (postgresql.conf itself is left as packaged). A change needs a restart.
conf="/etc/postgresql/$version/main/conf.d/agenteval-test.conf"
want="$(printf "listen_addresses = '%s'\nport = %s\n" "$host" "$port")"
changed=0
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
	printf '%s\n' "$want" >"$conf"
	changed=1
fi

status="$(pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" { print $4 }')"
if [ "$status" = "online" ] && [ "$changed" -eq 1 ]; then
	log "restarting cluster $version/main (configuration changed)"
	pg_ctlcluster "$version" main restart >&2
elif [ "$status" != "online" ]; then
	log "starting cluster $version/main"
	pg_ctlcluster "$version" main start >&2
fi

for _ in $(seq 1 30); do
	if pg_isready -q -h "$host" -p "$port"; then
		break
	fi
	sleep 1
done
if ! pg_isready -q -h "$host" -p "$port"; then
	log "server not ready on $host:$port; see /var/log/postgresql/postgresql-$version-main.log"
	exit 1
fi

psql_admin() { runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$port" "$@"; }

if [ "$(psql_admin -tA -c "SELECT 1 FROM pg_roles WHERE rolname = '$user'")" != "1" ]; then
	log "creating role $user"
	psql_admin -c "CREATE ROLE \"$user\" LOGIN PASSWORD '$password'"
else
	psql_admin -c "ALTER ROLE \"$user\" LOGIN PASSWORD '$password'"
fi
if [ "$(psql_admin -tA -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != "1" ]; then
	log "creating database $db"
	psql_admin -c "CREATE DATABASE \"$db\" OWNER \"$user\""
fi

echo "postgres://$user:$password@$host:$port/$db?sslmode=disable"
