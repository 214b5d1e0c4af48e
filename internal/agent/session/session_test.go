package session_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// fixture is a registry over a skills root written by the test, and a
// session manager over it.
type fixture struct {
	root string
	db   *sqlite.DB
	reg  *registry.Registry
	mgr  *session.Manager
}

func skillMD(name, desc, tier, body string) string {
	s := "---\nname: " + name + "\ndescription: " + desc + "\n"
	if tier != "" {
		s += "metadata:\n  tier: \"" + tier + "\"\n"
	}
	return s + "---\n" + body
}

func newFixture(t testing.TB, files map[string]string, src session.Source) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{root: filepath.Join(t.TempDir(), "skills")}
	for p, c := range files {
		write(t, filepath.Join(f.root, p), c)
	}
	var err error
	if f.db, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	f.reg = registry.New(f.db, registry.Options{})
	f.scan(t)
	f.mgr = f.newManager(t, session.Options{Source: src})
	return f
}

// notesFiles returns the files of the load tests' skill "notes" (a
// SKILL.md pointing at its guide.md), and more.
func notesFiles(more map[string]string) map[string]string {
	files := map[string]string{
		"notes/SKILL.md": skillMD("notes", "Takes notes.", "1", "Read guide.md.\n"),
		"notes/guide.md": "Write short notes.\n",
	}
	maps.Copy(files, more)
	return files
}

// newManager builds a session manager over the fixture's registry and
// store with opts' other settings, and a workspace of its own where opts
// names none.
func (f *fixture) newManager(t testing.TB, opts session.Options) *session.Manager {
	t.Helper()
	opts.Catalog, opts.Versions, opts.Store = f.reg, f.db, f.db
	if opts.Workspace == nil {
		opts.Workspace = tempStore(t)
	}
	mgr, err := session.NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// tempStore opens a local blob store in a new temporary directory,
// closed when the test ends.
func tempStore(t testing.TB) *local.Store {
	t.Helper()
	st, err := local.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (f *fixture) scan(t testing.TB) {
	t.Helper()
	if _, err := f.reg.Scan(context.Background(), []discover.Root{{Path: f.root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
}

// open opens session id of p on the fixture's manager, closed when the
// test ends.
func (f *fixture) open(t testing.TB, p capability.Principal, id string) *session.Session {
	t.Helper()
	return openOn(t, f.mgr, p, id)
}

// openOn opens session id of p on mgr, closed when the test ends.
func openOn(t testing.TB, mgr *session.Manager, p capability.Principal, id string) *session.Session {
	t.Helper()
	s, err := mgr.Open(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var t3 = capability.Principal{Tenant: "acme", Agent: "drafter", Tier: skill.T3}

func TestPrincipalValidate(t *testing.T) {
	tests := []struct {
		name string
		p    capability.Principal
		want string
	}{
		{"ok", t3, ""},
		{"no tenant", capability.Principal{Agent: "a", Tier: skill.T3}, "invalid principal: tenant is empty"},
		{"tenant with slash", capability.Principal{Tenant: "a/b", Agent: "a", Tier: skill.T3}, `invalid principal: tenant "a/b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"tenant dot-dot", capability.Principal{Tenant: "..", Agent: "a", Tier: skill.T3}, `invalid principal: tenant ".." must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"no agent", capability.Principal{Tenant: "acme", Tier: skill.T3}, "invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT"},
		{"control in agent", capability.Principal{Tenant: "acme", Agent: "a\nb", Tier: skill.T3}, `invalid principal: agent id "a\nb" contains control characters or invalid UTF-8`},
		{"long agent", capability.Principal{Tenant: "acme", Agent: strings.Repeat("a", 129), Tier: skill.T3}, "invalid principal: agent id is 129 bytes, limit 128"},
		{"bad tier", capability.Principal{Tenant: "acme", Agent: "a", Tier: "T9"}, `invalid principal: agent tier "T9": use one of T0, T1, T2, T3, T4`},
		{"non-canonical tier", capability.Principal{Tenant: "acme", Agent: "a", Tier: "t3"}, `invalid principal: agent tier "t3": use one of T0, T1, T2, T3, T4`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, session.ErrInvalidPrincipal) {
					t.Errorf("error %v does not wrap ErrInvalidPrincipal", err)
				}
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"s1", true}, {"A.b_c-9", true}, {strings.Repeat("x", 64), true},
		{"", false}, {strings.Repeat("x", 65), false}, {"-x", false}, {".x", false},
		{"a/b", false}, {"a b", false}, {"ü", false}, {"a%2e", false},
	}
	for _, tc := range tests {
		if err := session.ValidID(tc.id); (err == nil) != tc.ok || (err != nil && !errors.Is(err, session.ErrInvalidSessionID)) {
			t.Errorf("ValidID(%q) = %v, want ok %v", tc.id, err, tc.ok)
		}
	}
	if id := session.NewID(); session.ValidID(id) != nil || len(id) != 26 {
		t.Errorf("NewID() = %q", id)
	}
}

// TestMountRule: the first skill with a leaf name gets /skills/<name>; a
// later one with the same leaf name gets /skills/<category>--<name>
// (slashes of a nested category also "--"); when neither is free the load
// is refused; unloading frees the name.
func TestMountRule(t *testing.T) {
	f := newFixture(t, map[string]string{
		"escrituras/compraventa/SKILL.md": skillMD("compraventa", "Deeds.", "", "# Deeds\n"),
		"contratos/compraventa/SKILL.md":  skillMD("compraventa", "Contracts.", "", "# Contracts\n"),
		"a/b/compraventa/SKILL.md":        skillMD("compraventa", "Nested.", "", "# Nested\n"),
		"compraventa/SKILL.md":            skillMD("compraventa", "Uncategorised.", "", "# Plain\n"),
	}, nil)
	s := f.open(t, t3, "")
	ctx := context.Background()
	steps := []struct {
		op, name string
		want     string // mount, or error text
	}{
		{"load", "escrituras/compraventa", "/skills/compraventa"},
		{"load", "contratos/compraventa", "/skills/contratos--compraventa"},
		{"load", "a/b/compraventa", "/skills/a--b--compraventa"},
		{"load", "escrituras/compraventa", "/skills/compraventa"},
		{"load", "compraventa", "mount name in use: /skills/compraventa is taken; unload that skill first"},
		{"unload", "/skills/compraventa", "/skills/compraventa"},
		{"load", "compraventa", "/skills/compraventa"},
		{"load", "escrituras/compraventa", "/skills/escrituras--compraventa"},
		{"unload", "compraventa", "/skills/compraventa"},
		{"unload", "compraventa", `skill not loaded: "compraventa"`},
		{"load", "nope", `skill not found: "nope"`},
	}
	for i, st := range steps {
		var l session.Loaded
		var err error
		if st.op == "load" {
			l, err = s.Load(ctx, st.name)
		} else {
			l, err = s.Unload(ctx, st.name)
		}
		got := l.Mount
		if err != nil {
			got = err.Error()
		}
		if got != st.want {
			t.Errorf("step %d: %s %s = %q, want %q", i+1, st.op, st.name, got, st.want)
		}
	}
	var mounts []string
	for _, l := range s.Loaded() {
		mounts = append(mounts, l.Key+"@"+l.Mount)
	}
	if want := "contratos/compraventa@/skills/contratos--compraventa a/b/compraventa@/skills/a--b--compraventa escrituras/compraventa@/skills/escrituras--compraventa"; strings.Join(mounts, " ") != want {
		t.Errorf("loaded = %q, want %q", strings.Join(mounts, " "), want)
	}
	// Mounts are persisted as they are.
	rec, err := f.db.Session(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, l := range rec.Skills {
		stored = append(stored, l.Key+"@"+l.Mount)
	}
	if want := "contratos/compraventa@contratos--compraventa a/b/compraventa@a--b--compraventa escrituras/compraventa@escrituras--compraventa"; strings.Join(stored, " ") != want {
		t.Errorf("stored = %q", strings.Join(stored, " "))
	}
}

// TestTreeView: a loaded skill shows exactly the files its scan recorded:
// no files added later, no symbolic links (even inside the skill), no
// nested skill's files, nothing outside; and it is read-only.
func TestTreeView(t *testing.T) {
	f := newFixture(t, map[string]string{
		"escrituras/compraventa/SKILL.md":           skillMD("compraventa", "Deeds.", "", "# Deeds\n"),
		"escrituras/compraventa/notes.md":           "notes\n",
		"escrituras/compraventa/sub/inner/SKILL.md": skillMD("inner", "Nested skill.", "", "# Inner\n"),
		"escrituras/hipoteca/SKILL.md":              skillMD("hipoteca", "Secret.", "3", "# Secret\n"),
	}, nil)
	cv := filepath.Join(f.root, "escrituras", "compraventa")
	write(t, filepath.Join(cv, "late.md"), "added after the scan\n")
	if err := os.Symlink(filepath.Join(f.root, "escrituras", "hipoteca", "SKILL.md"), filepath.Join(cv, "leak.md")); err != nil {
		t.Fatal(err)
	}
	s := f.open(t, t3, "")
	ctx := context.Background()
	if _, err := s.Load(ctx, "escrituras/compraventa"); err != nil {
		t.Fatal(err)
	}
	fsys := s.FS()
	l, err := fsys.GlobInfo(ctx, "**", "/skills")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range l.Entries {
		paths = append(paths, e.Path)
	}
	if want := "/skills/compraventa/SKILL.md /skills/compraventa/notes.md"; strings.Join(paths, " ") != want {
		t.Errorf("files = %q, want %q", strings.Join(paths, " "), want)
	}
	for _, p := range []string{"/skills/compraventa/late.md", "/skills/compraventa/leak.md", "/skills/compraventa/sub/inner/SKILL.md"} {
		if _, err := fsys.Read(ctx, p, 0, 0); err == nil || err.Error() != "Error: File '"+p+"' not found" {
			t.Errorf("read %s = %v", p, err)
		}
	}
	// A recorded file replaced by a link is gone too.
	os.Remove(filepath.Join(cv, "notes.md"))
	if err := os.Symlink(filepath.Join(f.root, "escrituras", "hipoteca", "SKILL.md"), filepath.Join(cv, "notes.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Read(ctx, "/skills/compraventa/notes.md", 0, 0); err == nil || err.Error() != "Error: File '/skills/compraventa/notes.md' not found" {
		t.Errorf("read swapped link = %v", err)
	}
	if err := fsys.Write(ctx, "/skills/compraventa/new.md", "x"); err == nil || err.Error() != "Error: Cannot modify '/skills/compraventa/new.md': '/skills' is mounted read-only" {
		t.Errorf("write into a skill = %v", err)
	}
	src := session.LocalSource{}
	vs, _ := f.db.Versions(ctx, store.Filter{Key: "escrituras/compraventa"})
	st, _, err := src.Mount(ctx, "acme", vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "x.md", strings.NewReader("x"), 1); err == nil {
		t.Error("Put on a skill tree succeeded")
	}
	if err := st.Delete(ctx, "SKILL.md"); err == nil {
		t.Error("Delete on a skill tree succeeded")
	}
	if _, err := os.Stat(filepath.Join(cv, "SKILL.md")); err != nil {
		t.Errorf("skill directory changed: %v", err)
	}
}

// TestResumeDropsUnavailable: a resumed session keeps only the skills its
// principal may still use, and records that.
func TestResumeDropsUnavailable(t *testing.T) {
	f := newFixture(t, map[string]string{
		"escrituras/compraventa/SKILL.md":  skillMD("compraventa", "Deeds.", "2", "# Deeds\n"),
		"contratos/arrendamiento/SKILL.md": skillMD("arrendamiento", "Leases.", "1", "# Leases\n"),
	}, nil)
	ctx := context.Background()
	s, err := f.mgr.Open(ctx, t3, "keep")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"escrituras/compraventa", "contratos/arrendamiento"} {
		if _, err := s.Load(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// compraventa becomes tier 3: a T3 agent may no longer use it.
	write(t, filepath.Join(f.root, "escrituras", "compraventa", "SKILL.md"), skillMD("compraventa", "Deeds.", "3", "# Deeds\n"))
	f.scan(t)
	s2 := f.open(t, t3, "keep")
	if got := s2.Loaded(); len(got) != 1 || got[0].Key != "contratos/arrendamiento" || got[0].Mount != "/skills/arrendamiento" {
		t.Errorf("resumed = %+v", got)
	}
	rec, _ := f.db.Session(ctx, "keep")
	if len(rec.Skills) != 1 {
		t.Errorf("stored = %+v", rec.Skills)
	}
	// The owner can still resume; another principal cannot.
	if _, err := f.mgr.Open(ctx, capability.Principal{Tenant: "acme", Agent: "other", Tier: skill.T3}, "keep"); !errors.Is(err, session.ErrSessionUnavailable) {
		t.Errorf("other principal: %v", err)
	}
	if p, err := f.mgr.PrincipalOf(ctx, "keep"); err != nil || p != t3 {
		t.Errorf("PrincipalOf = %v, %v", p, err)
	}
	if _, err := f.mgr.PrincipalOf(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PrincipalOf(missing) = %v", err)
	}
}

// TestDisclose checks the exact disclosure texts.
func TestDisclose(t *testing.T) {
	f := newFixture(t, map[string]string{
		"escrituras/compraventa/SKILL.md":        skillMD("compraventa", "Drafts sale deeds.", "", "# Compraventa\n\nRead clausulas.md.\n"),
		"escrituras/compraventa/clausulas.md":    "x\n",
		"escrituras/compraventa/resources/a.pdf": "%PDF",
		"contratos/arrendamiento/SKILL.md":       skillMD("arrendamiento", "Drafts leases.", "1", "# Leases\n"),
		"escrituras/hipoteca/SKILL.md":           skillMD("hipoteca", "Mortgages.", "3", "# Secret\n"),
	}, nil)
	ctx := context.Background()
	s := f.open(t, t3, "")
	head := "Skills you can load with the load_skill tool: pass a skill's <location> (its category/name). Its instructions are returned and its files appear under /skills/<name>.\n"
	item := func(name, desc, loc string) string {
		return "\n<skill>\n<name>\n" + name + "\n</name>\n<description>\n" + desc + "\n</description>\n<location>\n" + loc + "\n</location>\n</skill>"
	}
	tests := []struct {
		name string
		opts session.DiscloseOptions
		want string
	}{
		{"all", session.DiscloseOptions{}, head + "<available_skills>" + item("arrendamiento", "Drafts leases.", "contratos/arrendamiento") + item("compraventa", "Drafts sale deeds.", "escrituras/compraventa") + "\n</available_skills>"},
		{"category", session.DiscloseOptions{Category: "escrituras"}, head + "<available_skills>" + item("compraventa", "Drafts sale deeds.", "escrituras/compraventa") + "\n</available_skills>"},
		{"no such category", session.DiscloseOptions{Category: "nada"}, session.NoSkillsText},
		{"budget leaves one out", session.DiscloseOptions{Budget: 350}, head + "<available_skills>" + item("arrendamiento", "Drafts leases.", "contratos/arrendamiento") + "\n</available_skills>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Disclose(ctx, tc.opts)
			if err != nil || got != tc.want {
				t.Errorf("Disclose = %q, %v\nwant %q", got, err, tc.want)
			}
			if tc.opts.Budget > 0 && len([]rune(got)) > tc.opts.Budget {
				t.Errorf("%d characters, over the budget of %d", len([]rune(got)), tc.opts.Budget)
			}
		})
	}
	// Discovery without a session gives the same fragment.
	if got, _ := session.Discovery(ctx, f.reg, skill.T3, session.DiscloseOptions{}); got != tests[0].want {
		t.Errorf("Discovery = %q", got)
	}
	if _, err := s.Load(ctx, "compraventa"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "arrendamiento"); err != nil {
		t.Fatal(err)
	}
	want := "<skill_content name=\"compraventa\">\n# Compraventa\n\nRead clausulas.md.\n\nSkill directory: /skills/compraventa\n" +
		"Relative paths in this skill are relative to the skill directory.\n<skill_resources>\n<file>clausulas.md</file>\n<file>resources/a.pdf</file>\n</skill_resources>\n</skill_content>\n\n" +
		"<skill_content name=\"arrendamiento\">\n# Leases\n\nSkill directory: /skills/arrendamiento\n" +
		"Relative paths in this skill are relative to the skill directory.\n<skill_resources>\n</skill_resources>\n</skill_content>"
	if got, err := s.Disclose(ctx, session.DiscloseOptions{}); err != nil || got != want {
		t.Errorf("Disclose loaded = %q, %v\nwant %q", got, err, want)
	}
	capped, _ := s.SkillContent(ctx, "compraventa", 1)
	if !strings.Contains(capped, "<file>clausulas.md</file>\n<!-- more files: ls /skills/compraventa -->\n</skill_resources>") {
		t.Errorf("capped listing = %q", capped)
	}
}

// TestBlobSourceMirror: object storage receives each version's recorded
// files once, under {tenant}/skills/{category}/{name}/, with a digest
// marker outside the tree; a new version replaces the old files.
func TestBlobSourceMirror(t *testing.T) {
	ctx := context.Background()
	objects := tempStore(t)
	counting := &countingStore{Store: objects}
	src := &session.BlobSource{Store: counting}
	f := newFixture(t, map[string]string{
		"escrituras/compraventa/SKILL.md": skillMD("compraventa", "Deeds.", "", "# Deeds\n"),
		"escrituras/compraventa/old.md":   "old\n",
	}, src)
	s := f.open(t, t3, "")
	if _, err := s.Load(ctx, "escrituras/compraventa"); err != nil {
		t.Fatal(err)
	}
	keys := func() string {
		infos, _ := objects.List(ctx, "", 0)
		var ks []string
		for _, in := range infos {
			ks = append(ks, in.Key)
		}
		return strings.Join(ks, " ")
	}
	if got, want := keys(), "acme/skill-versions/escrituras/compraventa.digest acme/skills/escrituras/compraventa/SKILL.md acme/skills/escrituras/compraventa/old.md"; got != want {
		t.Errorf("objects = %q, want %q", got, want)
	}
	puts := counting.puts
	// Another session, even another process (a fresh source), uploads nothing.
	other := f.open(t, capability.Principal{Tenant: "acme", Agent: "b", Tier: skill.T3}, "")
	if _, err := other.Load(ctx, "escrituras/compraventa"); err != nil {
		t.Fatal(err)
	}
	vs, _ := f.db.Versions(ctx, store.Filter{Key: "escrituras/compraventa"})
	if _, _, err := (&session.BlobSource{Store: counting}).Mount(ctx, "acme", vs[0]); err != nil {
		t.Fatal(err)
	}
	if counting.puts != puts {
		t.Errorf("remounting the same version uploaded %d objects", counting.puts-puts)
	}
	// A new version: old.md goes, new.md comes; the session is remounted.
	os.Remove(filepath.Join(f.root, "escrituras", "compraventa", "old.md"))
	write(t, filepath.Join(f.root, "escrituras", "compraventa", "new.md"), "new\n")
	f.scan(t)
	if _, err := f.mgr.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(), "acme/skill-versions/escrituras/compraventa.digest acme/skills/escrituras/compraventa/SKILL.md acme/skills/escrituras/compraventa/new.md"; got != want {
		t.Errorf("objects after the new version = %q, want %q", got, want)
	}
	if got, err := s.FS().Read(ctx, "/skills/compraventa/new.md", 0, 0); err != nil || got != "     1\tnew" {
		t.Errorf("read new.md = %q, %v", got, err)
	}
}

type countingStore struct {
	blob.Store
	puts int
}

func (c *countingStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	c.puts++
	return c.Store.Put(ctx, key, r, size)
}
