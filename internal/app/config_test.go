package app

import (
	"strings"
	"testing"
)

// FuzzDecodeConfig checks that any configuration file either decodes or
// fails with a message naming the file, never panics.
func FuzzDecodeConfig(f *testing.F) {
	for _, s := range []string{"", "limits:\n  max_dpeth: 3\n", "roots:\n  - path: x\n    scope: user\n", "a: &x [*x]\n",
		"roots: [{path: a, hard_links: allow}]\n", "workspace: {max_bytes: -1, max_files: 0x10}\n", "limits: !!binary aGk=\n", "---\n...\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Config
		if err := decodeConfig("F", b, &c); err != nil && !strings.HasPrefix(err.Error(), "config F") {
			t.Errorf("%q: %v", b, err)
		}
	})
}
