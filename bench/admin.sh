#!/usr/bin/env bash
# admin.sh: server time of each page of the admin web console (the handler
# alone, no network) on a registry of 10,000 skills, an audit log of 100,000
# records, 200 grants and an install under review; p50 and p99 per page over N rounds, each page
# checked against 200 ms at p99.
#
# Usage: bench/admin.sh [-n ROUNDS]     (default 50)
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=50
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "admin.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "admin.sh: -n must be a positive integer (got '$n')" >&2; exit 2; }
out="$(go test -run '^$' -bench 'BenchmarkPages$' -benchtime "${n}x" ./internal/edge/admin/ 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" | awk -v n="$n" '/^BenchmarkPages/ {
	for (i = 2; i <= NF; i++) {
		k = $i
		if (k ~ /-p50-ms$/) { sub(/-p50-ms$/, "", k); p50[k] = $(i-1); pages[k] = 1 }
		else if (k ~ /-p99-ms$/) { sub(/-p99-ms$/, "", k); p99[k] = $(i-1) }
	}
}
END {
	if (length(pages) == 0) { print "admin.sh: no result" > "/dev/stderr"; exit 2 }
	printf "admin console pages, 10,000 skills, 100,000 audit records, %s rounds (server time)\n", n
	printf "%-32s %10s %10s %8s\n", "page", "p50 ms", "p99 ms", "< 200 ms"
	fail = 0
	for (k in pages) {
		v = (p99[k] < 200) ? "PASS" : "FAIL"; if (v == "FAIL") fail = 1
		printf "%-32s %10.2f %10.2f %8s\n", k, p50[k], p99[k], v
	}
	exit fail
}'
