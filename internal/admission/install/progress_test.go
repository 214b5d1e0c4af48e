package install_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
)

// TestProgress: an install and a recheck tell Options.Progress each slow
// step as it starts, in order.
func TestProgress(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var steps []string
	e := newEnv(t, install.Options{Progress: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
	}})
	dir := t.TempDir()
	src := writeSkill(t, dir, "notes", "---\nUse the tools.\n", map[string]any{
		"notes": testServerDecl("normal", nil), "more": testServerDecl("normal", nil),
	})
	if _, err := e.svc.Install(context.Background(), src, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Recheck(context.Background(), "notes", "operator:ana"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"reading " + src,
		"introspecting server more",
		"introspecting server notes",
		"scanning the content of notes",
		"introspecting server more",
		"introspecting server notes",
		"scanning the content of notes",
	}
	if !slices.Equal(steps, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
}
