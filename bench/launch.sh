#!/usr/bin/env bash
# launch.sh: what declaring a server as a package launch (npx -y PKG@VER)
# costs, each against its anchor in the same run, alternating (see
# bench/launchbench):
#
#   install  `skillgate install` of a skill whose server is
#            `npx -y @modelcontextprotocol/server-memory@2026.8.31`
#            (fetch in the fetch sandbox, pin, copy, confined
#            introspection, proposal, store) vs `npm install` of the same
#            package into an empty directory; both with an empty npm cache,
#            both from the npm registry; median of -i runs each
#   start    the fetched server started confined as a call starts it (tree
#            bound from the hidden data directory, checked against its
#            digest first) vs the same server started confined from a plain
#            node_modules; median of -s starts each
#
# Targets (issue 29): install ratio <= 1.5, start ratio <= 1.1.
# Usage: bench/launch.sh [-i INSTALLS] [-s STARTS]   (defaults 5 and 20)
# Needs bubblewrap, node and npm, and the npm registry.
# Exit status: 0 within both targets, 1 a target missed, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

installs=5 starts=20
while (($# > 0)); do
	case "$1" in
	-i) installs="${2:?-i needs a value}"; shift 2 ;;
	-s) starts="${2:?-s needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "launch.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$installs" =~ ^[1-9][0-9]*$ && "$starts" =~ ^[1-9][0-9]*$ ]] || { echo "launch.sh: -i and -s must be positive integers" >&2; exit 2; }
for tool in bwrap node npm; do
	command -v "$tool" >/dev/null || { echo "launch.sh: $tool is not installed" >&2; exit 2; }
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/skillgate" ./cmd/skillgate || exit 2
export SKILLGATE_BENCH_BIN="$tmp/skillgate"

out="$(go test -run '^$' -bench 'BenchmarkInstall' -benchtime "${installs}x" -timeout 60m ./bench/launchbench/ 2>&1)" || { echo "$out" >&2; exit 2; }
out+=$'\n'"$(go test -run '^$' -bench 'BenchmarkStart' -benchtime "${starts}x" -timeout 30m ./bench/launchbench/ 2>&1)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2
echo "$out" | awk -v installs="$installs" -v starts="$starts" '
/^BenchmarkInstall/ { for (i = 2; i <= NF; i++) v["install", $i] = $(i-1) }
/^BenchmarkStart/   { for (i = 2; i <= NF; i++) v["start", $i] = $(i-1) }
END {
	printf "\n%-8s %-46s %12s %-42s %12s %7s %7s\n", "what", "skillgate", "ms", "anchor", "ms", "ratio", "target"
	printf "%-8s %-46s %12.0f %-42s %12.0f %6.2fx %7s\n", "install", "skillgate install (npx form, " installs " runs)", v["install", "skillgate-install-ms"],
		"npm install into an empty directory", v["install", "npm-install-ms"], v["install", "ratio"], "1.5x"
	printf "%-8s %-46s %12.1f %-42s %12.1f %6.2fx %7s\n", "start", "fetched tree, confined (" starts " starts)", v["start", "fetched-ms"],
		"plain node_modules, confined", v["start", "plain-ms"], v["start", "ratio"], "1.1x"
	printf "first start of the fetched tree (hashes every file): %.1f ms\n", v["start", "fetched-first-ms"]
	bad = (v["install", "ratio"] > 1.5) + (v["start", "ratio"] > 1.1)
	exit bad > 0
}'
