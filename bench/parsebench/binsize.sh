#!/usr/bin/env bash
# binsize.sh: what each candidate parser adds to the skillgate binary. Builds
# ./cmd/skillgate as it is, then with one more file (given to go build through
# -overlay, so the tree is not touched) that calls the candidate behind a
# condition the linker cannot drop, and prints the sizes and differences. The
# candidates are added to a copy of go.mod (-modfile), not to the module's.
# Run from the repository root: bench/parsebench/binsize.sh
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(pwd)
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
go get -modfile="$tmp/go.mod" mvdan.cc/sh/v3@v3.14.1 github.com/go-python/gpython@v0.2.0 \
	github.com/dop251/goja@v0.0.0-20260917113740-793a2a65c13b 2>/dev/null
go build -trimpath -o "$tmp/base" ./cmd/skillgate
base=$(stat -c %s "$tmp/base")
printf '| candidate | binary bytes | added |\n|---|---:|---:|\n| (none) | %d | 0 |\n' "$base"
build() { # name, import line, call[, extra overlay entries]
	cat >"$tmp/zz.go" <<GO
package main

import (
	"os"
	"strings"

	$2
)

func init() {
	if os.Getenv("SKILLGATE_PARSEBENCH_NEVER") == "yes" {
		$3
	}
}

var _ = strings.NewReader
GO
	printf '{"Replace":{"%s/cmd/skillgate/zz_parsebench.go":"%s/zz.go"%s}}' "$root" "$tmp" "${4:-}" >"$tmp/overlay.json"
	go build -trimpath -modfile="$tmp/go.mod" -overlay "$tmp/overlay.json" -o "$tmp/bin" ./cmd/skillgate
	local n
	n=$(stat -c %s "$tmp/bin")
	printf '| %s | %d | %d |\n' "$1" "$n" $((n - base))
}
build "mvdan.cc/sh/v3/syntax" '"mvdan.cc/sh/v3/syntax"' '_, _ = syntax.NewParser().Parse(strings.NewReader(os.Args[0]), "")'
build "gpython parser" $'"github.com/go-python/gpython/parser"\n\t"github.com/go-python/gpython/py"' '_, _ = parser.Parse(strings.NewReader(os.Args[0]), "", py.ExecMode)'
build "goja parser" $'"github.com/dop251/goja/file"\n\t"github.com/dop251/goja/parser"' '_, _ = parser.ParseFile(new(file.FileSet), "", os.Args[0], 0)'
here="$root/bench/parsebench"
build "hand-written Python and JS tokenizers" '"fmt"' '_, _ = tokenizePython([]byte(os.Args[0])); _, _ = tokenizeJS([]byte(os.Args[0])); fmt.Print()' \
	",\"$root/cmd/skillgate/zz_pytoken.go\":\"$here/pytoken.go\",\"$root/cmd/skillgate/zz_jstoken.go\":\"$here/jstoken.go\""
