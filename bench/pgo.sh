#!/usr/bin/env bash
# pgo.sh: regenerate cmd/skillgate/default.pgo, the CPU profile that Go's
# profile-guided optimisation builds skillgate with (`go build` picks it up
# by itself). The profile merges skillgate's three hot paths, each recorded
# from a build without a profile:
#
#   gateway: `skillgate mcp` relaying 6,000 capability calls (bench/gateway.sh's workload)
#   scan:    three cold scans of the 10,000 generated skills (bench/scan.sh's tree)
#   policy:  the policy decision benchmarks (bench/policy.sh's scenario)
#
# Usage: bench/pgo.sh [-o FILE]    (default cmd/skillgate/default.pgo)
# Needs Node.js and npm for the gateway workload (scripts/setup-npm.sh).
# Takes about two minutes. Exit status 0 on success, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=cmd/skillgate/default.pgo
while (($# > 0)); do
	case "$1" in
	-o) out="${2:?-o needs a file}"; shift 2 ;;
	-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "pgo.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
eval "$(scripts/setup-npm.sh)" || exit 2

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-pgo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go build -pgo=off -o "$work/skillgate" ./cmd/skillgate || exit 2

echo "pgo.sh: gateway profile" >&2
SKILLGATE_BIN="$work/skillgate" SKILLGATE_BENCH_CPUPROFILE="$work/gateway.pprof" \
	go test -pgo=off -run '^$' -bench BenchmarkGateway -benchtime 6000x ./bench/gatewaybench/ >/dev/null || exit 2

echo "pgo.sh: scan profile" >&2
tree="${TMPDIR:-/tmp}/skillgate-bench-skills-n10000-s1"
go run ./bench/gen -n 10000 -seed 1 -out "$tree" -reuse >/dev/null || exit 2
for i in 1 2 3; do
	rm -rf "$work/data"
	SKILLGATE_CPUPROFILE="$work/scan$i.pprof" "$work/skillgate" --data "$work/data" \
		scan --root "$tree" --max-dirs 1000000 --json >/dev/null || exit 2
done

echo "pgo.sh: policy profile" >&2
go test -pgo=off -c -o "$work/policy.test" ./internal/decision/policy/ || exit 2
"$work/policy.test" -test.run '^$' -test.bench '^Benchmark(Decision1000|Decision1000Uncached|Decision10)$' \
	-test.benchtime 2s -test.cpuprofile "$work/policy.pprof" >/dev/null || exit 2

go tool pprof -proto "$work/gateway.pprof" "$work"/scan[123].pprof "$work/policy.pprof" >"$work/merged.pgo" 2>/dev/null || exit 2
mv "$work/merged.pgo" "$out"
echo "pgo.sh: wrote $out ($(wc -c <"$out") bytes)" >&2
