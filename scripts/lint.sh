#!/usr/bin/env bash
# lint.sh runs golangci-lint over the whole module with the repository's
# .golangci.yml: the linters and the formatter check it lists. The version is
# pinned here; it is installed with `go install` into .cache/ (ignored by git)
# the first time, so a fresh machine needs only Go and the module proxy.
#
# Usage: scripts/lint.sh [golangci-lint run flags...]   e.g. scripts/lint.sh ./internal/storage/...
# (without package patterns it lints ./...)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=v2.15.0
bin_dir="$PWD/.cache/golangci-lint/$version"
lint="$bin_dir/golangci-lint"
if [[ ! -x "$lint" ]]; then
	echo "lint.sh: installing golangci-lint $version into $bin_dir" >&2
	GOBIN="$bin_dir" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi

# Package patterns given? Lint those; otherwise the whole module.
args=("$@")
has_pattern=false
for a in "${args[@]}"; do
	[[ "$a" == ./* ]] && has_pattern=true
done
$has_pattern || args+=(./...)
exec "$lint" run "${args[@]}"
