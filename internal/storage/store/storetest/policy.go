package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// The store holds package policy's grants, stored policies and buckets.
var (
	_ policy.Store   = store.DB(nil)
	_ policy.Buckets = store.DB(nil)
)

func testStoredPolicies(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
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
	if err := db.DeletePolicy(ctx, "a"); err != nil {
		t.Fatalf("deleting a missing policy: %v", err)
	}
	set, err := policy.LoadPolicies(ctx, "", db)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 0 || set.Default {
		t.Fatalf("a stored policy file with only a comment: %d policies, default %v", set.Len(), set.Default)
	}
}

// grantRec is a grant change's audit record as a test writes it.
func grantRec(action, subject string) store.AuditRecord {
	return store.AuditRecord{Actor: "operator:alice", Action: action, Subject: subject, Reasons: []string{action}}
}

// testGrantsRoundTrip: the store keeps grants column for column, uses and
// releases them atomically, and appends each change's record with it.
func testGrantsRoundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
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

// testRescopeGrants: each rewrite applies with its record in one
// transaction, and a grant no longer in force with the pattern expected is
// left alone without a record.
func testRescopeGrants(t *testing.T, h Harness) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db := h.Open(t, fixedClock(&now))
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

// testGrantUsesAreAtomic races the calls of engines on two handles of one
// store: a grant of 5 uses allows exactly 5 calls.
func testGrantUsesAreAtomic(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	dbs := []store.DB{a, h.Share(t, a)}
	caps := []policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}
	var engines []*policy.Engine
	for i := range 3 {
		e := policy.New(&policy.Options{Store: dbs[i%2]})
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
	gs, _ := a.Grants(ctx)
	if len(gs) != 1 || gs[0].Used != 5 {
		t.Fatalf("%+v", gs)
	}
}

// testOneUseGrantRace: 20 goroutines on two handles use a one-use grant
// at once; exactly one succeeds and every other gets ErrConflict.
func testOneUseGrantRace(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	dbs := []store.DB{a, h.Share(t, a)}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	g := store.Grant{ID: "g_once", Principal: "acme/a", Capability: "tools/fs:fs/delete_file", Level: "destructive", Uses: 1, CreatedAt: now}
	if err := a.CreateGrant(ctx, g, grantRec("grant.add", g.Capability), audit.SealStored); err != nil {
		t.Fatal(err)
	}
	var used, refused atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			<-start
			u, err := dbs[i%2].UseGrant(ctx, g.ID, now)
			switch {
			case err == nil && u.Used == 1:
				used.Add(1)
			case errors.Is(err, store.ErrConflict):
				refused.Add(1)
			default:
				t.Errorf("use: %+v %v", u, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if used.Load() != 1 || refused.Load() != 19 {
		t.Fatalf("one-use grant used %d times, refused %d times; want 1 and 19", used.Load(), refused.Load())
	}
}

// testTokensNeverOverGranted: takers on two handles drain one bucket at
// once; together they take exactly its tokens, never more, and a refill
// gives exactly what the elapsed time adds.
func testTokensNeverOverGranted(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	dbs := []store.DB{a, h.Share(t, a)}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const burst, perSecond = 50, 1.0
	var taken atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			<-start
			for range 5 {
				n, avail, err := dbs[i%2].TakeTokens(ctx, "acme/a:fs/read_file", perSecond, burst, 3, now)
				if err != nil || n < 0 || n > 3 || avail < float64(n) {
					t.Errorf("take: %d of %v, %v", n, avail, err)
					return
				}
				taken.Add(int32(n))
			}
		})
	}
	close(start)
	wg.Wait()
	if n := taken.Load(); n != burst {
		t.Fatalf("%d tokens taken from a bucket of %d", n, burst)
	}
	tests := []struct {
		at        time.Duration
		want      int
		wantTaken int
		wantAvail float64
	}{
		{0, 1, 0, 0},
		{2500 * time.Millisecond, 5, 2, 2.5},
		{2500 * time.Millisecond, 1, 0, 0.5},
		{time.Hour, 100, burst, burst},
		// A clock behind the bucket's refills nothing.
		{time.Minute, 1, 0, 0},
	}
	for _, tt := range tests {
		n, avail, err := a.TakeTokens(ctx, "acme/a:fs/read_file", perSecond, burst, tt.want, now.Add(tt.at))
		if err != nil || n != tt.wantTaken || avail != tt.wantAvail {
			t.Errorf("take %d at +%v: %d of %v (%v), want %d of %v", tt.want, tt.at, n, avail, err, tt.wantTaken, tt.wantAvail)
		}
	}
	// A new bucket starts full.
	if n, avail, err := a.TakeTokens(ctx, "other", perSecond, 3, 5, now); err != nil || n != 3 || avail != 3 {
		t.Errorf("new bucket: %d of %v, %v", n, avail, err)
	}
	// Keys are any bytes: the policy engine joins principal, capability
	// and rate with NUL bytes. Two keys that differ after a NUL are two
	// buckets.
	for _, key := range []string{"acme/a\x00notes:notes/echo\x00100/minute", "acme/a\x00notes:notes/echo\x0010/minute"} {
		if n, avail, err := a.TakeTokens(ctx, key, perSecond, 3, 2, now); err != nil || n != 2 || avail != 3 {
			t.Errorf("key %q: %d of %v, %v", key, n, avail, err)
		}
	}
}
