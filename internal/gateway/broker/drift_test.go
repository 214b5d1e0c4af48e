package broker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestDriftRefusalAudited: a call that the upstream connection refuses
// because the live tool no longer matches its approved pin never ran: the
// agent is told so and the audit log records a denial for drift, not an
// allowed call that failed.
func TestDriftRefusalAudited(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	sk := skillFor(t, "gamma")
	// The approved definition of echo differs from what the server offers.
	pins := sk.Pins["srv"]
	for i, p := range pins.Tools {
		if p.Name != "echo" {
			continue
		}
		var def map[string]any
		json.Unmarshal(p.Definition, &def)
		def["description"] = "Echo the text (as approved)."
		raw, _ := json.Marshal(def)
		np, err := capability.NewToolPin(pins.Server, raw)
		if err != nil {
			t.Fatal(err)
		}
		pins.Tools[i] = np
	}
	sk.Pins["srv"] = pins
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider:  &listDecider{},
		Upstream: pool,
		Audit:    w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	admin := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}
	res, err := call(b, ctx, gatewayCaller(admin), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = "skillgate: echo was refused: the server's tool no longer matches the definition an operator approved (drift); an operator must review it (skillgate review) before it can be called again"
	if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != want {
		t.Fatalf("result %q (error %v), want %q", got, res.IsError, want)
	}
	// The records of answered calls are queued after their results are
	// passed on.
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rs, _ := audit.NewLog(db).Query(ctx, audit.Filter{Action: "capability.invoke"})
	if len(rs) != 1 || rs[0].Decision != capability.Deny || len(rs[0].Reasons) != 1 || !strings.HasPrefix(rs[0].Reasons[0], "drift: ") {
		t.Fatalf("audit records %+v", rs)
	}
}
