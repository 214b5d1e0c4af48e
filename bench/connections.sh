#!/usr/bin/env bash
# connections.sh: what a tenant's OAuth connection costs a call to a remote
# MCP server, against the anchor that does the same work without one. 64
# tenants of 4 agents each call the whoami tool of a streamable HTTP server
# on loopback that requires bearer tokens and introspects each one at an
# authorization server (zitadel/oidc's provider), through a broker (scope,
# schema, policy, audit to SQLite) and a pool, on two paths:
#
#   secret      the server declared with Authorization: Bearer ${REMOTE_TOKEN},
#               the tenant's token kept as a static secret (the anchor)
#   connection  the server declared as users write it (a URL, no headers),
#               the token taken from the tenant's connection, its account
#               named in the audit record and the policy's context
#
# Both paths carry the same token of the same tenant to the same server.
# "paired" calls one principal on both paths per round (alternating which
# goes first), in a shuffled order over the 256 principals; "parallel" runs
# 8 callers at once on one path, then the other, in alternating blocks of
# 256 calls.
#
# Targets: the paired median of (connection call i - secret call i) ≤ 100 µs;
# parallel throughput of connection ≥ 0.90 × secret.
#
# Usage: bench/connections.sh [-n ROUNDS] [-p BLOCKS]
#   (defaults: 2000 paired rounds, 20 parallel blocks per path)
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=2000
p=20
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-p) p="${2:?-p needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,27p' "$0"; exit 0 ;;
	*) echo "connections.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for v in "$n" "$p"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "connections.sh: -n and -p must be positive integers (got '$v')" >&2; exit 2; }
done

pkg=./internal/gateway/broker/
out="$(go test -run '^$' -bench 'BenchmarkConnections/paired$' -benchtime "${n}x" "$pkg" 2>&1)" || { echo "$out" >&2; exit 2; }
out+=$'\n'"$(go test -run '^$' -bench 'BenchmarkConnections/parallel$' -benchtime "${p}x" "$pkg" 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v n="$n" -v p="$p" '/^BenchmarkConnections\// {
	for (i = 2; i <= NF; i++) m[$i] = $(i-1)
}
END {
	if (!("secret-p50-µs" in m) || !("secret-calls/s" in m)) { print "connections.sh: the benchmark reported nothing"; exit 2 }
	printf "\nwhoami on a remote server behind OAuth, 64 tenants x 4 agents (%s paired rounds)\n", n
	printf "%-12s %10s %10s\n", "path", "p50 µs", "p99 µs"
	printf "%-12s %10.1f %10.1f\n", "secret", m["secret-p50-µs"], m["secret-p99-µs"]
	printf "%-12s %10.1f %10.1f\n", "connection", m["connection-p50-µs"], m["connection-p99-µs"]
	a = m["connection-over-secret-paired-p50-µs"]
	printf "paired median, connection over secret: %.1f µs (p50 ratio %.3f)\n", a, m["connection-p50-µs"] / m["secret-p50-µs"]
	printf "\n8 callers at once (%s blocks of 256 calls per path)\n", p
	printf "%-12s %10s\n", "path", "calls/s"
	printf "%-12s %10.1f\n", "secret", m["secret-calls/s"]
	printf "%-12s %10.1f\n", "connection", m["connection-calls/s"]
	r = m["connection-calls/s"] / m["secret-calls/s"]
	fail = 0
	v = (a <= 100) ? "PASS" : "FAIL"; if (v == "FAIL") fail = 1
	printf "\ntarget: paired median added by a connection ≤ 100 µs: %.1f µs: %s\n", a, v
	v = (r >= 0.90) ? "PASS" : "FAIL"; if (v == "FAIL") fail = 1
	printf "target: connection throughput ≥ 0.90 x secret: %.3f: %s\n", r, v
	exit fail
}'
