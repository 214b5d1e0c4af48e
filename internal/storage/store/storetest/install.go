package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// rec is an install change's audit record as a test writes it: the store
// appends what it is given, with the install as it was.
func rec(actor, action string) store.InstallAudit {
	return func(was store.Install) (store.AuditRecord, error) {
		data, _ := json.Marshal(map[string]string{"from": string(was.State), "key": was.Key})
		return store.AuditRecord{Actor: actor, Action: action, Subject: was.Key, Reasons: []string{action}, Data: data}, nil
	}
}

// testInstallTransitions: each change is one transaction with the audit
// record its caller gives; a refused transition changes nothing and
// records nothing.
func testInstallTransitions(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	in := store.Install{Key: "tools/notes", Name: "notes", Category: "tools", Digest: "sha256:aa", Tier: 2, InvokableBy: []string{"T0", "T1"}, Dir: "/d", Source: "/s"}
	got, err := db.CreateInstall(ctx, in, "installed from /s", rec("operator:ana", "install.create"), audit.SealStored)
	if err != nil || got.State != store.StatePendingInstall || got.InvokableBy[1] != "T1" {
		t.Fatalf("create: %+v %v", got, err)
	}
	if _, err := db.CreateInstall(ctx, in, "again", rec("operator:ana", "install.create"), audit.SealStored); !errors.Is(err, store.ErrConflict) ||
		err.Error() != "tools/notes version sha256:aa is already pending_install: conflict" {
		t.Errorf("duplicate: %v", err)
	}
	g0, _ := db.InstallGeneration(ctx)
	rep := json.RawMessage(`{"r":1}`)
	blocked := map[string]string{"n/a": "drift"}
	out, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StatePendingInstall}, To: store.StateAnalyzing,
		Reason: "analysis", Change: store.InstallChange{Report: &rep, Blocked: &blocked}, Audit: rec("system", "install.analyze")})
	if err != nil || out[0].State != store.StateAnalyzing || string(out[0].Report) != `{"r":1}` || out[0].Blocked["n/a"] != "drift" {
		t.Fatalf("transition: %+v %v", out, err)
	}
	// Two transitions, the second refused: neither applies.
	_, err = db.TransitionInstall(ctx, audit.SealStored,
		store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked, Reason: "x", Audit: rec("system", "install.x")},
		store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateEnabled}, To: store.StateDisabled, Reason: "y", Audit: rec("system", "install.y")})
	if !errors.Is(err, store.ErrConflict) || err.Error() != "tools/notes is blocked, not enabled: conflict" {
		t.Errorf("refused: %v", err)
	}
	if _, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:zz", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked, Audit: rec("system", "install.z")}); !errors.Is(err, store.ErrNotFound) ||
		err.Error() != "install sha256:zz: not found" {
		t.Errorf("unknown digest: %v", err)
	}
	// A change without its audit record, or whose record cannot be
	// written, is refused and leaves nothing behind.
	if _, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked}); err == nil || err.Error() != "install change of tools/notes: no audit record given" {
		t.Errorf("no record: %v", err)
	}
	failing := func(store.Install) (store.AuditRecord, error) { return store.AuditRecord{}, errors.New("no data") }
	if _, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked, Audit: failing}); err == nil || err.Error() != "no data" {
		t.Errorf("failing record: %v", err)
	}
	rows, _ := db.Installs(ctx, store.InstallFilter{Key: "tools/notes"})
	if len(rows) != 1 || rows[0].State != store.StateAnalyzing {
		t.Errorf("rows %+v", rows)
	}
	if rows, _ := db.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateBlocked, store.StateAnalyzing}}); len(rows) != 1 {
		t.Errorf("by state: %+v", rows)
	}
	if rows, _ := db.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateEnabled}}); len(rows) != 0 {
		t.Errorf("by another state: %+v", rows)
	}
	if g1, _ := db.InstallGeneration(ctx); g1 != g0+1 {
		t.Errorf("generation %d → %d", g0, g1)
	}
	recs, err := audit.NewLog(db).Query(ctx, audit.Filter{Action: "install."})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit %+v %v", recs, err)
	}
	if r := recs[0]; r.Actor != "operator:ana" || r.Action != "install.create" || string(r.Data) != `{"from":"","key":"tools/notes"}` {
		t.Errorf("record %+v %s", r, r.Data)
	}
	if r := recs[1]; r.Actor != "system" || r.Subject != "tools/notes" || r.Action != "install.analyze" ||
		string(r.Data) != `{"from":"pending_install","key":"tools/notes"}` || r.Time.IsZero() {
		t.Errorf("record %+v %s", r, r.Data)
	}
	// A removed version may be installed again: the row is reused.
	if _, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateAnalyzing}, To: store.StateRemoved, Reason: "gone", Audit: rec("operator:ana", "install.remove")}); err != nil {
		t.Fatal(err)
	}
	again, err := db.CreateInstall(ctx, in, "again", rec("operator:ana", "install.create"), audit.SealStored)
	if err != nil || again.State != store.StatePendingInstall || again.ID != got.ID || again.Report != nil || again.Blocked != nil || again.Reason != "again" {
		t.Fatalf("reinstall: %+v %v", again, err)
	}
	// It counts as installed when it was installed again: versions are
	// ordered by that (an older one never offers to replace a newer).
	if rows, err := db.Installs(ctx, store.InstallFilter{Key: "tools/notes"}); err != nil || len(rows) != 1 || !rows[0].CreatedAt.After(got.CreatedAt) {
		t.Errorf("reinstalled version's install time: %+v (first installed %v) %v", rows, got.CreatedAt, err)
	}
}

// testInstallGenerationShared: installs changed through one handle move
// the generation another handle reads, and of concurrent transitions of
// one install from the same state, on two handles, exactly one applies.
func testInstallGenerationShared(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	b := h.Share(t, a)
	g0, _ := b.InstallGeneration(ctx)
	in := store.Install{Key: "notes", Name: "notes", Digest: "sha256:bb", Tier: 2, Dir: "/d", Source: "/s"}
	if _, err := a.CreateInstall(ctx, in, "new", rec("operator:ana", "install.create"), audit.SealStored); err != nil {
		t.Fatal(err)
	}
	if g1, _ := b.InstallGeneration(ctx); g1 != g0+1 {
		t.Fatalf("generation %d → %d after another handle's install", g0, g1)
	}
	var applied, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			db := []store.DB{a, b}[i%2]
			_, err := db.TransitionInstall(ctx, audit.SealStored, store.Transition{Digest: "sha256:bb", From: []store.InstallState{store.StatePendingInstall},
				To: store.StateAnalyzing, Reason: "analysis", Audit: rec("system", "install.analyze")})
			switch {
			case err == nil:
				applied.Add(1)
			case errors.Is(err, store.ErrConflict):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if applied.Load() != 1 || refused.Load() != 9 {
		t.Fatalf("%d transitions applied, %d refused; want 1 and 9", applied.Load(), refused.Load())
	}
	if recs, _ := audit.NewLog(a).Query(ctx, audit.Filter{Action: "install.analyze"}); len(recs) != 1 {
		t.Fatalf("%d records of the transition", len(recs))
	}
}
