#!/usr/bin/env bash
# Builds and vets skillgate for every platform it supports, without running
# anything: the tests run natively (scripts/test.sh); this catches code that
# compiles only on the machine at hand (a Linux-only system call, a 64-bit
# constant). Usage: scripts/crossbuild.sh [--except-native] [GOOS/GOARCH ...]
# --except-native leaves out this machine's platform (CI tests it natively).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
except=""
if [[ "${1:-}" == "--except-native" ]]; then
	except="$(go env GOOS)/$(go env GOARCH)"
	shift
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	for t in linux/amd64 linux/arm64 linux/386 linux/arm darwin/arm64 darwin/amd64 windows/amd64; do
		[[ "$t" == "$except" ]] || targets+=("$t")
	done
fi
failed=()
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	echo "== $t" >&2
	if ! GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build ./... ||
		! GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go vet ./...; then
		failed+=("$t")
	fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "cross-build failed for: ${failed[*]}" >&2
	exit 1
fi
echo "cross-build ok: ${targets[*]}" >&2
