#!/usr/bin/env bash
# sandbox.sh: what the run-time sandbox costs an upstream MCP server
# (docs/sandbox.md). Two servers, each started and called unconfined and
# confined exactly as an imported skill's server is at call time (bwrap,
# the helper's resource limits and Landlock ruleset, a state directory),
# alternating so that load changes weigh on both alike:
#
#   go     the benchmark's own go-sdk server (internal/testkit/testserver), tool echo
#   node   npm server-memory, tool read_graph (when scripts/setup-npm.sh
#          can install it)
#
# start   median time to a usable connection (process start, initialize,
#         tools/list), over -s starts of each; the ratio confined/unconfined
# call    median call over -n calls of each on a running server, and the
#         median of the paired differences (confined call i - unconfined
#         call i): expected about 0, as the sandbox is on no message's path
#
# Usage: bench/sandbox.sh [-s STARTS] [-n CALLS]   (defaults 20 and 2000)
# Needs bubblewrap (Linux). Exit status: 0 done, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

starts=20 n=2000
while (($# > 0)); do
	case "$1" in
	-s) starts="${2:?-s needs a value}"; shift 2 ;;
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "sandbox.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$starts" =~ ^[1-9][0-9]*$ && "$n" =~ ^[1-9][0-9]*$ ]] || { echo "sandbox.sh: -s and -n must be positive integers" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "sandbox.sh: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 2; }
eval "$(scripts/setup-npm.sh 2>/dev/null)" || echo "sandbox.sh: npm servers unavailable; the go server only" >&2

out="$(go test -run '^$' -bench 'BenchmarkStart' -benchtime "${starts}x" ./bench/sandboxbench/ 2>&1)" || { echo "$out" >&2; exit 2; }
out+=$'\n'"$(go test -run '^$' -bench 'BenchmarkCall' -benchtime "${n}x" ./bench/sandboxbench/ 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v starts="$starts" -v n="$n" '
/^Benchmark(Start|Call)\// {
	split($1, p, "/"); kind = p[1]; sub(/^Benchmark/, "", kind); w = p[2]; sub(/-[0-9]+$/, "", w)
	for (i = 2; i <= NF; i++) v[kind, w, $i] = $(i-1)
	if (kind == "Start") ws[++nw] = w
}
END {
	printf "\nstart-up (median of %d starts each)\n", starts
	printf "%-8s %14s %14s %8s\n", "server", "unconfined ms", "confined ms", "ratio"
	for (i = 1; i <= nw; i++) { w = ws[i]
		printf "%-8s %14.1f %14.1f %7.2fx\n", w, v["Start", w, "unconfined-ms"], v["Start", w, "confined-ms"], v["Start", w, "ratio"] }
	printf "\ncall (median of %d calls each, on a running server)\n", n
	printf "%-8s %16s %16s %18s\n", "server", "unconfined µs", "confined µs", "added (paired) µs"
	for (i = 1; i <= nw; i++) { w = ws[i]
		printf "%-8s %16.1f %16.1f %18.1f\n", w, v["Call", w, "unconfined-p50-µs"], v["Call", w, "confined-p50-µs"], v["Call", w, "added-paired-p50-µs"] }
}'
