#!/usr/bin/env bash
# vfs.sh: skillgate's file tools against a minimal MCP server doing the same
# work, like for like: the same transport (stdio), the same client (the
# go-sdk's), the same files (bench/vfsbench).
#
#   read_file of a 100 KB file (2,000 lines, cat -n numbering, the 80,000-
#   character result limit)     skillgate mcp  vs  the go-sdk peer
#   grep "needle" over 10,000 skill files (100 skills, all loaded), listing
#   the matching files          skillgate mcp  vs  the go-sdk peer
#
# The peer is bench/vfsbench's own server: read_file reads the host file
# and numbers its lines; grep walks the tree and reads each file in turn.
# The two are called in turn (rotating order); their first answers must be
# byte-identical. Target (issue 12): skillgate's p50 ≤ 1.2 × the peer's.
#
# Usage: bench/vfs.sh [-n CALLS]   (default 300 calls of each tool per side)
# Exit status 0 when both hold, 1 when one does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=300
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) echo "vfs.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "vfs.sh: -n must be a positive integer (got '$n')" >&2; exit 2; }

out="$(go test -run '^$' -bench 'BenchmarkFS' -benchtime "${n}x" ./bench/vfsbench/ 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v n="$n" '/^BenchmarkFS\// {
	w = $1; sub(/^BenchmarkFS\//, "", w); sub(/-[0-9]+$/, "", w)
	order[++k] = w
	for (i = 2; i <= NF; i++) {
		if ($i == "skillgate-p50-µs") sp50[w] = $(i-1)
		if ($i == "skillgate-p99-µs") sp99[w] = $(i-1)
		if ($i == "peer-p50-µs") pp50[w] = $(i-1)
		if ($i == "peer-p99-µs") pp99[w] = $(i-1)
	}
}
END {
	if (k < 2) { print "vfs.sh: a benchmark did not run" > "/dev/stderr"; exit 2 }
	printf "\n| operation (%s calls each) | skillgate p50 / p99 | go-sdk peer p50 / p99 | ratio p50 | target | result |\n|---|---|---|---|---|---|\n", n
	fail = 0
	for (j = 1; j <= k; j++) {
		w = order[j]; r = sp50[w] / pp50[w]; v = (r <= 1.2) ? "PASS" : "FAIL"; if (v == "FAIL") fail = 1
		printf "| %s | %.0f / %.0f µs | %.0f / %.0f µs | %.2fx | ≤ 1.2x | %s |\n", w, sp50[w], sp99[w], pp50[w], pp99[w], r, v
	}
	exit fail
}'
