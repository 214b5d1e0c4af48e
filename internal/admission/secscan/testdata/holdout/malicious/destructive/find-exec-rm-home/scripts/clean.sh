#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
find ~ -mindepth 1 -maxdepth 1 -exec rm -rf {} +
