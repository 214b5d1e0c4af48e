package library_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/library"
)

// TestChanged checks that Changed notices every change of the bucket's
// libraries since the last sync, refused skills and strays included, and
// nothing else: a server polls it and rescans only when it is true.
func TestChanged(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			cache := t.TempDir()
			lib, err := library.New(library.Options{Store: st, Dir: cache})
			if err != nil {
				t.Fatal(err)
			}
			changed := func() bool {
				t.Helper()
				ok, err := lib.Changed(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			sync := func() {
				t.Helper()
				if _, _, err := lib.Sync(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if !changed() {
				t.Error("never synced: Changed = false")
			}
			put(t, st, "acme/skills/escrituras/compraventa/SKILL.md", compraventa)
			put(t, st, "acme/skills/.hidden/SKILL.md", "---\nname: hidden\ndescription: refused\n---\n")
			put(t, st, "acme/skills/README.md", "stray\n")
			put(t, st, "_global/imports/x/SKILL.md", "not a tenant\n")
			sync()
			steps := []struct {
				name   string
				change func()
				want   bool
			}{
				{"nothing", func() {}, false},
				{"a skillgate object outside the libraries", func() { put(t, st, "acme/sessions/s1/workspace/a.md", "x\n") }, false},
				{"an upload", func() { put(t, st, "acme/skills/notas/SKILL.md", "---\nname: notas\ndescription: Notes.\n---\n") }, true},
				{"a changed file", func() { put(t, st, "acme/skills/escrituras/compraventa/SKILL.md", compraventa+"More.\n") }, true},
				{"a new tenant", func() { put(t, st, "globex/skills/uno/SKILL.md", "---\nname: uno\ndescription: One.\n---\n") }, true},
				{"a deletion", func() { del(t, st, "acme/skills/notas/") }, true},
				{"a tenant emptied", func() { del(t, st, "globex/") }, true},
			}
			for _, s := range steps {
				s.change()
				if got := changed(); got != s.want {
					t.Errorf("%s: Changed = %v, want %v", s.name, got, s.want)
				}
				sync()
				if changed() {
					t.Errorf("%s: Changed after a sync", s.name)
				}
			}
			// A stamp file that is not one counts as a change.
			if err := os.WriteFile(filepath.Join(cache, ".library-stamp"), []byte("garbage"), 0o600); err != nil {
				t.Fatal(err)
			}
			if !changed() {
				t.Error("garbled stamp: Changed = false")
			}
		})
	}
}
