package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/policy"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store/sqlite"
)

func openPolicyDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestStoredPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPolicyDB(t)
	for _, p := range []policy.StoredPolicy{{ID: "b", Text: "forbid (principal, action, resource);"}, {ID: "a", Text: "permit (principal, action, resource);"}} {
		if err := db.PutPolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutPolicy(ctx, policy.StoredPolicy{ID: "b", Text: "// replaced"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Policies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].Text != "// replaced" || got[0].UpdatedAt.IsZero() {
		t.Fatalf("%+v", got)
	}
	if err := db.DeletePolicy(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadPolicies(ctx, "", db)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 0 || set.Default {
		t.Fatalf("a stored policy file with only a comment: %d policies, default %v", set.Len(), set.Default)
	}
}

func TestGrantsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPolicyDB(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	g, err := policy.NewGrant(policy.Grant{Principal: "acme/a", Capability: "tools/fs:fs/delete_file", Args: map[string][]string{"path": {"/srv/*"}},
		Level: capability.RiskDestructive, ExpiresAt: &exp, Uses: 2, Reason: "cleanup", CreatedBy: "alice"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	got, err := db.Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], g) {
		t.Fatalf("got  %+v\nwant %+v", got, g)
	}
	for i := 1; i <= 2; i++ {
		u, err := db.UseGrant(ctx, g.ID, now)
		if err != nil || u.Used != i {
			t.Fatalf("use %d: %+v %v", i, u, err)
		}
	}
	if _, err := db.UseGrant(ctx, g.ID, now); !errors.Is(err, policy.ErrGrantUnusable) {
		t.Fatalf("used up: %v", err)
	}
	if _, err := db.UseGrant(ctx, "g_nope", now); !errors.Is(err, policy.ErrGrantNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	g2, _ := policy.NewGrant(policy.Grant{Principal: "acme/*", Capability: "tools/web:web/*", ExpiresAt: &exp}, now)
	if err := db.CreateGrant(ctx, g2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UseGrant(ctx, g2.ID, exp); !errors.Is(err, policy.ErrGrantUnusable) {
		t.Fatalf("expired: %v", err)
	}
	if err := db.RevokeGrant(ctx, g2.ID, "alice", now); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeGrant(ctx, g2.ID, "alice", now); !errors.Is(err, policy.ErrGrantNotFound) {
		t.Fatalf("second revoke: %v", err)
	}
	if got, _ := db.Grants(ctx); len(got) != 1 {
		t.Fatalf("revoked grant listed: %+v", got)
	}
	// A released use can be used again; nothing is released below zero.
	if err := db.ReleaseGrant(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if u, err := db.UseGrant(ctx, g.ID, now); err != nil || u.Used != 2 {
		t.Fatalf("use after release: %+v %v", u, err)
	}
	g3, _ := policy.NewGrant(policy.Grant{Principal: "acme/*", Capability: "*"}, now)
	if err := db.CreateGrant(ctx, g3); err != nil {
		t.Fatal(err)
	}
	if err := db.ReleaseGrant(ctx, g3.ID); err != nil {
		t.Fatal(err)
	}
	if u, err := db.UseGrant(ctx, g3.ID, now); err != nil || u.Used != 1 {
		t.Fatalf("release below zero: %+v %v", u, err)
	}
}

// TestGrantUsesAreAtomic races many engines' calls over one SQLite file:
// a grant of 5 uses allows exactly 5 calls.
func TestGrantUsesAreAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPolicyDB(t)
	caps := []policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}
	var engines []*policy.Engine
	for range 3 {
		e := policy.New(&policy.Options{Store: db})
		if err := e.SetCapabilities(caps); err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	if _, err := engines[0].AddGrant(ctx, policy.Grant{Principal: "acme/*", Capability: "tools/fs:fs/delete_file", Level: capability.RiskDestructive, Uses: 5}); err != nil {
		t.Fatal(err)
	}
	for _, e := range engines[1:] {
		if err := e.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			p := capability.Principal{Tenant: "acme", Agent: "a", Tier: "T3"}
			if d := engines[i%3].Evaluate(ctx, p, capability.Ref{Skill: "tools/fs", ExtensionID: "fs", CapabilityID: "delete_file"}, nil); d.Effect == capability.Allow {
				allowed.Add(1)
			} else if d.Effect != capability.RequireApproval {
				t.Errorf("%+v", d)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 5 {
		t.Fatalf("%d calls allowed by a 5-use grant", n)
	}
	gs, _ := db.Grants(ctx)
	if len(gs) != 1 || gs[0].Used != 5 {
		t.Fatalf("%+v", gs)
	}
}
