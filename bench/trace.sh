#!/usr/bin/env bash
# trace.sh: what OpenTelemetry tracing costs a capability call.
#
#   hooks off   every piece of tracing code a relayed capability call runs
#               when tracing is off (no OTEL_EXPORTER_OTLP_*ENDPOINT: a nil
#               tracer): the relay's and the broker's nil checks, the
#               upstream client's look for a span to put in params._meta.
#               A call without the tracing code skips exactly these.
#               Goal: ≤ 2 µs and no allocation per call.
#   off / on    the same capability call relayed over stdio (line in,
#               decision, pooled upstream call to the test server, line
#               out) on two gateways in one run, call by call in turning
#               order: tracing off, and tracing on with every span exported
#               over OTLP/HTTP to a receiver in the process. Reported: each
#               p50 and the paired median of (on - off).
#
# For the whole binary against a build without the tracing code, run
# bench/gateway.sh with SKILLGATE_BENCH_BASELINE=BIN (tracing off in both).
#
# Usage: bench/trace.sh [-n CALLS]     (default 2000 calls per path)
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=2000
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "trace.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "trace.sh: -n must be a positive integer (got '$n')" >&2; exit 2; }

out="$(go test -run '^$' -bench 'BenchmarkTraceHooksOff$' -benchtime 1000000x ./internal/gateway/broker/ 2>&1)" || { echo "$out" >&2; exit 2; }
out+=$'\n'"$(go test -run '^$' -bench 'BenchmarkTraceCall$' -benchtime "${n}x" ./internal/gateway/broker/ 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v n="$n" -v load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" '
/^BenchmarkTraceHooksOff/ { for (i = 2; i <= NF; i++) { if ($i == "ns/op") ns = $(i-1); if ($i == "allocs/op") allocs = $(i-1) } }
/^BenchmarkTraceCall/ { for (i = 2; i <= NF; i++) { if ($i == "off-p50-µs") off = $(i-1); if ($i == "on-p50-µs") on = $(i-1); if ($i == "on-minus-off-paired-p50-µs") pair = $(i-1) } }
END {
	if (ns == "" || off == "") { print "trace.sh: the benchmarks printed no results" > "/dev/stderr"; exit 2 }
	printf "\ntracing cost per capability call (load average %s)\n", load
	printf "  %-40s %12s  %s\n", "row", "value", "goal"
	printf "  %-40s %9.3f µs  ≤ 2 µs\n", "hooks, tracing off", ns / 1000
	printf "  %-40s %12d  0\n", "allocations, tracing off", allocs
	printf "  %-40s %9.1f µs\n", "relayed call p50, tracing off (" n ")", off
	printf "  %-40s %9.1f µs\n", "relayed call p50, tracing on (" n ")", on
	printf "  %-40s %9.1f µs  reported\n", "added by tracing on (paired p50)", pair
	ok = (ns / 1000 <= 2 && allocs == 0)
	print ok ? "\nPASS" : "\nFAIL"
	exit ok ? 0 : 1
}'
