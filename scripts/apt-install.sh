#!/usr/bin/env bash
# apt-install.sh installs Debian packages for the test scripts, waiting
# (bounded) for another package manager to finish instead of failing at
# once: apt-get update retries while the package lists' lock is held
# (apt-get does not wait for that lock itself), and apt-get install waits
# for the dpkg lock (DPkg::Lock::Timeout). Every apt-get call of scripts/
# goes through here (scripts_test.go checks it).
#
# Usage: scripts/apt-install.sh PACKAGE...
# SKILLGATE_APT_LOCK_TIMEOUT sets the bound in seconds (default 300).
set -euo pipefail

log() { echo "apt-install.sh: $*" >&2; }
timeout=${SKILLGATE_APT_LOCK_TIMEOUT:-300}
if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi

# apt-get update takes /var/lib/apt/lists/lock and fails at once when
# another process holds it: retry until the bound.
deadline=$((SECONDS + timeout))
while :; do
	if out=$($SUDO apt-get -o DPkg::Lock::Timeout="$timeout" update -qq 2>&1); then
		break
	fi
	if ! grep -q "Could not get lock" <<<"$out" || ((SECONDS >= deadline)); then
		echo "$out" >&2
		log "apt-get update failed (waited up to ${timeout}s for the package lists' lock)"
		exit 1
	fi
	log "waiting for another package manager to release the package lists' lock (/var/lib/apt/lists/lock), up to ${timeout}s: $(grep -m1 "Could not get lock" <<<"$out")"
	sleep 5
done
log "installing $* (waiting up to ${timeout}s for the dpkg lock if another package manager holds it)"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout="$timeout" install -y -qq "$@" >&2
