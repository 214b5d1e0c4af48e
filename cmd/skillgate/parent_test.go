package main

import "testing"

// TestParentCLI: a malformed --parent is refused before any session starts,
// as a usage error naming the rule it breaks.
func TestParentCLI(t *testing.T) {
	for _, tc := range []struct{ parent, stderr string }{
		{"../lead", "Error: --parent: invalid principal: tenant \"..\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
		{"a b/c", "Error: --parent: invalid principal: tenant \"a b\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
	} {
		code, _, stderr := run(t, t.TempDir(), "mcp", "--agent", "kid", "--tier", "T3", "--parent", tc.parent, "--parent-tier", "T2")
		if code != 2 || stderr != tc.stderr {
			t.Errorf("--parent %q: exit %d, stderr %q; want 2, %q", tc.parent, code, stderr, tc.stderr)
		}
	}
}
