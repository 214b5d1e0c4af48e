#!/usr/bin/env bash
# catalog.sh: many agents on a large registry. For each registry size, a
# generated tree (bench/gen) is scanned into a fresh data directory,
# `skillgate serve` is started on loopback, and 100 agents (go-sdk clients,
# streamable HTTP, one token each) connect at once and page through
# skill_list; then the same is done against an anchor in the same run, a
# minimal go-sdk server whose skill_list returns a static page of the same
# size (captured from skillgate). Prints, per size, the time for every agent
# to connect, skill_list page latency (one agent paging while the others
# are connected, and every agent paging at once) and the server's peak RSS,
# each with n, median and spread (min–max over the runs), PASS/FAIL against
# the goals (connect < 2 s, page p99 < 20 ms, RSS < 500 MB at 100,000).
#
# Usage: bench/catalog.sh [-n "10000 100000"] [--agents 100] [--pages 10]
#                         [--runs 5] [--seed S] [--skillgate BIN]
#
# Exit status: 0 when every goal passes, 1 when one fails, 2 on a usage or
# set-up error. Everything temporary lives in one mktemp directory, removed
# on exit; generated trees are cached in $TMPDIR/skillgate-bench-skills-nN-sS
# (as bench/scan.sh does). Loopback only; no network.
set -euo pipefail

sizes="${BENCH_SIZES:-10000 100000}"
agents=100
pages=10
runs=5
seed=1
sg_bin="${SKILLGATE_BIN:-}"
while (($# > 0)); do
	case "$1" in
	-n) sizes="${2:?-n needs a value}"; shift 2 ;;
	--agents) agents="${2:?--agents needs a value}"; shift 2 ;;
	--pages) pages="${2:?--pages needs a value}"; shift 2 ;;
	--runs) runs="${2:?--runs needs a value}"; shift 2 ;;
	--seed) seed="${2:?--seed needs a value}"; shift 2 ;;
	--skillgate) sg_bin="${2:?--skillgate needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "catalog.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for v in $sizes "$agents" "$pages" "$runs"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "catalog.sh: sizes, --agents, --pages and --runs must be positive integers (got '$v')" >&2; exit 2; }
done
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "catalog.sh: --seed must be a non-negative integer (got '$seed')" >&2; exit 2; }

cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp_root="${TMPDIR:-/tmp}"
work="$(mktemp -d "$tmp_root/skillgate-catalog-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
log() { printf 'catalog.sh: %s\n' "$*" >&2; }

if [[ -z "$sg_bin" ]]; then
	log "building skillgate"
	go build -o "$work/skillgate" ./cmd/skillgate || exit 2
	sg_bin="$work/skillgate"
fi
go build -o "$work/gen" ./bench/gen || exit 2
go test -c -o "$work/catalogbench.test" ./bench/catalogbench/ || exit 2

status=0
printf '%-8s %-44s %6s %10s %21s %-26s %s\n' "skills" "measure" "n" "median" "spread (min–max)" "anchor median (spread)" "goal"
for n in $sizes; do
	tree="$tmp_root/skillgate-bench-skills-n$n-s$seed"
	log "generating $n skills into $tree (reused when already there)"
	"$work/gen" -n "$n" -seed "$seed" -out "$tree" -reuse >/dev/null || exit 2
	data="$work/data-$n"
	log "scanning $n skills"
	"$sg_bin" --data "$data" scan --root "$tree" --max-dirs 10000000 --json >"$work/scan-$n.json" || exit 2
	log "measuring $agents agents against skillgate serve and the anchor ($runs runs)"
	out="$(cd bench/catalogbench && SKILLGATE_BIN="$sg_bin" SKILLGATE_BENCH_DATA="$data" SKILLGATE_BENCH_AGENTS="$agents" \
		SKILLGATE_BENCH_PAGES="$pages" SKILLGATE_BENCH_RUNS="$runs" \
		"$work/catalogbench.test" -test.run '^$' -test.bench BenchmarkCatalog -test.benchtime 1x)" || { echo "$out" >&2; exit 2; }
	echo "$out" >&2
	echo "$out" | awk -v n="$n" -v runs="$runs" -v agents="$agents" '/^BenchmarkCatalog/ {
		for (i = 3; i <= NF; i++) m[$i] = $(i-1)
	}
	function row(label, key, goal, limit, unit,   verdict) {
		verdict = ""
		if (limit > 0) { verdict = (m["skillgate-" key "-med"] < limit) ? "PASS" : "FAIL"; if (verdict == "FAIL") failed = 1 }
		printf "%-8s %-44s %6s %8.1f %s %8.1f–%-8.1f %s %8.1f (%.1f–%.1f) %s %s %s\n", n, label, runs, m["skillgate-" key "-med"], unit,
			m["skillgate-" key "-min"], m["skillgate-" key "-max"], unit, m["anchor-" key "-med"], m["anchor-" key "-min"], m["anchor-" key "-max"], unit, goal, verdict
	}
	END {
		if (!("skillgate-connect-ms-med" in m)) { print "catalog.sh: no results" > "/dev/stderr"; exit 2 }
		row(agents " agents connected (initialize + tools/list)", "connect-ms", "< 2000 ms", 2000, "ms")
		row("skill_list page p50, one agent paging", "page-p50-ms", "", 0, "ms")
		row("skill_list page p99, one agent paging", "page-p99-ms", "< 20 ms", 20, "ms")
		row("skill_list page p50, " agents " agents at once", "load-page-p50-ms", "", 0, "ms")
		row("skill_list page p99, " agents " agents at once", "load-page-p99-ms", "", 0, "ms")
		goal = ""; verdict = ""
		if (n >= 100000) { goal = "< 500 MB"; verdict = (m["skillgate-rss-peak-MB"] < 500) ? "PASS" : "FAIL"; if (verdict == "FAIL") failed = 1 }
		printf "%-8s %-44s %6s %8.1f MB %19s %8.1f MB %14s %s %s\n", n, "server peak RSS (VmHWM)", 1, m["skillgate-rss-peak-MB"], "", m["anchor-rss-peak-MB"], "", goal, verdict
		printf "%-8s %-44s %6s %8d    (pages of 100; %d bytes each on the anchor)\n", n, "skills visible to a T3 agent", "", m["skills-visible"], m["page-bytes"]
		exit failed
	}' || { rc=$?; ((rc == 2)) && exit 2; status=1; }
done
exit "$status"
