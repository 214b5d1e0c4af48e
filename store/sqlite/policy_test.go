package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/policy"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
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

// The store holds package policy's grants and stored policies.
var _ policy.Store = (*sqlite.DB)(nil)

// grantRec is a grant change's audit record as a test writes it.
func grantRec(action, subject string) store.AuditRecord {
	return store.AuditRecord{Actor: "operator:alice", Action: action, Subject: subject, Reasons: []string{action}}
}

// TestGrantsRoundTrip: the store keeps grants column for column, uses and
// releases them atomically, and appends each change's record with it.
func TestGrantsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPolicyDB(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	g := store.Grant{ID: "g_1", Principal: "acme/a", Capability: "tools/fs:fs/delete_file", Args: json.RawMessage(`{"path":["/srv/*"]}`),
		Level: "destructive", ExpiresAt: exp, Uses: 2, Reason: "cleanup", CreatedBy: "alice", CreatedAt: now}
	if err := db.CreateGrant(ctx, g, grantRec("grant.add", g.Capability), audit.SealStored); err != nil {
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
	if _, err := db.UseGrant(ctx, g.ID, now); !errors.Is(err, store.ErrConflict) || err.Error() != `use grant "g_1": conflict` {
		t.Fatalf("used up: %v", err)
	}
	if _, err := db.UseGrant(ctx, "g_nope", now); !errors.Is(err, store.ErrNotFound) || err.Error() != `use grant "g_nope": not found` {
		t.Fatalf("unknown: %v", err)
	}
	g2 := store.Grant{ID: "g_2", Principal: "acme/*", Capability: "tools/web:web/*", Level: "write", ExpiresAt: exp, CreatedAt: now}
	if err := db.CreateGrant(ctx, g2, grantRec("grant.add", g2.Capability), audit.SealStored); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UseGrant(ctx, g2.ID, exp); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("expired: %v", err)
	}
	var was store.Grant
	revoke := func(g store.Grant) (store.AuditRecord, error) {
		was = g
		return grantRec("grant.revoke", g.Capability), nil
	}
	if err := db.RevokeGrant(ctx, g2.ID, now, revoke, audit.SealStored); err != nil {
		t.Fatal(err)
	}
	if was.ID != "g_2" || !was.RevokedAt.Equal(now) {
		t.Errorf("record given %+v", was)
	}
	if err := db.RevokeGrant(ctx, g2.ID, now, revoke, audit.SealStored); !errors.Is(err, store.ErrNotFound) || err.Error() != `revoke grant "g_2": not found` {
		t.Fatalf("second revoke: %v", err)
	}
	// A revocation whose record cannot be written is undone.
	failing := func(store.Grant) (store.AuditRecord, error) { return store.AuditRecord{}, errors.New("no record") }
	if err := db.RevokeGrant(ctx, g.ID, now, failing, audit.SealStored); err == nil || err.Error() != "revoke grant g_1: no record" {
		t.Fatalf("failing record: %v", err)
	}
	if got, _ := db.Grants(ctx); len(got) != 1 || got[0].ID != "g_1" {
		t.Fatalf("grants in force: %+v", got)
	}
	// A released use can be used again; nothing is released below zero.
	if err := db.ReleaseGrant(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if u, err := db.UseGrant(ctx, g.ID, now); err != nil || u.Used != 2 {
		t.Fatalf("use after release: %+v %v", u, err)
	}
	g3 := store.Grant{ID: "g_3", Principal: "acme/*", Capability: "*", Level: "write", CreatedAt: now}
	if err := db.CreateGrant(ctx, g3, grantRec("grant.add", g3.Capability), audit.SealStored); err != nil {
		t.Fatal(err)
	}
	if err := db.ReleaseGrant(ctx, g3.ID); err != nil {
		t.Fatal(err)
	}
	if u, err := db.UseGrant(ctx, g3.ID, now); err != nil || u.Used != 1 {
		t.Fatalf("release below zero: %+v %v", u, err)
	}
	rs, err := audit.NewLog(db).Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, r := range rs {
		actions = append(actions, r.Action+" "+r.Subject)
	}
	if got, want := strings.Join(actions, ", "), "grant.add tools/fs:fs/delete_file, grant.add tools/web:web/*, grant.revoke tools/web:web/*, grant.add *"; got != want {
		t.Errorf("audit:\n got %s\nwant %s", got, want)
	}
}

// TestRescopeGrants: each rewrite applies with its record in one
// transaction, and a grant no longer in force with the pattern expected is
// left alone without a record.
func TestRescopeGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPolicyDB(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	for _, id := range []string{"g_1", "g_2", "g_3"} {
		g := store.Grant{ID: id, Principal: "acme/a", Capability: "fs/write_file", Level: "write", CreatedAt: now}
		if err := db.CreateGrant(ctx, g, grantRec("grant.add", g.Capability), audit.SealStored); err != nil {
			t.Fatal(err)
		}
	}
	err := db.RescopeGrants(ctx, []store.GrantRescope{
		{ID: "g_1", From: "fs/write_file", To: "notes:fs/write_file", Record: grantRec("grant.scope", "notes:fs/write_file")},
		{ID: "g_2", From: "fs/write_file", Record: grantRec("grant.scope", "fs/write_file")},
		{ID: "g_3", From: "fs/other", To: "notes:fs/other", Record: grantRec("grant.scope", "notes:fs/other")},
	}, audit.SealStored)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := db.Grants(ctx)
	var got []string
	for _, g := range gs {
		got = append(got, g.ID+" "+g.Capability)
	}
	if strings.Join(got, ", ") != "g_1 notes:fs/write_file, g_3 fs/write_file" {
		t.Errorf("grants in force: %s", strings.Join(got, ", "))
	}
	rs, _ := audit.NewLog(db).Query(ctx, audit.Filter{Action: "grant.scope"})
	got = got[:0]
	for _, r := range rs {
		got = append(got, r.Subject+" "+r.Time.Format(time.RFC3339))
	}
	if strings.Join(got, ", ") != "notes:fs/write_file 2026-03-01T12:00:00Z, fs/write_file 2026-03-01T12:00:00Z" {
		t.Errorf("records: %s", strings.Join(got, ", "))
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
