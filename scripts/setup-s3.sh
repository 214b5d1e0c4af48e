#!/usr/bin/env bash
# setup-s3.sh — start a real S3-compatible server (versitygw, posix backend) on
# loopback for skillgate's S3 tests, and print shell lines to eval.
#
# Usage:
#   eval "$(scripts/setup-s3.sh)"          # install if missing, start, create bucket
#   go test -race ./internal/storage/blob/... ./internal/agent/vfs/...     # the S3 tests now run instead of skipping
#   scripts/setup-s3.sh stop               # kill the server, remove its directory
#                                          # (reads SKILLGATE_TEST_S3_PID and _DIR)
#
# Printed on stdout (everything else goes to stderr):
#   export SKILLGATE_TEST_S3_ENDPOINT=http://127.0.0.1:<port>
#   export SKILLGATE_TEST_S3_BUCKET=…  SKILLGATE_TEST_S3_ACCESS_KEY=…
#   export SKILLGATE_TEST_S3_SECRET_KEY=…  SKILLGATE_TEST_S3_REGION=us-east-1
#   export SKILLGATE_TEST_S3_PID=<server pid>  SKILLGATE_TEST_S3_DIR=<temp dir>
#
# The server listens on 127.0.0.1 only, on a free port, with fixed test
# credentials, and stores objects as plain files (metadata in a sidecar
# directory, so no xattr support is needed) under a fresh temporary directory.
# Environment: VERSITYGW_VERSION (default v1.8.0), SKILLGATE_TEST_S3_BUCKET
# (default skillgate-test).
set -euo pipefail

VERSION="${VERSITYGW_VERSION:-v1.8.0}"
BUCKET="${SKILLGATE_TEST_S3_BUCKET:-skillgate-test}"
ACCESS_KEY="skillgate-test-access"
SECRET_KEY="skillgate-test-secret-key-0123456789"
REGION="us-east-1"

log() { echo "setup-s3: $*" >&2; }

if [[ "${1:-}" == "stop" ]]; then
	if [[ -n "${SKILLGATE_TEST_S3_PID:-}" ]] && kill -0 "$SKILLGATE_TEST_S3_PID" 2>/dev/null; then
		kill "$SKILLGATE_TEST_S3_PID"
		for _ in $(seq 50); do kill -0 "$SKILLGATE_TEST_S3_PID" 2>/dev/null || break; sleep 0.1; done
		log "stopped versitygw (pid $SKILLGATE_TEST_S3_PID)"
	fi
	if [[ -n "${SKILLGATE_TEST_S3_DIR:-}" && -d "$SKILLGATE_TEST_S3_DIR" && "$SKILLGATE_TEST_S3_DIR" == */skillgate-s3.* ]]; then
		rm -rf "$SKILLGATE_TEST_S3_DIR"
	fi
	exit 0
fi

# 1. Find or install versitygw.
find_gw() {
	local gobin
	if command -v versitygw >/dev/null 2>&1; then command -v versitygw; return; fi
	gobin="$(go env GOBIN)"
	[[ -z "$gobin" ]] && gobin="$(go env GOPATH)/bin"
	if [[ -x "$gobin/versitygw" ]]; then echo "$gobin/versitygw"; fi
}
GW="$(find_gw || true)"
if [[ -z "$GW" ]]; then
	log "installing versitygw $VERSION with go install (about 2 minutes on 2 cores)…"
	GOFLAGS=-buildvcs=false go install "github.com/versity/versitygw/cmd/versitygw@$VERSION" >&2
	GW="$(find_gw)"
fi
[[ -x "$GW" ]] || { log "versitygw not found after install"; exit 1; }

# 2. A fresh directory: <dir>/data holds the buckets, <dir>/meta the sidecar.
DIR="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-s3.XXXXXX")"
mkdir -p "$DIR/data/$BUCKET" "$DIR/meta"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# 3. Start on a free loopback port; retry if another process takes the port
#    between the probe and the bind.
PID=""
for _ in 1 2 3 4 5; do
	PORT=$(( 20000 + RANDOM % 40000 ))
	port_free "$PORT" || continue
	ROOT_ACCESS_KEY="$ACCESS_KEY" ROOT_SECRET_KEY="$SECRET_KEY" \
		nohup "$GW" --port "127.0.0.1:$PORT" --region "$REGION" --quiet \
		posix --sidecar "$DIR/meta" "$DIR/data" \
		</dev/null >"$DIR/versitygw.log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		if port_open "$PORT"; then break; fi
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$PID" 2>/dev/null && port_open "$PORT"; then
		break
	fi
	kill "$PID" 2>/dev/null || true
	PID=""
done
if [[ -z "$PID" ]]; then
	log "versitygw did not start; log follows"
	cat "$DIR/versitygw.log" >&2 || true
	rm -rf "$DIR"
	exit 1
fi
log "versitygw ($GW) listening on 127.0.0.1:$PORT (pid $PID), bucket $BUCKET, data in $DIR"

cat <<OUT
export SKILLGATE_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT
export SKILLGATE_TEST_S3_BUCKET=$BUCKET
export SKILLGATE_TEST_S3_ACCESS_KEY=$ACCESS_KEY
export SKILLGATE_TEST_S3_SECRET_KEY=$SECRET_KEY
export SKILLGATE_TEST_S3_REGION=$REGION
export SKILLGATE_TEST_S3_PID=$PID
export SKILLGATE_TEST_S3_DIR=$DIR
OUT
