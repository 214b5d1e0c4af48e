package broker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestRefusalHidesPolicyPaths: a refusal tells the agent which policy
// decided by its id, or by its file's name and line when it has no @id,
// never by the policy directory's path on the host; the audit record keeps
// the full position for operators.
func TestRefusalHidesPolicyPaths(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := "permit (principal, action == Action::\"invoke\", resource);\n\n" +
		"forbid (principal, action, resource) when { context.args has text && context.args.text like \"*secret*\" };\n\n" +
		"@id(\"no-deny\")\nforbid (principal, action, resource) when { context.args has text && context.args.text like \"*deny*\" };\n"
	file := filepath.Join(dir, "files.cedar")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openStore(t)
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	sk := skillFor(t, "tools/alpha")
	sk.Tier, sk.InvokableBy = 1, []string{"T0", "T1", "T2", "T3", "T4"}
	b, err := broker.New(broker.Options{
		Load:    func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider: broker.NewPolicyDecider(eng), Upstream: pool, Audit: w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	caller := gatewayCaller(capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"})
	tests := []struct {
		text, agent, audit string
	}{
		{"my secret", "skillgate: call to echo denied: forbidden by files.cedar:3 [policy files.cedar:3].",
			"forbidden by " + file + ":3 [policy " + file + ":3]"},
		{"deny this", "skillgate: call to echo denied: forbidden by no-deny [policy no-deny].",
			"forbidden by no-deny [policy no-deny, " + file + ":5]"},
	}
	for _, tc := range tests {
		args, _ := json.Marshal(map[string]string{"text": tc.text})
		res, err := call(b, ctx, caller, "echo", args)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != tc.agent {
			t.Errorf("%q: agent told\n %q\nwant\n %q", tc.text, got, tc.agent)
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
		t.Fatalf("audit records %+v %v", rs, err)
	}
	for i, tc := range tests {
		if got := strings.Join(rs[i].Reasons, "; "); got != tc.audit {
			t.Errorf("%q: audit reasons\n %q\nwant\n %q", tc.text, got, tc.audit)
		}
	}
}
