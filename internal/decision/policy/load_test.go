package policy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
)

func TestLoadPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "policies")
	// A missing directory: the default set.
	set, err := policy.LoadPolicies(ctx, dir, nil)
	if err != nil || !set.Default {
		t.Fatalf("missing dir: %v %v", set, err)
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "b.cedar"), []byte(`@id("b") forbid (principal, action, resource) when { principal.tierLevel == 4 };`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.cedar"), []byte("\n@id(\"a\") permit (principal, action, resource);"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a policy"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden.cedar"), []byte("garbage"), 0o644)
	set, err = policy.LoadPolicies(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range set.Policies() {
		got = append(got, p.ID+"@"+strings.TrimPrefix(p.Position, dir+"/"))
	}
	if strings.Join(got, " ") != "a@a.cedar:2 b@b.cedar:1" {
		t.Fatalf("%v", got)
	}
	e := policy.New(&policy.Options{PolicyDir: dir})
	if err := e.Reload(ctx); err != nil || e.Policies().Len() != 2 {
		t.Fatalf("reload: %v", err)
	}
	// A link is refused, and a broken file fails the reload without
	// replacing the policies in effect.
	os.Symlink(filepath.Join(dir, "a.cedar"), filepath.Join(dir, "c.cedar"))
	if _, err := policy.LoadPolicies(ctx, dir, nil); !errors.Is(err, policy.ErrInvalidPolicy) || !strings.Contains(err.Error(), "c.cedar is a symbolic link") {
		t.Fatalf("link: %v", err)
	}
	os.Remove(filepath.Join(dir, "c.cedar"))
	os.WriteFile(filepath.Join(dir, "z.cedar"), []byte("permit (principal, action, resource"), 0o644)
	if err := e.Reload(ctx); !errors.Is(err, policy.ErrInvalidPolicy) || !strings.Contains(err.Error(), "z.cedar:1:") {
		t.Fatalf("broken: %v", err)
	}
	if e.Policies().Len() != 2 {
		t.Fatal("a failed reload replaced the policies")
	}
}
