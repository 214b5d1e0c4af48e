package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestChangeSmokeCall: a promote_provider change's page offers the smoke
// call the CLI's --smoke-call makes, and applying it from the page checks
// the call as the CLI does: the problem is shown and nothing is applied.
func TestChangeSmokeCall(t *testing.T) {
	c := newConsole(t)
	ctx := context.Background()
	ch, _, err := c.db.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: "promote_provider:create_thing",
		Subject: "create_thing", Summary: "create_thing: one executor", QueuedBy: "operator:ana", Why: "queued by a test",
		Proposal: json.RawMessage(`{"executor":{"name":"create_thing","description":"Create a new thing.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},"new":true,` +
			`"backends":[{"provider":"github","skill":"gh","server":"gh","tool":"create_thing","arguments":{"name":"args.name"}}],"evidence":["gh (provider github) offers gh/create_thing"],"drafter":"deterministic"}`)},
		store.AuditRecord{Actor: "operator:ana", Action: "change.queue"}, audit.SealStored)
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(ch.ID, 10)
	csrf := c.signIn(t, "sgt_admin")
	_, _, page := c.get(t, "/admin/changes/show?id="+id)
	if !strings.Contains(page, `<input id="approve-smoke" name="smoke"`) {
		t.Fatalf("change page lacks the smoke call field:\n%s", page)
	}
	for _, tc := range []struct{ smoke, want string }{
		{"create_thing=[1]", "the smoke call&#39;s arguments must be a JSON object: [1]"},
		{"create_thing", "a smoke call is EXECUTOR=JSON"},
	} {
		status, _, page := c.post(t, "/admin/changes/approve", url.Values{"csrf": {csrf}, "id": {id}, "why": {"one executor for both forges"}, "smoke": {tc.smoke}})
		if status != http.StatusBadRequest || !strings.Contains(page, tc.want) {
			t.Errorf("apply with smoke call %s: %d, page lacks %q:\n%s", tc.smoke, status, tc.want, page)
		}
	}
	if got, err := c.db.Changes(ctx, store.ChangeFilter{ID: ch.ID}); err != nil || len(got) != 1 || got[0].State != store.ChangePending {
		t.Fatalf("after refused applies: %+v %v", got, err)
	}
}
