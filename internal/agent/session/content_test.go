package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestLoadChecksContent: a skill whose files changed after the scan (one
// byte) is not loaded, and the refusal is audited; after a scan it loads.
func TestLoadChecksContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, notesFiles(map[string]string{
		"other/SKILL.md":        skillMD("other", "Other.", "1", ""),
		"other/references/a.md": "a\n",
		"other/references/b.md": "b\n",
		"other/references/c.md": "c\n",
		"other/references/d.md": "d\n",
	}), nil)
	s := openOn(t, f.newManager(t, session.Options{Audit: f.db}), t3, "")
	if _, err := s.Load(ctx, "other"); err != nil {
		t.Fatalf("an unchanged skill: %v", err)
	}
	// One byte changes, the size stays: the scan's digest no longer holds.
	if err := os.WriteFile(filepath.Join(f.root, "notes", "guide.md"), []byte("Write short notez.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(ctx, "notes")
	if !errors.Is(err, session.ErrSkillChanged) || !strings.Contains(err.Error(), "notes: its files no longer hash to sha256:") ||
		!strings.HasSuffix(err.Error(), "; an operator must scan again before it can be loaded") {
		t.Fatalf("load of a changed skill: %v", err)
	}
	recs, err := f.db.AuditRecords(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Action != "skill.load" || recs[0].Subject != "notes" || recs[0].Decision != "deny" || recs[0].Actor != "agent:acme/drafter" ||
		!strings.HasPrefix(recs[0].Reasons[0], "content changed since the scan: its files no longer hash to sha256:") {
		t.Fatalf("audit records: %+v", recs)
	}
	for _, l := range s.Loaded() {
		if l.Key == "notes" {
			t.Fatal("the changed skill was mounted")
		}
	}
	f.scan(t)
	if _, err := s.Load(ctx, "notes"); err != nil {
		t.Fatalf("after a scan: %v", err)
	}
}
