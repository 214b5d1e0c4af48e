#!/usr/bin/env bash
# mcp.sh: the MCP round trip of read_file over stdio against the built
# skillgate binary (bench/mcpbench), as p50/p99 latencies.
#
# Usage: bench/mcp.sh [-n CALLS]     (default 2000 calls per file)
#
# It runs `go test -bench ReadFileStdio` in bench/mcpbench, which builds
# ./cmd/skillgate, scans examples/skills into a temporary data directory,
# starts `skillgate mcp` as a subprocess, loads escrituras/compraventa and
# writes a 100 KB file (2,000 lines) to /workspace, then times CALLS
# read_file calls of each: SKILL.md (about 600 bytes) and the 100 KB file.
# Exit status: that of go test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=2000
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "mcp.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "mcp.sh: -n must be a positive integer (got '$n')" >&2; exit 2; }

out="$(go test -run '^$' -bench 'ReadFileStdio' -benchtime "${n}x" ./bench/mcpbench/)"
echo "$out" >&2
printf '%-28s %8s %12s %12s %12s\n' "read_file over stdio" calls "mean µs" "p50 µs" "p99 µs"
echo "$out" | awk '/^BenchmarkReadFileStdio\// {
	name = $1; sub(/^BenchmarkReadFileStdio\//, "", name); sub(/-[0-9]+$/, "", name)
	mean = ""; p50 = ""; p99 = ""
	for (i = 2; i <= NF; i++) {
		if ($i == "ns/op") mean = $(i-1) / 1000
		if ($i == "p50-µs") p50 = $(i-1)
		if ($i == "p99-µs") p99 = $(i-1)
	}
	printf "%-28s %8s %12.1f %12.1f %12.1f\n", name, $2, mean, p50, p99
}'
