#!/usr/bin/env bash
# setup-postgres.sh — start a real PostgreSQL server on loopback for
# skillgate's PostgreSQL tests, and print shell lines to eval.
#
# Usage:
#   eval "$(scripts/setup-postgres.sh)"     # install if missing, initdb, start
#   go test -race ./internal/storage/store/...               # the PostgreSQL tests now run instead of skipping
#   scripts/setup-postgres.sh stop          # stop the server, remove its directory
#                                           # (reads SKILLGATE_TEST_POSTGRES_DIR)
#
# Printed on stdout (everything else goes to stderr):
#   export SKILLGATE_TEST_POSTGRES=postgres://skillgate:skillgate@127.0.0.1:<port>/skillgate?sslmode=disable
#   export SKILLGATE_TEST_POSTGRES_DIR=<temp dir>
#
# The cluster is made with initdb in a fresh temporary directory (its unix
# socket directory is there too), listens on 127.0.0.1 only, on a free port,
# and runs without fsync: it holds test data only. The role skillgate may
# create databases, so that each test makes its own and drops it. PostgreSQL
# refuses to run as root: as root, the server runs as the user postgres
# (made by Debian's package), or SKILLGATE_TEST_POSTGRES_USER.
set -euo pipefail

log() { echo "setup-postgres: $*" >&2; }

# run runs a command as the server's user: root hands it to an unprivileged
# one, anyone else runs it as themselves.
RUN_AS=""
if [[ $(id -u) -eq 0 ]]; then
	RUN_AS="${SKILLGATE_TEST_POSTGRES_USER:-postgres}"
fi
run() {
	if [[ -n "$RUN_AS" ]]; then
		runuser -u "$RUN_AS" -- "$@"
	else
		"$@"
	fi
}

# 1. Find or install the server binaries (Debian keeps them in
#    /usr/lib/postgresql/<major>/bin, outside PATH).
find_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then echo "$d"; return; fi
	done
	if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
		dirname "$(command -v pg_ctl)"
	fi
}

if [[ "${1:-}" == "stop" ]]; then
	DIR="${SKILLGATE_TEST_POSTGRES_DIR:-}"
	if [[ -n "$DIR" && -d "$DIR" && "$DIR" == */skillgate-pg.* ]]; then
		BIN="$(find_bin || true)"
		if [[ -n "$BIN" && -f "$DIR/data/postmaster.pid" ]]; then
			run "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >&2 || true
			log "stopped PostgreSQL in $DIR"
		fi
		rm -rf "$DIR"
	fi
	exit 0
fi

BIN="$(find_bin || true)"
if [[ -z "$BIN" ]]; then
	log "installing postgresql with apt-get"
	"$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" postgresql
	BIN="$(find_bin || true)"
fi
[[ -n "$BIN" ]] || { log "initdb and pg_ctl not found after install"; exit 1; }
if [[ -n "$RUN_AS" ]] && ! id -u "$RUN_AS" >/dev/null 2>&1; then
	log "creating the unprivileged user $RUN_AS to run PostgreSQL (it refuses to run as root)"
	useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_AS"
fi

# 2. A fresh cluster in a temporary directory the server's user owns.
DIR="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-pg.XXXXXX")"
chmod 0755 "$DIR"
[[ -n "$RUN_AS" ]] && chown "$RUN_AS" "$DIR"
PWFILE="$DIR/pw"
echo skillgate >"$PWFILE"
[[ -n "$RUN_AS" ]] && chown "$RUN_AS" "$PWFILE"
if ! run "$BIN/initdb" -D "$DIR/data" -U skillgate --pwfile="$PWFILE" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1; then
	log "initdb failed; log follows"
	cat "$DIR/initdb.log" >&2
	rm -rf "$DIR"
	exit 1
fi
rm -f "$PWFILE"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# 3. Start on a free loopback port; retry if another process takes the port
#    between the probe and the bind.
started=""
for _ in 1 2 3 4 5; do
	PORT=$(( 20000 + RANDOM % 40000 ))
	port_free "$PORT" || continue
	if run "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 30 \
		-o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >&2; then
		started=1
		break
	fi
done
if [[ -z "$started" ]]; then
	log "PostgreSQL did not start; log follows"
	cat "$DIR/postgres.log" >&2 || true
	rm -rf "$DIR"
	exit 1
fi

# 4. The database the DSN names (tests make their own beside it).
PGPASSWORD=skillgate run "$BIN/psql" -q -h "$DIR" -p "$PORT" -U skillgate -d postgres -v ON_ERROR_STOP=1 \
	-c "CREATE DATABASE skillgate" >&2
log "PostgreSQL ($BIN) listening on 127.0.0.1:$PORT, data in $DIR"

cat <<OUT
export SKILLGATE_TEST_POSTGRES='postgres://skillgate:skillgate@127.0.0.1:$PORT/skillgate?sslmode=disable'
export SKILLGATE_TEST_POSTGRES_DIR=$DIR
OUT
