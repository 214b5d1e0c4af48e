package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestLoadedVersionKept is issue 32's item 9: an author edits a loaded
// skill's files in place. The session that loaded it keeps reading the
// version it loaded, and so does a session that loads it before the next
// scan; after the scan a new load gets the new version, the first session
// keeps its version until it loads the skill again, and a sweep removes
// only copies that no registry row and no session uses. Without copies
// (today) the first session reads the edit, and the second load is refused.
func TestLoadedVersionKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, notesFiles(nil), nil)
	copies := tempStore(t)
	mgr := f.newManager(t, session.Options{Audit: f.db,
		Copies: session.VersionCopies{Store: copies, Prefix: bucket.DefaultLoadedPrefix, Grace: time.Nanosecond}})
	open := func() *session.Session {
		t.Helper()
		return openOn(t, mgr, t3, "")
	}
	guide := func(s *session.Session) string {
		t.Helper()
		text, err := s.FS().Read(ctx, "/skills/notes/guide.md", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	load := func(s *session.Session) {
		t.Helper()
		if _, err := s.Load(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
	}
	const v1, v2 = "Write short notes.", "Write long notes, with examples."
	first := open()
	load(first)
	// The author edits in place (another size, and the same size).
	write(t, filepath.Join(f.root, "notes", "guide.md"), v2+"\n")
	write(t, filepath.Join(f.root, "notes", "SKILL.md"), skillMD("notes", "Takes notez.", "1", "Read guide.md.\n"))
	if got := guide(first); !strings.Contains(got, v1) {
		t.Fatalf("the loading session reads %q after the edit, want the version it loaded", got)
	}
	second := open()
	load(second) // the same version, from its copy
	if got := guide(second); !strings.Contains(got, v1) {
		t.Fatalf("a load before the next scan reads %q, want the scanned version", got)
	}

	f.scan(t)
	if _, err := mgr.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := guide(first); !strings.Contains(got, v1) {
		t.Fatalf("after the scan, the loading session reads %q, want the version it loaded until it loads again", got)
	}
	third := open()
	load(third)
	if got := guide(third); !strings.Contains(got, v2) {
		t.Fatalf("a load after the scan reads %q, want the new version", got)
	}
	load(first) // loads again: the new version, at the same mount
	if got := guide(first); !strings.Contains(got, v2) {
		t.Fatalf("loaded again, the session reads %q, want the new version", got)
	}
	if l := first.Loaded(); len(l) != 1 || l[0].Mount != "/skills/notes" {
		t.Fatalf("loaded again: %+v", l)
	}

	// Two copies, both versions still registry rows (history): neither
	// goes. A copy no row and no session names goes once past the grace.
	trees, err := blob.ListDir(ctx, copies, bucket.MirrorTrees(bucket.DefaultLoadedPrefix), 0)
	if err != nil || len(trees.Files) != 2 || len(trees.Dirs) != 2 {
		t.Fatalf("copies: %+v %v", trees, err)
	}
	stray, marker, _ := bucket.MirrorTree(bucket.DefaultLoadedPrefix, "sha256:"+strings.Repeat("ab", 32))
	for _, k := range []string{stray + "SKILL.md", marker} {
		if err := copies.Put(ctx, k, strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if n, err := mgr.SweepCopies(ctx); err != nil || n != 1 {
		t.Fatalf("SweepCopies = %d, %v; want 1 (the stray copy)", n, err)
	}
	if _, _, err := copies.Get(ctx, marker); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("stray marker after the sweep: %v", err)
	}
	vs, err := f.db.Versions(ctx, store.Filter{History: true, Brief: true})
	if err != nil || len(vs) != 2 {
		t.Fatalf("registry rows: %d %v", len(vs), err)
	}
}

// TestLoadedVersionTooLarge: a version over the copy bounds is served
// from its directory, as without copies.
func TestLoadedVersionTooLarge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, notesFiles(nil), nil)
	ws := tempStore(t)
	s := openOn(t, f.newManager(t, session.Options{Workspace: ws,
		Copies: session.VersionCopies{Store: ws, Prefix: bucket.DefaultLoadedPrefix, MaxBytes: 10}}), t3, "")
	if _, err := s.Load(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, "notes", "guide.md"), []byte("Edited.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FS().Read(ctx, "/skills/notes/guide.md", 0, 0); err != nil || !strings.Contains(got, "Edited.") {
		t.Fatalf("a version too large to copy reads %q, %v; want its directory", got, err)
	}
	if d, err := blob.ListDir(ctx, ws, bucket.MirrorTrees(bucket.DefaultLoadedPrefix), 0); err != nil || len(d.Files)+len(d.Dirs) != 0 {
		t.Fatalf("copies of a version too large: %+v %v", d, err)
	}
}

// TestLoadedVersionKeptObjectStorage is item 9 with skills served from
// object storage: the first load uploads the version as scanned, and a
// load by another process (a fresh source on the same bucket) after its
// author edited the directory reads that upload rather than being refused
// for the edit. An edit uploaded under the recorded digest is still
// refused: what the session would read is what is checked.
func TestLoadedVersionKeptObjectStorage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	objects := tempStore(t)
	f := newFixture(t, notesFiles(nil), &session.BlobSource{Store: objects})
	process := func() *session.Session {
		t.Helper()
		return openOn(t, f.newManager(t, session.Options{Audit: f.db, Source: &session.BlobSource{Store: objects}}), t3, "")
	}
	first := process()
	if _, err := first.Load(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.root, "notes", "guide.md"), "Write long notes.\n")
	second := process()
	if _, err := second.Load(ctx, "notes"); err != nil {
		t.Fatalf("a load in another process after the edit: %v", err)
	}
	if got, err := second.FS().Read(ctx, "/skills/notes/guide.md", 0, 0); err != nil || !strings.Contains(got, "Write short notes.") {
		t.Fatalf("a load before the next scan reads %q, %v; want the scanned version", got, err)
	}
	// The upload itself edited behind the marker: refused.
	if err := objects.Put(ctx, "acme/skills/notes/guide.md", strings.NewReader("tampered\n"), 9); err != nil {
		t.Fatal(err)
	}
	if _, err := process().Load(ctx, "notes"); !errors.Is(err, session.ErrSkillChanged) {
		t.Fatalf("a load of a tampered upload: %v, want ErrSkillChanged", err)
	}
}
