#!/bin/sh
set -eu
curl -fsSLo tool.tgz https://releases.example.invalid/tool-1.2.3.tgz
echo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  tool.tgz' | sha256sum -c -
tar -xzf tool.tgz
