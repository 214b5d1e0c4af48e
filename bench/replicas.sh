#!/usr/bin/env bash
# replicas.sh: the capability path with one and with two `skillgate serve`
# replicas on one PostgreSQL database (issue 19). Closed-loop agents over
# streamable HTTP on 127.0.0.1 call a read tool of an imported skill (the
# project's test MCP server, which answers at once); each call is decided
# by a stored policy, forwarded and its audit record committed before the
# result is returned. Prints decisions per second and the p50/p99 latency
# the agents see with 1 and 2 replicas, and the 2-to-1 ratios.
#
# Usage: bench/replicas.sh [-agents N] [-duration D] [-json FILE]
#   -agents N     agents calling at once, spread over the replicas (default 20)
#   -duration D   measured time per phase (default 10s)
# PostgreSQL: the server SKILLGATE_TEST_POSTGRES names, else one started
# with scripts/setup-postgres.sh for the run (and stopped after it); the
# run uses a database of its own, dropped at the end.
# SKILLGATE_BIN=PATH measures a given build.
# Exit status: 0 done without errors, 1 a call failed, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in -h | --help) sed -n '2,17p' "$0"; exit 0 ;; esac

stop_pg=""
db=""
cleanup() {
	[[ -n "$db" ]] && psql -q "$SKILLGATE_TEST_POSTGRES" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	[[ -n "$stop_pg" ]] && scripts/setup-postgres.sh stop || true
}
trap cleanup EXIT
if [[ -z "${SKILLGATE_TEST_POSTGRES:-}" ]]; then
	eval "$(scripts/setup-postgres.sh)" || exit 2
	stop_pg=1
fi
db="skillgate_replicas_bench_$$"
psql -q "$SKILLGATE_TEST_POSTGRES" -c "CREATE DATABASE $db" >/dev/null || exit 2
# The same server and role, the new database.
dsn="$(printf '%s' "$SKILLGATE_TEST_POSTGRES" | sed -E "s#^(postgres(ql)?://[^/]+/)[^?]*#\1$db#")"
go run ./bench/replicasbench -dsn "$dsn" "$@"
