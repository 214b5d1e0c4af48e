#!/usr/bin/env bash
# gateway.sh: what skillgate adds to a capability call. The npm
# server-memory's read_graph is called N times directly over stdio, then N
# times through `skillgate mcp` (scope lookup, schema validation, policy
# decision, audit, pooled upstream connection), and the p50/p99 of both and
# the p50 added are printed, with PASS/FAIL against the 200 µs target. A
# third row runs the same calls through a bare line relay process: the floor
# that any process between agent and server costs on this machine.
#
# The three paths are called in turn (rotating order), so that load changes
# during the run weigh on all of them alike.
#
# Usage: bench/gateway.sh [-n CALLS]     (default 2000 calls per path)
#
# Needs Node.js and npm: the npm servers are installed by scripts/setup-npm.sh.
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=2000
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "gateway.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "gateway.sh: -n must be a positive integer (got '$n')" >&2; exit 2; }
eval "$(scripts/setup-npm.sh)" || exit 2

out="$(go test -run '^$' -bench 'BenchmarkGateway' -benchtime "${n}x" ./bench/gatewaybench/)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v n="$n" '/^BenchmarkGateway/ {
	for (i = 2; i <= NF; i++) {
		if ($i ~ /-p50-µs$/) { k = $i; sub(/-p50-µs$/, "", k); p50[k] = $(i-1) }
		if ($i ~ /-p99-µs$/) { k = $i; sub(/-p99-µs$/, "", k); p99[k] = $(i-1) }
	}
}
END {
	printf "%-34s %8s %10s %10s\n", "read_graph (npm server-memory)", "calls", "p50 µs", "p99 µs"
	printf "%-34s %8s %10.1f %10.1f\n", "direct over stdio", n, p50["direct"], p99["direct"]
	printf "%-34s %8s %10.1f %10.1f\n", "through a bare line relay (floor)", n, p50["relay"], p99["relay"]
	printf "%-34s %8s %10.1f %10.1f\n", "through skillgate mcp", n, p50["skillgate"], p99["skillgate"]
	added = p50["skillgate"] - p50["direct"]
	verdict = (added < 200) ? "PASS" : "FAIL"
	printf "%-34s %8s %10.1f %10.1f\n", "added by the bare relay", "", p50["relay"] - p50["direct"], p99["relay"] - p99["direct"]
	printf "%-34s %8s %10.1f %10.1f   target p50 added < 200 µs: %s\n", "added by skillgate", "", added, p99["skillgate"] - p99["direct"], verdict
	exit (verdict == "PASS") ? 0 : 1
}'
