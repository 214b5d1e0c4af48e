package app

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion: the version comes from the build's own information: a
// tagged module version as it is; otherwise the commit of the clone it was
// built from, its time, and whether the tree was modified.
func TestBuildVersion(t *testing.T) {
	const rev = "2f098d5a1b2c3d4e5f60718293a4b5c6d7e8f901"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-11-28T16:33:22Z"}, {Key: "vcs.modified", Value: modified}}
	}
	const goV = "go1.26.8 linux/amd64"
	for _, tc := range []struct {
		name     string
		module   string
		settings []debug.BuildSetting
		version  string
		text     string
	}{
		{"tagged module", "v1.2.3", nil, "v1.2.3",
			"skillgate v1.2.3 (go1.26.8 linux/amd64)"},
		{"clone", "v0.0.0-20261128163322-2f098d5a1b2c", vcs("false"), "devel-2f098d5a1b2c",
			"skillgate devel-2f098d5a1b2c (commit " + rev + " of 2026-11-28T16:33:22Z; go1.26.8 linux/amd64)"},
		{"clone with changes", "v0.0.0-20261128163322-2f098d5a1b2c+dirty", vcs("true"), "devel-2f098d5a1b2c-modified",
			"skillgate devel-2f098d5a1b2c-modified (commit " + rev + " of 2026-11-28T16:33:22Z, with uncommitted changes; go1.26.8 linux/amd64)"},
		{"clone after a tag", "v1.2.4-0.20261128163322-2f098d5a1b2c", vcs("false"), "devel-2f098d5a1b2c",
			"skillgate devel-2f098d5a1b2c (commit " + rev + " of 2026-11-28T16:33:22Z; go1.26.8 linux/amd64)"},
		{"clone at a tag", "v1.2.3", vcs("false"), "v1.2.3",
			"skillgate v1.2.3 (commit " + rev + " of 2026-11-28T16:33:22Z; go1.26.8 linux/amd64)"},
		{"no VCS information", "(devel)", nil, "devel",
			"skillgate devel (go1.26.8 linux/amd64; built without VCS information)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/skillgate/skillgate", Version: tc.module}, Settings: tc.settings}
			b := buildInfoOf(bi)
			if got := b.String(); got != tc.version {
				t.Errorf("version %q, want %q", got, tc.version)
			}
			if got := b.Text(goV); got != tc.text {
				t.Errorf("text %q\nwant %q", got, tc.text)
			}
		})
	}
}
