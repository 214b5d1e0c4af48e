package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// TestWalkReportsSkillsBelowTheDepthLimit: a skill deeper than the depth
// limit is not indexed, but it is reported as dropped, with a warning that
// names it and the flag and configuration key that raise the limit; the
// walk does not search inside a dropped skill, reports no link below the
// limit, and a verified rescan reports the same.
func TestWalkReportsSkillsBelowTheDepthLimit(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/SKILL.md":              sk("a"),
		"x/y/SKILL.md":            sk("y"),
		"x/y2/z/SKILL.md":         sk("z"),
		"x/y2/z/inner/w/SKILL.md": sk("w"),
		"p/q/r/s/SKILL.md":        sk("s"),
		"p/q/r/README.md":         "not a skill",
	})
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "p/q/r/link")); err != nil {
		t.Fatal(err)
	}
	settle()
	lim := discover.DefaultLimits
	lim.MaxDepth = 2
	ctx := context.Background()
	r := discover.Root{Path: root}
	res, err := discover.Walk(ctx, r, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rels(res.Candidates), []string{"a", "x/y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	want := []discover.Dropped{
		{Dir: filepath.Join(root, "x/y2/z"), Rel: "x/y2/z", Depth: 3},
		{Dir: filepath.Join(root, "p/q/r/s"), Rel: "p/q/r/s", Depth: 4},
	}
	if !reflect.DeepEqual(res.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", res.Dropped, want)
	}
	wantNotes := []string{"depth limit 2 reached at " + filepath.Join(root, "p/q/r") +
		": deeper skills are not indexed (each one found is a warning); raise the limit with --max-depth (configuration file: limits.max_depth)"}
	if !res.Truncated || !reflect.DeepEqual(res.Notes, wantNotes) {
		t.Errorf("truncated %v, notes %q, want %q", res.Truncated, res.Notes, wantNotes)
	}
	d := discover.Dropped{Dir: filepath.Join(root, "x/y2/z"), Rel: "x/y2/z", Depth: 3}
	wantWarning := "skill " + filepath.Join(root, "x/y2/z") + " not scanned: it is 3 directories below the root, deeper than the depth limit 2; " +
		"raise the limit with --max-depth 3 (configuration file: limits.max_depth), or add " + filepath.Join(root, "x/y2") + " as a root"
	if got := d.Warning(2); got != wantWarning {
		t.Errorf("warning\n %q\nwant\n %q", got, wantWarning)
	}
	if dir, ok := discover.DroppedDir(wantWarning); !ok || dir != d.Dir {
		t.Errorf("DroppedDir = %q, %v", dir, ok)
	}
	if _, ok := discover.DroppedDir(wantNotes[0]); ok {
		t.Error("DroppedDir took a note for a warning")
	}

	if runtime.GOOS != "linux" {
		return
	}
	var c memCache
	if _, err := discover.Scan(ctx, r, lim, &c); err != nil || !discover.HasStateForTest(c.get(root), root) {
		t.Fatalf("a settled tree made no state: %v", err)
	}
	got, err := discover.Scan(ctx, r, lim, &c)
	if err != nil || !got.Verified {
		t.Fatalf("an unchanged tree was not verified: %v", err)
	}
	if !reflect.DeepEqual(got.Dropped, want) {
		t.Errorf("verified dropped %+v, want %+v", got.Dropped, want)
	}
	// A skill added below the limit changes a directory the walk read.
	if err := os.MkdirAll(filepath.Join(root, "x/y2/n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if res, err := discover.Scan(ctx, r, lim, &c); err != nil || res.Verified {
		t.Errorf("a new directory below the limit was not seen: %v", err)
	}
}

// TestWalkBelowTheDepthLimitCountsDirectories: the search below the depth
// limit reads directories against MaxDirs and says when it stopped there.
func TestWalkBelowTheDepthLimitCountsDirectories(t *testing.T) {
	files := map[string]string{"a/SKILL.md": sk("a")}
	for _, d := range []string{"b", "c", "d", "e"} {
		files["deep/"+d+"/x/SKILL.md"] = sk("x")
	}
	root := writeTree(t, files)
	lim := discover.DefaultLimits
	lim.MaxDepth, lim.MaxDirs = 1, 4
	res, err := discover.Walk(context.Background(), discover.Root{Path: root}, lim)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"depth limit 1 reached at " + filepath.Join(root, "deep/b") + ": deeper skills are not indexed (each one found is a warning); raise the limit with --max-depth (configuration file: limits.max_depth)",
		"directory limit 4 reached below the depth limit in " + root + ": deeper directories were searched for skills only in part; raise --max-dirs or --max-depth",
	}
	if !reflect.DeepEqual(res.Notes, want) {
		t.Errorf("notes\n %q\nwant\n %q", res.Notes, want)
	}
	if len(res.Dropped) != 0 || res.Dirs != 4 {
		t.Errorf("dropped %+v, %d directories read", res.Dropped, res.Dirs)
	}
}
