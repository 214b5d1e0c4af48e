package vfs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
)

func TestFormatLs(t *testing.T) {
	tests := []struct {
		name string
		in   vfs.Listing
		want string
	}{
		{"empty", vfs.Listing{}, "[]"},
		{"paths", vfs.Listing{Entries: []vfs.FileInfo{{Path: "/skills/", IsDir: true}, {Path: "/workspace/a.md"}}}, "['/skills/', '/workspace/a.md']"},
		{"single quote", vfs.Listing{Entries: []vfs.FileInfo{{Path: "/workspace/it's.md"}}}, `["/workspace/it's.md"]`},
		{"both quotes", vfs.Listing{Entries: []vfs.FileInfo{{Path: `/workspace/a'b"c`}}}, `['/workspace/a\'b"c']`},
		{"not printable", vfs.Listing{Entries: []vfs.FileInfo{{Path: "/workspace/a\u200bb\u00a0c\U000e0001é"}}}, `['/workspace/a\u200bb\xa0c\U000e0001é']`},
		{"truncated", vfs.Listing{Entries: []vfs.FileInfo{{Path: "/a"}}, Truncated: true}, "['/a', '" + vfs.TruncationGuidance + "']"},
	}
	for _, tc := range tests {
		if got := vfs.FormatLs(tc.in); got != tc.want {
			t.Errorf("%s: FormatLs = %s, want %s", tc.name, got, tc.want)
		}
	}
	// Over the character budget the list is cut proportionally.
	var l vfs.Listing
	for range 2000 {
		l.Entries = append(l.Entries, vfs.FileInfo{Path: "/workspace/" + strings.Repeat("n", 89)}) // 100 chars
	}
	got := vfs.FormatLs(l)
	if n := strings.Count(got, "/workspace/"); n != 800 || !strings.HasSuffix(got, "'"+vfs.TruncationGuidance+"']") {
		t.Errorf("FormatLs over budget kept %d paths, suffix %q", n, got[len(got)-80:])
	}
}

func TestFormatGrepModes(t *testing.T) {
	res := vfs.GrepResult{Matches: []vfs.GrepMatch{
		{Path: "/a.md", Line: 1, Text: "x one"},
		{Path: "/a.md", Line: 7, Text: "x two"},
		{Path: "/b/c.md", Line: 3, Text: "  x three"},
	}}
	tests := []struct {
		mode string
		want string
	}{
		{"", "/a.md\n/b/c.md"},
		{"files_with_matches", "/a.md\n/b/c.md"},
		{"content", "/a.md:\n  1: x one\n  7: x two\n/b/c.md:\n  3:   x three"},
		{"count", "/a.md: 2\n/b/c.md: 1"},
	}
	for _, tc := range tests {
		mode, err := vfs.ParseGrepOutputMode(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := vfs.FormatGrep(res, mode); got != tc.want {
			t.Errorf("mode %q:\n%s\nwant\n%s", tc.mode, got, tc.want)
		}
	}
	_, err := vfs.ParseGrepOutputMode("lines")
	if errText(err) != "Error: Invalid output_mode 'lines'. Use 'files_with_matches', 'content' or 'count'." || !errors.Is(err, vfs.ErrInvalidArgument) {
		t.Errorf("ParseGrepOutputMode(lines) = %v", err)
	}
}

func TestTruncateOutput(t *testing.T) {
	short := strings.Repeat("a", vfs.ToolResultCharLimit)
	if got := vfs.TruncateOutput(short); got != short {
		t.Error("output at the limit was cut")
	}
	long := strings.Repeat("é", vfs.ToolResultCharLimit+1) // counted in characters
	got := vfs.TruncateOutput(long)
	if want := strings.Repeat("é", vfs.ToolResultCharLimit) + "\n" + vfs.TruncationGuidance; got != want {
		t.Errorf("TruncateOutput cut to %d bytes", len(got))
	}
	if got := vfs.FormatGlob(vfs.Listing{Entries: []vfs.FileInfo{{Path: "/a"}, {Path: "/b"}}, Truncated: true}); got != "/a\n/b\n"+vfs.TruncationGuidance {
		t.Errorf("FormatGlob truncated = %q", got)
	}
}
