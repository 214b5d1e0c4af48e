package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// testChanges: a change is queued once per key, whatever became of it; a
// decision takes it out of pending once, with its audit record and (when
// applied) its registration and an install generation bump; an executor
// never gets two registered backends of one provider.
func testChanges(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	q := func(key string) store.Change {
		t.Helper()
		c, created, err := db.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: key, Subject: "create_repository",
			Summary: "promote", Proposal: json.RawMessage(`{"a":1}`), QueuedBy: "operator:ana", Why: "same tool"},
			store.AuditRecord{Actor: "operator:ana", Action: "change.queue"}, audit.SealStored)
		if err != nil || !created || c.State != store.ChangePending || c.Key != key || string(c.Proposal) != `{"a":1}` {
			t.Fatalf("queue %s: %+v %v %v", key, c, created, err)
		}
		return c
	}
	a, b := q("k1"), q("k2")
	if again, created, err := db.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: "k1", Proposal: json.RawMessage(`{}`)},
		store.AuditRecord{Action: "change.queue"}, audit.SealStored); err != nil || created || again.ID != a.ID {
		t.Fatalf("queue again: %+v %v %v", again, created, err)
	}
	gen, _ := db.InstallGeneration(ctx)
	reg := &store.Registration{Executor: "create_repository", Definition: json.RawMessage(`{"name":"create_repository"}`), Backends: []store.RegisteredBackend{
		{Provider: "github", Skill: "providers/github", Server: "github", Tool: "create_repository", Arguments: map[string]string{"name": "args.name"}},
		{Provider: "gitlab", Skill: "providers/gitlab", Server: "gitlab", Tool: "create_repository", Arguments: map[string]string{"name": "args.name"}},
	}}
	got, err := db.DecideChange(ctx, store.ChangeDecision{ID: a.ID, To: store.ChangeApplied, By: "operator:ana", Reason: "one executor", Register: reg},
		store.AuditRecord{Actor: "operator:ana", Action: "change.apply", Subject: "change 1"}, audit.SealStored)
	if err != nil || got.State != store.ChangeApplied || got.DecidedBy != "operator:ana" || got.Decision != "one executor" || got.Decided.IsZero() {
		t.Fatalf("apply: %+v %v", got, err)
	}
	if g, _ := db.InstallGeneration(ctx); g != gen+1 {
		t.Errorf("install generation %d after apply, want %d", g, gen+1)
	}
	regs, err := db.Registrations(ctx)
	reg.Change = a.ID
	if err != nil || len(regs) != 1 || !reflect.DeepEqual(regs[0], *reg) {
		t.Fatalf("registrations: %+v %v", regs, err)
	}
	for _, tc := range []struct {
		name string
		d    store.ChangeDecision
		want error
		msg  string
	}{
		{"decided", store.ChangeDecision{ID: a.ID, To: store.ChangeRejected, Reason: "no"}, store.ErrConflict, "decide change 1: change 1 is applied, not pending: conflict"},
		{"unknown", store.ChangeDecision{ID: 99, To: store.ChangeRejected, Reason: "no"}, store.ErrNotFound, "decide change 99: change 99: not found"},
		{"second backend", store.ChangeDecision{ID: b.ID, To: store.ChangeApplied, Register: reg}, store.ErrConflict,
			"decide change 2: executor create_repository already has a registered github backend: conflict"},
	} {
		if _, err := db.DecideChange(ctx, tc.d, store.AuditRecord{Action: "change.x"}, audit.SealStored); !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
	if got, err := db.DecideChange(ctx, store.ChangeDecision{ID: b.ID, To: store.ChangeRejected, By: "operator:bo", Reason: "not now"},
		store.AuditRecord{Actor: "operator:bo", Action: "change.reject"}, audit.SealStored); err != nil || got.State != store.ChangeRejected {
		t.Fatalf("reject: %+v %v", got, err)
	}
	pending, _ := db.Changes(ctx, store.ChangeFilter{States: []store.ChangeState{store.ChangePending}})
	all, _ := db.Changes(ctx, store.ChangeFilter{})
	if len(pending) != 0 || len(all) != 2 || all[0].ID != b.ID {
		t.Errorf("changes: pending %d, all %+v", len(pending), all)
	}
	recs, _ := db.AuditRecords(ctx, store.AuditFilter{Action: "change."})
	var actions []string
	for _, r := range recs {
		actions = append(actions, r.Action)
	}
	if want := []string{"change.queue", "change.queue", "change.apply", "change.reject"}; !reflect.DeepEqual(actions, want) {
		t.Errorf("audit: %v, want %v", actions, want)
	}
}

// testChangesRace: handles of one store queue the same change and decide
// it at once; it is queued once, with one record, and decided once.
func testChangesRace(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	dbs := []store.DB{a, h.Share(t, a)}
	var created, decided atomic.Int32
	ids := make([]int64, 10)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			c, ok, err := dbs[i%2].QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: "k", Subject: "s", Proposal: json.RawMessage(`{}`)},
				store.AuditRecord{Actor: "system", Action: "change.queue"}, audit.SealStored)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				created.Add(1)
			}
			ids[i] = c.ID
		})
	}
	wg.Wait()
	if created.Load() != 1 {
		t.Fatalf("queued %d times", created.Load())
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("ids %v", ids)
		}
	}
	for i := range 10 {
		wg.Go(func() {
			_, err := dbs[i%2].DecideChange(ctx, store.ChangeDecision{ID: ids[0], To: store.ChangeRejected, By: "operator:ana", Reason: "no"},
				store.AuditRecord{Actor: "operator:ana", Action: "change.reject"}, audit.SealStored)
			switch {
			case err == nil:
				decided.Add(1)
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if decided.Load() != 1 {
		t.Fatalf("decided %d times", decided.Load())
	}
	recs, err := a.AuditRecords(ctx, store.AuditFilter{Action: "change."})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit %+v %v", recs, err)
	}
}
