package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlite"
)

// TestInstallTransitions: each change is one transaction with its audit
// record; a refused transition changes nothing and records nothing.
func TestInstallTransitions(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := store.Install{Key: "tools/notes", Name: "notes", Category: "tools", Digest: "sha256:aa", Tier: 2, InvokableBy: []string{"T0", "T1"}, Dir: "/d", Source: "/s"}
	got, err := db.CreateInstall(ctx, in, "operator:ana", "installed from /s")
	if err != nil || got.State != store.StatePendingInstall || got.InvokableBy[1] != "T1" {
		t.Fatalf("create: %+v %v", got, err)
	}
	if _, err := db.CreateInstall(ctx, in, "operator:ana", "again"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate: %v", err)
	}
	g0, _ := db.InstallGeneration(ctx)
	rep := json.RawMessage(`{"r":1}`)
	blocked := map[string]string{"n/a": "drift"}
	out, err := db.TransitionInstall(ctx, store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StatePendingInstall}, To: store.StateAnalyzing,
		Actor: "system", Reason: "analysis", Change: store.InstallChange{Report: &rep, Blocked: &blocked}})
	if err != nil || out[0].State != store.StateAnalyzing || string(out[0].Report) != `{"r":1}` || out[0].Blocked["n/a"] != "drift" {
		t.Fatalf("transition: %+v %v", out, err)
	}
	// Two transitions, the second refused: neither applies.
	_, err = db.TransitionInstall(ctx,
		store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked, Reason: "x"},
		store.Transition{Digest: "sha256:aa", From: []store.InstallState{store.StateEnabled}, To: store.StateDisabled, Reason: "y"})
	if !errors.Is(err, store.ErrConflict) || err.Error() != "tools/notes is blocked, not enabled: conflict" {
		t.Errorf("refused: %v", err)
	}
	if _, err := db.TransitionInstall(ctx, store.Transition{Digest: "sha256:zz", From: []store.InstallState{store.StateAnalyzing}, To: store.StateBlocked}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown digest: %v", err)
	}
	rows, _ := db.Installs(ctx, store.InstallFilter{Key: "tools/notes"})
	if len(rows) != 1 || rows[0].State != store.StateAnalyzing {
		t.Errorf("rows %+v", rows)
	}
	if g1, _ := db.InstallGeneration(ctx); g1 != g0+1 {
		t.Errorf("generation %d → %d", g0, g1)
	}
	recs, err := db.Query(ctx, audit.Filter{Action: "install."})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit %+v %v", recs, err)
	}
	if r := recs[1]; r.Actor != "system" || r.Subject != "tools/notes" || r.Reasons[0] != "analysis" ||
		string(r.Data) != `{"digest":"sha256:aa","from":"pending_install","to":"analyzing"}` {
		t.Errorf("record %+v %s", r, r.Data)
	}
}
