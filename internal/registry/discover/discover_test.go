package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// writeTree creates files (path → content) under a new temp dir.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func sk(name string) string { return "---\nname: " + name + "\ndescription: d\n---\n" }

func rels(cs []discover.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Rel)
	}
	return out
}

func TestWalk(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/SKILL.md":                      sk("a"),
		"a/scripts/run.sh":                "echo",
		"a/references/REFERENCE.md":       "ref",
		"a/.git/config":                   "x",
		"a/node_modules/m/index.js":       "x",
		"a/nested/SKILL.md":               sk("nested"),
		"a/nested/more.md":                "m",
		"escrituras/compraventa/SKILL.md": sk("compraventa"),
		"lower/skill.md":                  sk("lower"),
		".hidden/x/SKILL.md":              sk("x"),
		"node_modules/y/SKILL.md":         sk("y"),
		"empty/README.md":                 "no skill",
	})
	res, err := discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	discover.SortCandidates(res.Candidates)
	if got, want := rels(res.Candidates), []string{"a", "a/nested", "escrituras/compraventa", "lower"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("candidates %q, want %q", got, want)
	}
	a := res.Candidates[0]
	var files []string
	for _, f := range a.Files {
		files = append(files, f.Path)
	}
	if want := []string{"SKILL.md", "references/REFERENCE.md", "scripts/run.sh"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files of a = %q, want %q (nested skill, dot dirs and node_modules excluded)", files, want)
	}
	if c := res.Candidates[2]; c.Category != "escrituras" || c.FileName != "SKILL.md" {
		t.Errorf("compraventa: category %q file %q", c.Category, c.FileName)
	}
	if c := res.Candidates[3]; c.FileName != "skill.md" {
		t.Errorf("lower: file %q", c.FileName)
	}
	// The fingerprint changes with content size and is stable otherwise.
	again, _ := discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
	discover.SortCandidates(again.Candidates)
	if again.Candidates[0].Fingerprint != a.Fingerprint {
		t.Error("fingerprint changed without a change")
	}
	os.WriteFile(filepath.Join(root, "a/scripts/run.sh"), []byte("echo hi"), 0o644)
	again, _ = discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
	discover.SortCandidates(again.Candidates)
	if again.Candidates[0].Fingerprint == a.Fingerprint {
		t.Error("fingerprint did not change with a file")
	}
}

func TestWalkBounds(t *testing.T) {
	files := map[string]string{"d1/d2/d3/d4/d5/d6/d7/deep/SKILL.md": sk("deep"), "d1/shallow/SKILL.md": sk("shallow")}
	for i := 0; i < 30; i++ {
		files["many/s"+string(rune('a'+i%26))+string(rune('a'+i/26))+"/SKILL.md"] = sk("x")
	}
	root := writeTree(t, files)
	res, err := discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(res.Notes[0], "depth limit 6 reached at ") {
		t.Errorf("depth: truncated %v notes %q", res.Truncated, res.Notes)
	}
	for _, c := range res.Candidates {
		if strings.Contains(c.Rel, "deep") {
			t.Errorf("found %s beyond the depth limit", c.Rel)
		}
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 10
	res, err = discover.Walk(context.Background(), discover.Root{Path: root}, lim)
	if err != nil {
		t.Fatal(err)
	}
	want := "directory limit 10 reached in " + root + ": the rest of the root was not scanned; raise --max-dirs or narrow the root"
	found := false
	for _, n := range res.Notes {
		found = found || n == want
	}
	if !res.Truncated || !found || res.Dirs > 10 {
		t.Errorf("dirs: truncated %v dirs %d notes %q", res.Truncated, res.Dirs, res.Notes)
	}
}

func TestWalkSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"evil/SKILL.md": sk("evil"), "secret.txt": "s"})
	root := writeTree(t, map[string]string{"good/SKILL.md": sk("good")})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "evil"), filepath.Join(root, "evil")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "good", "secret.txt")))
	must(os.Symlink(root, filepath.Join(root, "loop")))
	res, err := discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(res.Candidates); !reflect.DeepEqual(got, []string{"good"}) {
		t.Fatalf("candidates %q", got)
	}
	if n := len(res.Candidates[0].Files); n != 1 {
		t.Errorf("good has %d files, want 1 (the link is not a file of the skill)", n)
	}
	want := []string{
		"skipped symbolic link " + filepath.Join(root, "evil") + ": links are not followed; add its target as a root of its own if it holds skills",
		"skipped symbolic link " + filepath.Join(root, "loop") + ": links are not followed; add its target as a root of its own if it holds skills",
		"skipped symbolic link " + filepath.Join(root, "good", "secret.txt") + ": links are not followed; add its target as a root of its own if it holds skills",
	}
	if !reflect.DeepEqual(res.Notes, want) {
		t.Errorf("notes\n got %q\nwant %q", res.Notes, want)
	}
	// A root that is itself a link is refused.
	link := filepath.Join(t.TempDir(), "rootlink")
	must(os.Symlink(root, link))
	if _, err := discover.Walk(context.Background(), discover.Root{Path: link}, discover.DefaultLimits); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("root link: err = %v", err)
	}
	// A missing root is not an error.
	res, err = discover.Walk(context.Background(), discover.Root{Path: filepath.Join(root, "nope")}, discover.DefaultLimits)
	if err != nil || !res.Missing {
		t.Errorf("missing root: %v %+v", err, res)
	}
}

func TestParseRoot(t *testing.T) {
	tests := []struct {
		in      string
		want    discover.Root
		wantErr string
	}{
		{"skills", discover.Root{Path: "skills", Scope: discover.ScopeProject}, ""},
		{"~/s=user", discover.Root{Path: "~/s", Scope: discover.ScopeUser}, ""},
		{"b=builtin", discover.Root{Path: "b", Scope: discover.ScopeBuiltin}, ""},
		{"x=team", discover.Root{}, `--root x=team: unknown scope "team": use builtin, user or project`},
	}
	for _, tc := range tests {
		got, err := discover.ParseRoot(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err %v, want %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v", tc.in, got, err)
		}
	}
}

func TestDrift(t *testing.T) {
	can := writeTree(t, map[string]string{
		"same/SKILL.md":     sk("same"),
		"files/SKILL.md":    sk("files"),
		"files/a.md":        "a",
		"files/b.md":        "b",
		"fm/SKILL.md":       "---\nname: fm\ndescription: one\nlicense: MIT\n---\n",
		"only-can/SKILL.md": sk("only-can"),
	})
	mir := writeTree(t, map[string]string{
		"same/SKILL.md":     sk("same"),
		"files/SKILL.md":    sk("files"),
		"files/a.md":        "A",
		"files/c.md":        "c",
		"fm/SKILL.md":       "---\nname: fm\ndescription: two\n---\n",
		"only-mir/SKILL.md": sk("only-mir"),
	})
	rep, err := discover.Drift(context.Background(), can, mir, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InSync() {
		t.Fatal("in sync")
	}
	if !reflect.DeepEqual(rep.OnlyCanonical, []string{"only-can"}) || !reflect.DeepEqual(rep.OnlyMirror, []string{"only-mir"}) {
		t.Errorf("only: %q %q", rep.OnlyCanonical, rep.OnlyMirror)
	}
	if len(rep.Differ) != 2 {
		t.Fatalf("differ: %+v", rep.Differ)
	}
	files, fm := rep.Differ[0], rep.Differ[1]
	if !reflect.DeepEqual(files.Changed, []string{"a.md"}) || !reflect.DeepEqual(files.OnlyCanonical, []string{"b.md"}) || !reflect.DeepEqual(files.OnlyMirror, []string{"c.md"}) || len(files.Keys) != 0 {
		t.Errorf("files: %+v", files)
	}
	if !reflect.DeepEqual(fm.Keys, []string{"description", "license"}) || !reflect.DeepEqual(fm.Changed, []string{"SKILL.md"}) {
		t.Errorf("frontmatter: %+v", fm)
	}
	rep, err = discover.Drift(context.Background(), can, can, discover.DefaultLimits)
	if err != nil || !rep.InSync() {
		t.Errorf("self: %v %+v", err, rep)
	}
}
