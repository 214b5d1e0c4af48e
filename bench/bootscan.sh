#!/usr/bin/env bash
# bootscan.sh: `skillgate serve` start-up with a scan at boot on N
# generated skills vs a scan alone of the same tree, in the same run
# (bench/bootbench): time from process start to the first successful
# answer (GET /v1/health) on a fresh data directory, against the wall time
# of `skillgate scan` into another; the two alternate. Goal (issue 32):
# at most 1.5x.
#
# Usage: bench/bootscan.sh [-n SKILLS] [--runs R] [--skillgate BIN] [--gen-dir DIR]
#   (default 10,000 skills, 5 runs; the tree is scan.sh's, reused when present)
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=10000 runs=5 seed=1 sg_bin="${SKILLGATE_BIN:-}" gen_dir=""
while (($# > 0)); do
	case "$1" in
	-n | --skills) n="${2:?-n needs a value}"; shift 2 ;;
	--runs) runs="${2:?--runs needs a value}"; shift 2 ;;
	--skillgate) sg_bin="${2:?--skillgate needs a value}"; shift 2 ;;
	--gen-dir) gen_dir="${2:?--gen-dir needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,11p' "$0"; exit 0 ;;
	*) echo "bootscan.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ && "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "bootscan.sh: -n and --runs must be positive integers" >&2; exit 2; }
gen_dir="${gen_dir:-${TMPDIR:-/tmp}/skillgate-bench-skills-n$n-s$seed}"

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-bootscan.XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM
if [[ -z "$sg_bin" ]]; then
	go build -o "$work/skillgate" ./cmd/skillgate || exit 2
	sg_bin="$work/skillgate"
fi
go build -o "$work/gen" ./bench/gen || exit 2
go build -o "$work/bootbench" ./bench/bootbench || exit 2
"$work/gen" -n "$n" -seed "$seed" -out "$gen_dir" -reuse >&2 || exit 2
# One untimed scan fills the page cache, as scan.sh's warm-up does.
mkdir "$work/warm"
"$sg_bin" --data "$work/warm" scan --root "$gen_dir" --max-dirs 1000000 --json >/dev/null || exit 2
rm -rf "$work/warm"
"$work/bootbench" -skillgate "$sg_bin" -tree "$gen_dir" -runs "$runs"
