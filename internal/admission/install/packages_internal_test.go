package install

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// newInternalEnv is a Service over a fresh SQLite store and managed
// storage.
func newInternalEnv(t *testing.T) *Service {
	t.Helper()
	data := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(Options{Store: db, Root: filepath.Join(data, "imported")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDiffPackages(t *testing.T) {
	t.Parallel()
	pkg := func(server, name, version, integrity string, deps ...string) launch.Package {
		p := launch.Package{Server: server, Name: name, Version: version, Integrity: integrity, Tree: "sha256:" + version}
		for _, d := range deps {
			n, v, _ := strings.Cut(d, "@")
			p.Dependencies = append(p.Dependencies, launch.Dependency{Name: n, Version: v})
		}
		return p
	}
	old := []launch.Package{
		pkg("echo", "echo-mcp", "1.0.0", "sha512-a", "left-pad@1.0.0", "zod@3.0.0", "gone@1.0.0"),
		pkg("same", "same-mcp", "2.0.0", "sha512-s"),
		pkg("dropped", "old-mcp", "1.0.0", "sha512-o"),
	}
	cur := []launch.Package{
		pkg("echo", "echo-mcp", "1.1.0", "sha512-b", "left-pad@1.3.0", "zod@3.0.0", "new@2.0.0"),
		pkg("same", "same-mcp", "2.0.0", "sha512-s"),
		pkg("added", "new-mcp", "0.1.0", "sha512-n"),
	}
	got := diffPackages(old, cur)
	want := []PackageChange{
		{Server: "added", Name: "new-mcp", To: "0.1.0", ToIntegrity: "sha512-n", Added: []string{}, Removed: []string{}, Changed: []string{}},
		{Server: "dropped", Name: "old-mcp", From: "1.0.0", FromIntegrity: "sha512-o", Added: []string{}, Removed: []string{}, Changed: []string{}},
		{Server: "echo", Name: "echo-mcp", From: "1.0.0", To: "1.1.0", FromIntegrity: "sha512-a", ToIntegrity: "sha512-b",
			Added: []string{"new@2.0.0"}, Removed: []string{"gone@1.0.0"}, Changed: []string{"left-pad@1.0.0 → 1.3.0"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diffPackages:\n%+v\nwant\n%+v", got, want)
	}
	var b strings.Builder
	for _, c := range got {
		packageChangeText(&b, c)
	}
	wantText := `  package of server added: new-mcp none → 0.1.0
    integrity: none → sha512-n
  package of server dropped: old-mcp 1.0.0 → none
    integrity: sha512-o → none
  package of server echo: echo-mcp 1.0.0 → 1.1.0
    integrity: sha512-a → sha512-b
    dependencies added: new@2.0.0
    dependencies removed: gone@1.0.0
    dependencies changed: left-pad@1.0.0 → 1.3.0
`
	if b.String() != wantText {
		t.Errorf("text:\n%s\nwant\n%s", b.String(), wantText)
	}
	if d := diffPackages(old, old); len(d) != 0 {
		t.Errorf("no change: %+v", d)
	}
}

func TestPackageText(t *testing.T) {
	t.Parallel()
	base := launch.Package{Server: "mem", Launcher: "npx", Ecosystem: launch.NPM, Name: "@m/server", Version: "1.2.0", Integrity: "sha512-x",
		Registry: "https://registry.npmjs.org/", Bin: "node_modules/@m/server/dist/index.js", Interpreter: "/usr/bin/node", Tree: "sha256:t",
		Dependencies: []launch.Dependency{{Name: "a", Version: "1"}}}
	for _, tc := range []struct {
		requested, want string
		scripts         []launch.Script
	}{
		{"1.2.0", "(exactly)", nil},
		{"", "(no version given: the newest, 1.2.0)", nil},
		{"^1.0.0", "(^1.0.0: the newest matching, 1.2.0)", []launch.Script{{Package: "native", Version: "2.0.0", Allowed: true, Why: "builds its binding"}, {Package: "other", Version: "1.0.0"}}},
	} {
		p := base
		p.Requested, p.Scripts = tc.requested, tc.scripts
		var b strings.Builder
		packageText(&b, p)
		want := "  package: npm @m/server@1.2.0 " + tc.want + ", npx, from https://registry.npmjs.org/\n" +
			"    integrity: sha512-x\n    fetched tree: sha256:t, 1 dependency\n    runs offline: /usr/bin/node node_modules/@m/server/dist/index.js\n"
		if len(tc.scripts) > 0 {
			want += "    install scripts of native@2.0.0 allowed: \"builds its binding\"\n"
		}
		if b.String() != want {
			t.Errorf("requested %q:\n%s\nwant\n%s", tc.requested, b.String(), want)
		}
	}
}

// TestRecoverLeavesFetchesInProgress: a staging directory where another
// process may still be fetching is left alone by Recover; one older than
// any fetch lasts is a crash's leftover and is removed.
func TestRecoverLeavesFetchesInProgress(t *testing.T) {
	t.Parallel()
	e := newInternalEnv(t)
	root := e.storage.Root
	fresh, stale := filepath.Join(root, stagingPrefix+"fresh"), filepath.Join(root, stagingPrefix+"stale")
	for _, d := range []string{fresh, stale} {
		if err := os.MkdirAll(filepath.Join(d, PackagesDir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-staleStaging - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fetch in progress was removed: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a crash's staging directory was left: %v", err)
	}
}
