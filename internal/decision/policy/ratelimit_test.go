package policy_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestRateLimitAcrossProcesses: two engines on one store (two processes,
// say `skillgate mcp` and `serve`) share a limit of 3 an hour; together
// they allow 3 calls, not 3 each.
func TestRateLimitAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "skillgate.db")
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	engine := func() *policy.Engine {
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e := policy.New(&policy.Options{Store: db, Buckets: db, Now: clock})
		if err := e.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.SetCapabilities([]policy.Capability{capRecord("notes", "search", func(c *policy.Capability) {
			c.Constraints = constraint.Set{RateLimit: "3/hour"}
		})}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := engine(), engine()
	p := agent("a", "T3")
	var got []string
	for _, e := range []*policy.Engine{a, b, a, b, a} {
		got = append(got, string(e.Evaluate(ctx, p, ref("notes", "search"), nil).Effect))
	}
	want := []string{"allow", "allow", "allow", "deny", "deny"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("decisions %v, want %v", got, want)
		}
	}
	d := b.Evaluate(ctx, p, ref("notes", "search"), nil)
	if len(d.Reasons) != 1 || d.Reasons[0].Message != "acme/a exceeded the rate limit of 3/hour on tools/notes:notes/search; retry later" {
		t.Errorf("reason %+v", d.Reasons)
	}
	// policy test (a dry run) sees the shared bucket too, and takes nothing.
	if d := a.Test(ctx, p, ref("notes", "search"), nil); d.Effect != capability.Deny {
		t.Errorf("dry run at the limit: %s", d.Effect)
	}
	// Twenty minutes refill one token, for whichever process asks first.
	now = now.Add(20 * time.Minute)
	if d := a.Test(ctx, p, ref("notes", "search"), nil); d.Effect != capability.Allow {
		t.Errorf("dry run after a refill: %s", d.Effect)
	}
	got = got[:0]
	for _, e := range []*policy.Engine{b, a} {
		got = append(got, string(e.Evaluate(ctx, p, ref("notes", "search"), nil).Effect))
	}
	if got[0] != "allow" || got[1] != "deny" {
		t.Errorf("after 20 minutes: %v, want [allow deny]", got)
	}
}
