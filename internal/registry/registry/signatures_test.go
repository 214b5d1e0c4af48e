package registry_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// fakeSignatures is a RootSignatures whose evidence of a skill is its
// path under the root and the generation gen, and which rejects the
// skills named in bad. It records what it was asked.
type fakeSignatures struct {
	gen string
	bad map[string]bool
	mu  sync.Mutex
	log []string // "evidence REL", "check REL: DATA"
}

var _ registry.RootSignatures = (*fakeSignatures)(nil)

func (f *fakeSignatures) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeSignatures) Evidence(_ context.Context, rel, _ string) (string, []byte) {
	f.record("evidence " + rel)
	return f.gen, []byte("read of " + rel)
}

func (f *fakeSignatures) Check(_ context.Context, _ fs.FS, rel string, data []byte, name, _ string, _ []skill.File) error {
	f.record("check " + rel + ": " + string(data))
	if f.bad[name] {
		return errors.New("not what was signed")
	}
	return nil
}

// TestScanSignatures: a first_party root's checks are prepared once per
// scan; each skill's evidence is read once and handed to its check (never
// read twice); a rescan checks nothing while neither files nor evidence
// changed, and every skill when the evidence did (a new index, other
// keys); imported roots are never checked.
func TestScanSignatures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, imported := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{"alpha/SKILL.md": sk("alpha", ""), "tools/beta/SKILL.md": sk("beta", ""), "gamma/SKILL.md": sk("gamma", "")})
	write(t, imported, map[string]string{"delta/SKILL.md": sk("delta", "")})
	fake := &fakeSignatures{gen: "keys 1", bad: map[string]bool{"gamma": true}}
	var roots []string
	var mu sync.Mutex
	checker := registry.SignatureCheckerFunc(func(_ context.Context, r string) registry.RootSignatures {
		mu.Lock()
		roots = append(roots, r)
		mu.Unlock()
		return fake
	})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := registry.New(db, registry.Options{Signatures: checker, Workers: 2})
	scan := func() *registry.ScanReport {
		t.Helper()
		fake.log = nil
		rep, err := reg.Scan(ctx, []discover.Root{{Path: root, Trust: capability.TrustFirstParty}, {Path: imported}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(fake.log)
		return rep
	}
	rep := scan()
	if rep.Valid != 3 || rep.Rejected != 1 || len(rep.Rejections) != 1 || rep.Rejections[0].Errors[0] != "signature: not what was signed" {
		t.Fatalf("first scan: %+v", rep)
	}
	want := []string{
		"check alpha: read of alpha", "check gamma: read of gamma", "check tools/beta: read of tools/beta",
		"evidence alpha", "evidence gamma", "evidence tools/beta",
	}
	if !slices.Equal(fake.log, want) || !slices.Equal(roots, []string{root}) {
		t.Fatalf("first scan asked\n %q of roots %q\nwant\n %q of %q", fake.log, roots, want, []string{root})
	}
	if rep = scan(); rep.Parsed != 0 || len(fake.log) != 3 {
		t.Fatalf("unchanged rescan: parsed %d, asked %q", rep.Parsed, fake.log)
	}
	fake.gen = "keys 2"
	if rep = scan(); rep.Parsed != 3 || len(fake.log) != 6 || rep.Rejected != 1 {
		t.Fatalf("rescan with other evidence: parsed %d, asked %q", rep.Parsed, fake.log)
	}
}
