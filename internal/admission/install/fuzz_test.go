package install_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
)

// FuzzReadArchive feeds hostile archives to the reader: it must never
// panic, every failure must wrap ErrInvalidSource, and what it accepts must
// stay inside the limits with clean relative paths.
func FuzzReadArchive(f *testing.F) {
	f.Add(true, tarGz(f, []entry{{name: "s/SKILL.md", body: okMD}}))
	f.Add(false, zipOf(f, []entry{{name: "SKILL.md", body: okMD}, {name: "a/b.txt", body: "b"}}))
	f.Add(true, tarGz(f, []entry{{name: "../x", body: "x"}}))
	f.Add(false, zipOf(f, []entry{{name: "a/../../x", body: "x"}}))
	f.Add(true, tarGz(f, []entry{{name: "l", typ: '2', link: "/etc"}}))
	lim := install.SourceLimits{MaxFiles: 50, MaxBytes: 1 << 20, MaxEntries: 100, MaxDepth: 8}
	f.Fuzz(func(t *testing.T, isTar bool, data []byte) {
		kind := "zip"
		if isTar {
			kind = "tar.gz"
		}
		tr, err := install.ReadArchiveBytes(context.Background(), "fuzz", kind, data, lim)
		if err != nil {
			if !errors.Is(err, install.ErrInvalidSource) {
				t.Fatalf("error does not wrap ErrInvalidSource: %v", err)
			}
			return
		}
		total := 0
		for p, b := range tr.Files {
			total += len(b)
			if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") && (p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../")) {
				t.Fatalf("bad path %q", p)
			}
		}
		if len(tr.Files) > lim.MaxFiles || total > int(lim.MaxBytes) {
			t.Fatalf("limits exceeded: %d files, %d bytes", len(tr.Files), total)
		}
	})
}
