#!/usr/bin/env bash
# vfs.sh: the agent filesystem against its peers, in one run.
#
#   read_file of a 100 KB file through vfs   vs  os.ReadFile + the same cat -n formatting
#   grep over 10,000 skill files through vfs vs  rg -F over the same files (Debian ripgrep)
#
# Usage: bench/vfs.sh [-count N]   (default 5 runs of each Go benchmark)
# Installs ripgrep with apt-get when rg is missing. Targets (issue 3): read within 2x,
# grep within 3x. Exit status 0 when both hold, 1 when one does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=5
while (($# > 0)); do
	case "$1" in
	-count) count="${2:?-count needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "vfs.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
if ! command -v rg >/dev/null 2>&1; then
	echo "vfs.sh: installing ripgrep" >&2
	if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi
	{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ripgrep; } >&2 || exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-vfs-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

out="$(SKILLGATE_BENCH_DIR="$work" go test -run '^$' -bench 'Read100KB|Grep10kFiles' -count "$count" ./vfs/)"
echo "$out" >&2

# median ns/op of a benchmark over its runs
median() {
	echo "$out" | awk -v name="$1" '$1 ~ "^"name"-[0-9]+$" { for (i = 2; i <= NF; i++) if ($i == "ns/op") print $(i-1) }' |
		sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else print a[int((NR + 1) / 2)] }'
}
read_vfs=$(median BenchmarkRead100KB)
read_os=$(median BenchmarkRead100KBOSReadFile)
grep_vfs=$(median BenchmarkGrep10kFiles)

tree="$work/grep10k"
[[ -d "$tree" ]] || { echo "vfs.sh: the grep tree was not kept at $tree" >&2; exit 2; }
rg -F needle "$tree" >/dev/null || true # warm the page cache
times=()
for _ in $(seq "$count"); do
	s=$(date +%s%N)
	rg -F needle "$tree" >/dev/null || true
	e=$(date +%s%N)
	times+=($((e - s)))
done
grep_rg=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')

awk -v rv="$read_vfs" -v ro="$read_os" -v gv="$grep_vfs" -v gr="$grep_rg" 'BEGIN {
	rr = rv / ro; gg = gv / gr
	printf "\n| operation | skillgate vfs | peer | ratio | target | result |\n|---|---|---|---|---|---|\n"
	printf "| read_file 100 KB (median) | %.1f µs | %.1f µs (os.ReadFile + format) | %.2fx | <= 2x | %s |\n", rv/1000, ro/1000, rr, (rr <= 2 ? "PASS" : "FAIL")
	printf "| grep 10,000 files (median) | %.1f ms | %.1f ms (rg -F, whole process) | %.2fx | <= 3x | %s |\n", gv/1e6, gr/1e6, gg, (gg <= 3 ? "PASS" : "FAIL")
	exit (rr <= 2 && gg <= 3) ? 0 : 1
}'
