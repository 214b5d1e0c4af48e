#!/bin/sh
set -eu
v=$(python3 -c 'import json,sys; print(json.load(open("package.json"))["version"])')
node -e 'console.log(require("./package.json").name)'
perl -pi -e "s/VERSION/$v/g" NOTES.md
ruby -e 'puts File.read("NOTES.md").lines.count'
python3 - <<'PY'
import subprocess
print(subprocess.run(['git', 'log', '--oneline', '-5'], capture_output=True, text=True).stdout)
PY
