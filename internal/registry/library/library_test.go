package library_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/library"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
)

// stores are the buckets the tests run against: a local directory always,
// and the S3 server of scripts/setup-s3.sh when SKILLGATE_TEST_S3_ENDPOINT
// is set.
func stores(t *testing.T) map[string]func(t *testing.T) blob.Store {
	return blobtest.Stores("library")
}

// newS3 returns a fresh prefix of the test bucket, or skips.
func newS3(t testing.TB) blob.Store {
	return blobtest.S3(t, "library")
}

func put(t testing.TB, st blob.Store, key, body string) {
	t.Helper()
	if err := st.Put(context.Background(), key, strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, st blob.Store, prefix string) {
	t.Helper()
	ctx := context.Background()
	all, err := st.List(ctx, prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		if err := st.Delete(ctx, in.Key); err != nil {
			t.Fatal(err)
		}
	}
}

const compraventa = "---\nname: compraventa\ndescription: Draft a deed of sale.\n---\nBody.\n"

// short is a TenantReport without its root (a temporary path).
type short struct {
	Tenant                             string
	Skills, Copied, Unchanged, Removed int
	Refused                            []library.Refusal
	Notes                              []string
}

func summary(rep *library.Report) []short {
	var out []short
	for _, t := range rep.Tenants {
		out = append(out, short{t.Tenant, t.Skills, t.Copied, t.Unchanged, t.Removed, t.Refused, t.Notes})
	}
	return out
}

// TestSync walks a library through uploads, a change, deletions and bad
// uploads, checking each sync's report, the roots and the cache.
func TestSync(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			cache := t.TempDir()
			lib, err := library.New(library.Options{Store: st, Dir: cache, Limits: blobsync.Limits{MaxFiles: 3, MaxBytes: 1 << 20, MaxDepth: 4}})
			if err != nil {
				t.Fatal(err)
			}
			put(t, st, "acme/skills/escrituras/compraventa/SKILL.md", compraventa)
			put(t, st, "acme/skills/escrituras/compraventa/resources/ejemplo.md", "Ejemplo.\n")
			put(t, st, "acme/skills/notes/SKILL.md", "---\nname: notes\n---\nno description\n")
			for _, f := range []string{"SKILL.md", "a", "b", "c"} {
				put(t, st, "acme/skills/huge/"+f, "---\nname: huge\ndescription: too many files\n---\n")
			}
			put(t, st, "acme/skills/README.md", "stray\n")
			put(t, st, "acme/skills/.hidden/SKILL.md", "---\nname: hidden\ndescription: x\n---\n")
			put(t, st, "acme/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: a copy\n---\n")
			put(t, st, "acme/skill-versions/pdf.digest", "sha256:00")
			put(t, st, "globex/skills/arrendamiento/SKILL.md", "---\nname: arrendamiento\ndescription: Lease.\n---\n")
			put(t, st, "_global/imports/x/SKILL.md", "not a tenant\n")
			put(t, st, "initech/sessions/s1/workspace/a.md", "no library\n")

			rep, roots, err := lib.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []short{
				{Tenant: "acme", Skills: 5, Copied: 2, Refused: []library.Refusal{
					{Skill: ".hidden", Reason: "a directory whose name starts with a dot, or node_modules, is never scanned; rename it"},
					{Skill: "huge", Reason: "tree over its limits: more than 3 files (limit 3); split the skill or remove files"},
					{Skill: "pdf", Reason: "a copy of a shared skill that --skills-store s3 made before tenant libraries were on (acme/skill-versions/pdf.digest); delete it with its .digest, or delete only the .digest to make it the tenant's own"}},
					Notes: []string{"1 objects under acme/skills/ belong to no skill and were ignored: a skill is {category}/{name}/SKILL.md or {name}/SKILL.md"}},
				{Tenant: "globex", Skills: 1, Copied: 1, Refused: []library.Refusal{}},
			}
			if got := summary(rep); !reflect.DeepEqual(got, want) {
				t.Fatalf("first sync:\n got %+v\nwant %+v", got, want)
			}
			wantRoots := []discover.Root{
				{Path: filepath.Join(cache, "acme"), Scope: discover.ScopeTenant, Trust: "imported"},
				{Path: filepath.Join(cache, "globex"), Scope: discover.ScopeTenant, Trust: "imported"},
			}
			if !reflect.DeepEqual(roots, wantRoots) {
				t.Fatalf("roots: got %+v, want %+v", roots, wantRoots)
			}
			if got := tree(t, cache); !slices.Equal(got, []string{
				"acme/escrituras/compraventa/SKILL.md", "acme/escrituras/compraventa/resources/ejemplo.md", "acme/notes/SKILL.md",
				"globex/arrendamiento/SKILL.md"}) {
				t.Fatalf("cache after the first sync: %q", got)
			}

			// Nothing changed: nothing copied.
			rep, _, err = lib.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(rep); got[0].Unchanged != 2 || got[0].Copied != 0 || got[1].Unchanged != 1 {
				t.Fatalf("second sync: %+v", got)
			}

			// A change, a deletion, a tenant leaving, a fixed skill.
			put(t, st, "acme/skills/escrituras/compraventa/SKILL.md", strings.Replace(compraventa, "Body.", "New body.", 1))
			del(t, st, "acme/skills/notes/")
			del(t, st, "acme/skills/.hidden/")
			del(t, st, "acme/skills/pdf/")
			del(t, st, "globex/")
			if err := st.Delete(ctx, "acme/skills/huge/a"); err != nil {
				t.Fatal(err)
			}
			rep, roots, err = lib.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want = []short{{Tenant: "acme", Skills: 2, Copied: 2, Removed: 1, Refused: []library.Refusal{},
				Notes: []string{"1 objects under acme/skills/ belong to no skill and were ignored: a skill is {category}/{name}/SKILL.md or {name}/SKILL.md"}}}
			if got := summary(rep); !reflect.DeepEqual(got, want) {
				t.Fatalf("third sync:\n got %+v\nwant %+v", got, want)
			}
			if len(roots) != 1 || roots[0].Path != filepath.Join(cache, "acme") {
				t.Fatalf("roots after globex left: %+v", roots)
			}
			if got := tree(t, cache); !slices.Equal(got, []string{
				"acme/escrituras/compraventa/SKILL.md", "acme/escrituras/compraventa/resources/ejemplo.md",
				"acme/huge/SKILL.md", "acme/huge/b", "acme/huge/c"}) {
				t.Fatalf("cache after the third sync: %q", got)
			}
			b, err := os.ReadFile(filepath.Join(cache, "acme/escrituras/compraventa/SKILL.md"))
			if err != nil || !strings.Contains(string(b), "New body.") {
				t.Fatalf("changed SKILL.md not copied: %q, %v", b, err)
			}
		})
	}
}

// TestSyncConfiguredTenants syncs only the configured tenants.
func TestSyncConfiguredTenants(t *testing.T) {
	ctx := context.Background()
	st := stores(t)["local"](t)
	put(t, st, "acme/skills/a/SKILL.md", "---\nname: a\ndescription: A.\n---\n")
	put(t, st, "globex/skills/b/SKILL.md", "---\nname: b\ndescription: B.\n---\n")
	lib, err := library.New(library.Options{Store: st, Dir: t.TempDir(), Tenants: []string{"globex"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, roots, err := lib.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tenants) != 1 || rep.Tenants[0].Tenant != "globex" || len(roots) != 1 {
		t.Fatalf("got %+v, roots %+v", rep.Tenants, roots)
	}
}

// TestNewErrors checks the options.
func TestNewErrors(t *testing.T) {
	st := stores(t)["local"](t)
	for _, tc := range []struct {
		name string
		opts library.Options
		want string
	}{
		{"no store", library.Options{Dir: "x"}, "library: Options.Store is required"},
		{"no dir", library.Options{Store: st}, "library: Options.Dir is required"},
		{"bad tenant", library.Options{Store: st, Dir: "x", Tenants: []string{"_global"}},
			`library: tenants: tenant "_global" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := library.New(tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// tree lists the regular files under dir, slash-separated, skipping
// dot-entries.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestSyncMaxTenants bounds the tenants found in the bucket and says so.
func TestSyncMaxTenants(t *testing.T) {
	ctx := context.Background()
	st := stores(t)["local"](t)
	for _, tenant := range []string{"acme", "globex", "initech"} {
		put(t, st, tenant+"/skills/a/SKILL.md", "---\nname: a\ndescription: A.\n---\n")
	}
	lib, err := library.New(library.Options{Store: st, Dir: t.TempDir(), MaxTenants: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, roots, err := lib.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3 tenants found, 2 synced (tenant_libraries.max_tenants): list the tenants under tenant_libraries.tenants"}
	if !reflect.DeepEqual(rep.Notes, want) || len(roots) != 2 || rep.Tenants[1].Tenant != "globex" {
		t.Fatalf("notes %q, roots %+v, tenants %+v", rep.Notes, roots, rep.Tenants)
	}
}
