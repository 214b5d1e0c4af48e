#!/usr/bin/env bash
# skillsext.sh: the MCP Skills extension on a large registry. A generated
# tree (bench/gen, 10,000 skills by default) is scanned into a fresh data
# directory; then, against `skillgate serve` on loopback:
#   1. TestWalkVerify: a client pages through skills/list, checks that
#      every skill skill_list shows is listed (or refused with a reason),
#      and verifies every file of 100 skills (size and SHA-256) read with
#      resources/read;
#   2. BenchmarkSkillsList: skills/list in pages of 100 against the
#      skill_list tool in pages of 100 on the same registry and session
#      (the anchor, same run): p50 per page and the whole walk, their
#      ratios, and the server's resident set while paging;
#   3. BenchmarkList (in process): a cold walk (empty entry cache) and a
#      warm one, and the heap in use after it.
# Prints a table.
#
# Usage: bench/skillsext.sh [-n N] [--runs R] [--seed S] [--skillgate BIN]
#
# Exit status: 0 when the walk verifies, 1 when it does not, 2 on a usage or
# set-up error. Everything temporary lives in one mktemp directory, removed
# on exit; the generated tree is cached in $TMPDIR/skillgate-bench-skills-nN-sS
# (as bench/scan.sh does). Loopback only; no network.
set -euo pipefail

n=10000
runs=3
seed=1
sg_bin="${SKILLGATE_BIN:-}"
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	--runs) runs="${2:?--runs needs a value}"; shift 2 ;;
	--seed) seed="${2:?--seed needs a value}"; shift 2 ;;
	--skillgate) sg_bin="${2:?--skillgate needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,23p' "$0"; exit 0 ;;
	*) echo "skillsext.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$n" "$runs"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "skillsext.sh: -n and --runs must be positive integers (got '$v')" >&2; exit 2; }
done
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "skillsext.sh: --seed must be a non-negative integer (got '$seed')" >&2; exit 2; }

cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp_root="${TMPDIR:-/tmp}"
work="$(mktemp -d "$tmp_root/skillgate-skillsext-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
log() { printf 'skillsext.sh: %s\n' "$*" >&2; }

if [[ -z "$sg_bin" ]]; then
	log "building skillgate"
	go build -o "$work/skillgate" ./cmd/skillgate || exit 2
	sg_bin="$work/skillgate"
fi
go build -o "$work/gen" ./bench/gen || exit 2
tree="$tmp_root/skillgate-bench-skills-n$n-s$seed"
log "generating $n skills in $tree (reused when present)"
"$work/gen" -n "$n" -seed "$seed" -out "$tree" -reuse >/dev/null || exit 2
data="$work/data"
log "scanning"
"$sg_bin" --data "$data" scan --max-dirs 10000000 --root "$tree" >/dev/null || exit 2

export SKILLGATE_BENCH_DATA="$data" SKILLGATE_BIN="$sg_bin" SKILLGATE_BENCH_RUNS="$runs"
log "walking and verifying"
status=0
go test -count=1 -run 'TestWalkVerify' -v ./bench/skillsextbench/ >"$work/walk.out" 2>&1 || status=1
grep -E 'skills/list:|verified|--- (PASS|FAIL)|FAIL|Error' "$work/walk.out" >&2 || true
log "benchmarking (runs: $runs)"
go test -count=1 -run '^$' -bench 'SkillsList' -benchtime 1x ./bench/skillsextbench/ >"$work/http.out" 2>&1 || { cat "$work/http.out" >&2; exit 2; }
go test -count=1 -run '^$' -bench 'BenchmarkList' -benchtime 3x ./internal/agent/mcpskills/ >"$work/inproc.out" 2>&1 || { cat "$work/inproc.out" >&2; exit 2; }

metric() { # file benchmark-prefix unit
	awk -v b="$2" -v u="$3" '$1 ~ "^"b { for (i = 3; i < NF; i++) if ($(i+1) == u) { print $i; exit } }' "$1"
}
h="$work/http.out"
printf '\n%s skills, pages of 100, %s runs (medians), skillgate serve over streamable HTTP on loopback\n\n' "$n" "$runs"
printf '%-34s %14s %14s %8s\n' "" "skills/list" "skill_list" "ratio"
printf '%-34s %14s %14s %8s\n' "page p50 (ms)" "$(metric "$h" BenchmarkSkillsList skills-list-page-p50-ms)" "$(metric "$h" BenchmarkSkillsList skill_list-page-p50-ms)" "$(metric "$h" BenchmarkSkillsList ratio-page-p50)"
printf '%-34s %14s %14s %8s\n' "whole walk (ms)" "$(metric "$h" BenchmarkSkillsList skills-list-walk-ms)" "$(metric "$h" BenchmarkSkillsList skill_list-walk-ms)" "$(metric "$h" BenchmarkSkillsList ratio-walk)"
printf '%-34s %14s\n' "first walk, entries built (ms)" "$(metric "$h" BenchmarkSkillsList skills-list-first-walk-ms)"
printf '%-34s %14s\n' "pages per walk" "$(metric "$h" BenchmarkSkillsList pages/walk)"
printf '\nserver resident set (MB): before the first walk %s, after it %s; while paging: after 10 pages %s, peak %s, at the end %s\n' \
	"$(metric "$h" BenchmarkSkillsList rss-before-first-walk-MB)" "$(metric "$h" BenchmarkSkillsList rss-after-first-walk-MB)" \
	"$(metric "$h" BenchmarkSkillsList rss-after-10-pages-MB)" "$(metric "$h" BenchmarkSkillsList rss-peak-during-walk-MB)" "$(metric "$h" BenchmarkSkillsList rss-end-of-walk-MB)"
i="$work/inproc.out"
printf 'in process (mcpskills.Server.Handle): cold walk %s ms, warm walk %s ms, heap in use after %s MB\n' \
	"$(awk '$1 ~ /^BenchmarkList\/cold/ {printf "%.0f", $3/1e6}' "$i")" "$(awk '$1 ~ /^BenchmarkList\/warm/ {printf "%.0f", $3/1e6}' "$i")" \
	"$(metric "$i" 'BenchmarkList/warm' heap-inuse-MB)"
if ((status != 0)); then
	log "the walk did not verify:"
	cat "$work/walk.out" >&2
fi
exit "$status"
