package broker_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestPolicyErrorsAudited: through the real policy engine, a call for
// which a forbid fails to evaluate is denied with the error as its reason,
// and an allowed call for which a permit failed lists that failure; both
// in the audit record.
func TestPolicyErrorsAudited(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	const policies = `
@id("default-permit")
permit (principal, action == Action::"invoke", resource);

@id("boom-forbid")
forbid (principal, action, resource) when { context.args has text && context.args.text == "boom" && context.args.text.x == 1 };

@id("warn-permit")
permit (principal, action, resource) when { context.args has text && context.args.text == "warn" && context.args.text.x == 1 };
`
	engine := policy.New(&policy.Options{Store: db})
	set, err := policy.ParsePolicies([]policy.Source{{Name: "policies/test.cedar", Text: []byte(policies)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.SetPolicies(set); err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	sk := skillFor(t, "gamma")
	sk.Tier, sk.InvokableBy = 1, []string{"T0", "T1", "T2", "T3", "T4"}
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider:  broker.NewPolicyDecider(engine),
		Upstream: pool,
		Audit:    w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	const typeErr = "type error: expected one of [record, (entity of type `any_entity_type`)], got string"
	const permitted = "permitted by default-permit [policy default-permit, policies/test.cedar:2]"
	const forbidErr = "forbid boom-forbid failed to evaluate (" + typeErr + "); skillgate denies a call that a forbid cannot rule on [policy boom-forbid, policies/test.cedar:5]"
	tests := []struct {
		text, result string
		isError      bool
		decision     capability.Effect
		reasons      []string
	}{
		{"hi", "echo: hi", false, capability.Allow, []string{permitted}},
		// The agent is told the policy's id; the audit record keeps its position.
		{"boom", "skillgate: call to echo denied: forbid boom-forbid failed to evaluate (" + typeErr + "); skillgate denies a call that a forbid cannot rule on [policy boom-forbid].",
			true, capability.Deny, []string{forbidErr}},
		{"warn", "echo: warn", false, capability.Allow, []string{permitted,
			"policy warn-permit failed to evaluate and was skipped: " + typeErr + " [policy warn-permit, policies/test.cedar:8]"}},
	}
	for _, tc := range tests {
		res, err := call(b, ctx, gatewayCaller(p), "echo", json.RawMessage(`{"text":"`+tc.text+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != tc.result || res.IsError != tc.isError {
			t.Errorf("%s: result %q (error %v), want %q (error %v)", tc.text, got, res.IsError, tc.result, tc.isError)
		}
	}
	// The records of answered calls are queued after their results are
	// passed on.
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rs, err := audit.NewLog(db).Query(ctx, audit.Filter{Action: "capability.invoke"})
	if err != nil || len(rs) != len(tests) {
		t.Fatalf("%d audit records (%v), want %d", len(rs), err, len(tests))
	}
	// A refusal is recorded at once, an answered call once its result is
	// passed on: compare in the order the calls were decided.
	slices.SortStableFunc(rs, func(a, b audit.Record) int { return a.Time.Compare(b.Time) })
	for i, tc := range tests {
		if rs[i].Decision != tc.decision || !reflect.DeepEqual(rs[i].Reasons, tc.reasons) {
			t.Errorf("%s: audited %s %q, want %s %q", tc.text, rs[i].Decision, rs[i].Reasons, tc.decision, tc.reasons)
		}
	}
}
