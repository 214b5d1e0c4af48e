package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

var allTiers = []skill.AgentTier{"T0", "T1", "T2", "T3", "T4"}

func capRecord(ext, id string, mods ...func(*policy.Capability)) policy.Capability {
	c := policy.Capability{
		SkillKey: "tools/" + ext, SkillTrust: policy.TrustFirstParty, SkillTier: 1, InvokableBy: allTiers,
		SkillState: policy.SkillEnabled, ExtensionID: ext, CapabilityID: id, Enabled: true,
		RiskLevel: capability.RiskRead, SideEffects: capability.SideEffectsNone, DataEgress: capability.EgressNone,
	}
	for _, m := range mods {
		m(&c)
	}
	return c
}

// ref names capability id of server ext in its fixture skill "tools/"+ext.
func ref(ext, id string) capability.Ref {
	return capability.Ref{Skill: "tools/" + ext, ExtensionID: ext, CapabilityID: id}
}

func fixtureCaps() []policy.Capability {
	return []policy.Capability{
		capRecord("fs", "read_file", func(c *policy.Capability) {
			c.Constraints = constraint.Set{PathGlobs: []string{"/srv/**"}}
		}),
		capRecord("fs", "delete_file", func(c *policy.Capability) {
			c.RiskLevel = capability.RiskDestructive
			c.SideEffects = capability.SideEffectsInternal
		}),
		capRecord("web", "fetch", func(c *policy.Capability) {
			c.DataEgress = capability.EgressNetwork
			c.Constraints = constraint.Set{AllowedDomains: []string{"*.example.com", "api.github.com"}}
		}),
		capRecord("github", "search", func(c *policy.Capability) {
			c.Constraints = constraint.Set{ArgValues: map[string][]string{"client": {"github"}}, RateLimit: "2/minute"}
		}),
		capRecord("mail", "send", func(c *policy.Capability) {
			c.InvokableBy = []skill.AgentTier{"T0", "T1"}
			c.SkillTier = 3
			c.SideEffects = capability.SideEffectsExternal
			c.RiskLevel = capability.RiskWrite
		}),
		capRecord("imported", "run", func(c *policy.Capability) {
			c.SkillKey = "third/run"
			c.SkillTrust = policy.TrustImported
			c.ApprovedTrust = policy.TrustFirstParty
		}),
		capRecord("drifty", "tool", func(c *policy.Capability) { c.BlockedByDrift = true }),
		capRecord("blocked", "tool", func(c *policy.Capability) { c.SkillState = policy.SkillBlocked }),
		capRecord("off", "tool", func(c *policy.Capability) { c.Enabled = false }),
	}
}

const fixturePolicies = `
@id("default-permit")
permit (principal, action == Action::"invoke", resource);

@id("no-fs-for-t4")
forbid (principal, action, resource in Extension::"tools/fs:fs") when { principal.tierLevel >= 4 };

@id("github-only-repos")
@constraints("{\"argValues\":{\"repo\":[\"acme/*\"]}}")
permit (principal == Agent::"acme/searcher", action == Action::"invoke", resource == Capability::"tools/github:github/search");

@id("no-big-queries")
forbid (principal, action, resource == Capability::"tools/github:github/search") when { context.args has limit && context.args.limit > 100 };
`

func newEngine(t testing.TB, opts *policy.Options) *policy.Engine {
	t.Helper()
	e := policy.New(opts)
	set, err := policy.ParsePolicies([]policy.Source{{Name: "policies/test.cedar", Text: []byte(fixturePolicies)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetPolicies(set); err != nil {
		t.Fatal(err)
	}
	if err := e.SetCapabilities(fixtureCaps()); err != nil {
		t.Fatal(err)
	}
	return e
}

func agent(name string, tier skill.AgentTier) capability.Principal {
	return capability.Principal{Tenant: "acme", Agent: name, Tier: tier}
}

func args(t testing.TB, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEvaluateOrder(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	ctx := context.Background()
	tests := []struct {
		name      string
		p         capability.Principal
		ref, args string
		want      policy.Decision
	}{
		{"allowed", agent("a", "T3"), "tools/fs:fs/read_file", `{"path":"/srv/x"}`, policy.Decision{Effect: capability.Allow, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "default-permit", Position: "policies/test.cedar:2", Message: "permitted by default-permit"}}}},
		{"trust mismatch first", agent("a", "T3"), "third/run:imported/run", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "trust_mismatch", Message: `skill "third/run" is served as imported but its manifest was approved as first_party; approve it again for its new trust`}}}},
		{"drift blocks", agent("a", "T3"), "tools/drifty:drifty/tool", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "blocked", Message: "tools/drifty:drifty/tool is blocked: the live tool no longer matches its approved definition; review the drift and approve it again"}}}},
		{"blocked skill", agent("a", "T3"), "tools/blocked:blocked/tool", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "blocked", Message: `skill "tools/blocked" is blocked; complete its missing metadata and approve it`}}}},
		{"disabled is out of scope", agent("a", "T3"), "tools/off:off/tool", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "out_of_scope", Message: "tools/off:off/tool is not in the capability scope of acme/a@T3"}}}},
		{"unknown is out of scope", agent("a", "T3"), "tools/nope:nope/tool", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "out_of_scope", Message: "tools/nope:nope/tool is not in the capability scope of acme/a@T3"}}}},
		{"tier out of scope", agent("a", "T3"), "tools/mail:mail/send", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "out_of_scope", Message: "tools/mail:mail/send is not in the capability scope of acme/a@T3"}}}},
		{"cedar forbid", agent("small", "T4"), "tools/fs:fs/read_file", `{"path":"/srv/x"}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "no-fs-for-t4", Position: "policies/test.cedar:5", Message: "forbidden by no-fs-for-t4"}}}},
		{"cedar forbid on context", agent("a", "T3"), "tools/github:github/search", `{"client":"github","limit":500}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "no-big-queries", Position: "policies/test.cedar:12", Message: "forbidden by no-big-queries"}}}},
		{"manifest constraint", agent("a", "T3"), "tools/fs:fs/read_file", `{"path":"/srv/../etc/passwd"}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "constraint", Policy: "manifest", Constraint: "pathGlobs", Arg: "path", Message: `path "/srv/../etc/passwd" (cleaned: "/etc/passwd") is outside the allowed paths "/srv/**"`}}}},
		{"manifest and policy constraints", agent("searcher", "T3"), "tools/github:github/search", `{"client":"gitlab","repo":"evil/x"}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "constraint", Policy: "manifest", Constraint: "argValues", Arg: "client", Message: `"gitlab" is not allowed; allowed: "github"`},
			{Kind: "constraint", Policy: "github-only-repos", Position: "policies/test.cedar:8", Constraint: "argValues", Arg: "repo", Message: `"evil/x" is not allowed; allowed: "acme/*"`}}}},
		{"approval needed", agent("a", "T3"), "tools/web:web/fetch", `{"url":"https://api.github.com/x"}`, policy.Decision{Effect: capability.RequireApproval, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "default-permit", Position: "policies/test.cedar:2", Message: "permitted by default-permit"},
			{Kind: "approval", Message: "tools/web:web/fetch is sending data over the network: a human must approve it"}}}},
		{"constraint before approval", agent("a", "T3"), "tools/web:web/fetch", `{"url":"https://evil.com/x"}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "constraint", Policy: "manifest", Constraint: "allowedDomains", Arg: "url", Message: `host "evil.com" is not allowed; allowed: "*.example.com", "api.github.com"`}}}},
		{"bad principal", capability.Principal{Tenant: "acme", Agent: "a", Tier: "T9"}, "tools/fs:fs/read_file", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "empty_scope", Message: `invalid principal: agent tier "T9": use one of T0, T1, T2, T3, T4`}}}},
		{"unknown sub-agent", capability.Principal{Tenant: "acme", Agent: "kid", Tier: "T3", Parent: "acme/a"}, "tools/fs:fs/read_file", `{}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "empty_scope", Message: "sub-agent acme/kid has no delegation from acme/a as T3; its parent must delegate capabilities to it first"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := capability.ParseRef(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			got := e.Evaluate(ctx, tt.p, ref, args(t, tt.args))
			if !reflect.DeepEqual(got, tt.want) {
				gj, _ := json.MarshalIndent(got, "", " ")
				wj, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}

func TestEmptyScope(t *testing.T) {
	t.Parallel()
	e := policy.New(nil)
	d := e.Evaluate(context.Background(), agent("a", "T3"), ref("fs", "read_file"), nil)
	want := policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{{Kind: "empty_scope", Message: "acme/a has an empty capability scope: no enabled capability is invokable by T3"}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("%+v", d)
	}
}

func TestNoPermit(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(`permit (principal == Agent::"acme/other", action, resource);`)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetPolicies(set); err != nil {
		t.Fatal(err)
	}
	d := e.Evaluate(context.Background(), agent("a", "T3"), ref("fs", "read_file"), map[string]any{"path": "/srv/a"})
	want := []policy.Reason{{Kind: "policy", Message: "no policy permits acme/a to invoke tools/fs:fs/read_file (Cedar denies by default)"}}
	if d.Effect != capability.Deny || !reflect.DeepEqual(d.Reasons, want) {
		t.Fatalf("%+v", d)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	ctx := context.Background()
	a := args(t, `{"client":"github"}`)
	p := agent("a", "T3")
	if d := e.Test(ctx, p, ref("github", "search"), a); d.Effect != capability.Allow {
		t.Fatalf("dry run: %+v", d)
	}
	for i := range 2 {
		if d := e.Evaluate(ctx, p, ref("github", "search"), a); d.Effect != capability.Allow {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	d := e.Evaluate(ctx, p, ref("github", "search"), a)
	want := policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{{Kind: "rate_limit", Message: "acme/a exceeded the rate limit of 2/minute on tools/github:github/search; retry later"}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("%+v", d)
	}
	// Another principal has its own bucket.
	if d := e.Evaluate(ctx, agent("b", "T3"), ref("github", "search"), a); d.Effect != capability.Allow {
		t.Fatalf("other principal: %+v", d)
	}
}

func TestGrantsInMemory(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEngine(t, &policy.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	p := agent("a", "T3")
	del := args(t, `{"path":"/srv/x"}`)
	if d := e.Evaluate(ctx, p, ref("fs", "delete_file"), del); d.Effect != capability.RequireApproval {
		t.Fatalf("%+v", d)
	}
	// A write-level grant does not cover a destructive call.
	if _, err := e.AddGrant(ctx, policy.Grant{Principal: "acme/*", Capability: "tools/fs:fs/*", Level: capability.RiskWrite, CreatedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	if d := e.Evaluate(ctx, p, ref("fs", "delete_file"), del); d.Effect != capability.RequireApproval {
		t.Fatalf("write grant covered a destructive call: %+v", d)
	}
	g, err := e.AddGrant(ctx, policy.Grant{Principal: `Agent::"acme/a"`, Capability: "tools/fs:fs/delete_file", Level: capability.RiskDestructive, Uses: 2,
		Args: map[string][]string{"path": {"/srv/*"}}, CreatedBy: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Principal != "acme/a" || !strings.HasPrefix(g.ID, "g_") {
		t.Fatalf("%+v", g)
	}
	if d := e.Evaluate(ctx, p, ref("fs", "delete_file"), args(t, `{"path":"/etc/y"}`)); d.Effect != capability.RequireApproval {
		t.Fatalf("args pattern ignored: %+v", d)
	}
	if d := e.Test(ctx, p, ref("fs", "delete_file"), del); d.Effect != capability.Allow || d.Reasons[1].Message != "would use grant "+g.ID+" (use 0 of 2)" {
		t.Fatalf("%+v", d)
	}
	for i := 1; i <= 2; i++ {
		d := e.Evaluate(ctx, p, ref("fs", "delete_file"), del)
		if d.Effect != capability.Allow || d.Reasons[1].Grant != g.ID {
			t.Fatalf("use %d: %+v", i, d)
		}
	}
	if d := e.Evaluate(ctx, p, ref("fs", "delete_file"), del); d.Effect != capability.RequireApproval {
		t.Fatalf("used-up grant matched: %+v", d)
	}
	if got := e.Grants()[1]; got.Used != 2 || got.Status(now) != "used_up" {
		t.Fatalf("%+v", got)
	}
	if err := e.RevokeGrant(ctx, g.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := e.RevokeGrant(ctx, g.ID, "alice"); !errors.Is(err, policy.ErrGrantNotFound) {
		t.Fatalf("second revoke: %v", err)
	}
}

func TestNewGrantErrors(t *testing.T) {
	t.Parallel()
	now := time.Now()
	past := now.Add(-time.Hour)
	tests := []struct {
		g    policy.Grant
		want string
	}{
		{policy.Grant{Capability: "s:a/b"}, `invalid grant: principal: invalid principal: "": write tenant/agent, or a pattern like acme/*`},
		{policy.Grant{Principal: "acme/x\x00y", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`},
		{policy.Grant{Principal: "acme/x\x7fy", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: agent id "x\x7fy" contains control characters or invalid UTF-8`},
		{policy.Grant{Principal: "acme/x\u202ey", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: agent id "x\u202ey" contains a bidirectional formatting character (U+202E)`},
		{policy.Grant{Principal: "acme//x", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: agent id "/x" has an empty segment: no '/' at its start or end, nor two in a row`},
		{policy.Grant{Principal: "ac\x00me/*", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: tenant "ac\x00me" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{policy.Grant{Principal: "drafter", Capability: "s:a/b"}, `invalid grant: principal: invalid principal: "drafter": write tenant/agent, or a pattern like acme/*`},
		{policy.Grant{Principal: "a/b", Capability: "ab"}, `invalid grant: capability "ab" does not name its skill: write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything`},
		{policy.Grant{Principal: "a/b", Capability: "fs/write_file"}, `invalid grant: capability "fs/write_file" does not name its skill: write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything`},
		{policy.Grant{Principal: "a/b", Capability: "notes:fs"}, `invalid grant: capability "notes:fs": write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything`},
		{policy.Grant{Principal: "a/b", Capability: ":fs/x"}, `invalid grant: capability ":fs/x": write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything`},
		{policy.Grant{Principal: "a/b", Capability: "s:a/b", Uses: -1}, "invalid grant: uses -1: give a positive count, or 0 for unlimited"},
		{policy.Grant{Principal: "a/b", Capability: "s:a/b", ExpiresAt: &past}, "invalid grant: expires " + past.Format(time.RFC3339) + " is not in the future"},
		{policy.Grant{Principal: "a/b", Capability: "s:a/b", Level: "admin"}, `invalid grant: level "admin": use read, write or destructive`},
		{policy.Grant{Principal: "a/b", Capability: "s:a/b", Args: map[string][]string{"": {"x"}}}, `invalid grant: args: invalid constraints: argValues key "": an argument name is empty; write the top-level argument's name`},
	}
	for _, tt := range tests {
		_, err := policy.NewGrant(tt.g, now)
		if err == nil || err.Error() != tt.want || !errors.Is(err, policy.ErrInvalidGrant) {
			t.Errorf("NewGrant(%+v)\n got: %v\nwant: %s", tt.g, err, tt.want)
		}
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	s, err := e.Scope(agent("a", "T3"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"tools/fs:fs": {"delete_file", "read_file"}, "tools/github:github": {"search"}, "tools/web:web": {"fetch"}}
	if got := s.Allowed(); !reflect.DeepEqual(got, want) {
		t.Fatalf("T3 scope %v, want %v", got, want)
	}
	s, _ = e.Scope(agent("small", "T4"))
	want = map[string][]string{"tools/github:github": {"search"}, "tools/web:web": {"fetch"}}
	if got := s.Allowed(); !reflect.DeepEqual(got, want) {
		t.Fatalf("T4 scope %v, want %v", got, want)
	}
	s, _ = e.Scope(agent("boss", "T1"))
	if !s.Contains(ref("mail", "send")) {
		t.Fatalf("T1 scope lacks mail/send: %v", s.Allowed())
	}
}

func TestDelegate(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	ctx := context.Background()
	lead := agent("lead", "T2")
	kid := agent("kid", "T3")
	s, err := e.Delegate(lead, kid, []capability.Ref{ref("fs", "read_file"), ref("mail", "send"), ref("nope", "x")})
	if err != nil {
		t.Fatal(err)
	}
	// mail/send is outside lead's (T2) scope, nope/x does not exist.
	if got := s.Allowed(); !reflect.DeepEqual(got, map[string][]string{"tools/fs:fs": {"read_file"}}) {
		t.Fatalf("child scope %v", got)
	}
	kid.Parent = lead.ID()
	if d := e.Evaluate(ctx, kid, ref("fs", "read_file"), map[string]any{"path": "/srv/a"}); d.Effect != capability.Allow {
		t.Fatalf("%+v", d)
	}
	if d := e.Evaluate(ctx, kid, ref("github", "search"), map[string]any{"client": "github"}); d.Effect != capability.Deny || d.Reasons[0].Kind != policy.ReasonOutOfScope {
		t.Fatalf("not forwarded but allowed: %+v", d)
	}
	// A sub-agent above its parent's tier.
	if _, err := e.Delegate(lead, agent("boss", "T1"), nil); !errors.Is(err, policy.ErrTierAboveParent) ||
		err.Error() != "sub-agent tier above its parent's: acme/lead cannot delegate to acme/boss at T1, above its own T2; give the sub-agent T2 or lower" {
		t.Fatalf("%v", err)
	}
	// A grandchild through an unregistered parent.
	ghost := capability.Principal{Tenant: "acme", Agent: "ghost", Tier: "T3", Parent: "acme/nobody"}
	if _, err := e.Delegate(ghost, agent("g2", "T4"), nil); !errors.Is(err, policy.ErrUnknownParent) {
		t.Fatalf("%v", err)
	}
	// A cycle.
	if _, err := e.Delegate(kid, capability.Principal{Tenant: "acme", Agent: "lead", Tier: "T3"}, nil); !errors.Is(err, policy.ErrUnknownParent) {
		t.Fatalf("cycle: %v", err)
	}
	e.Undelegate(kid)
	if d := e.Evaluate(ctx, kid, ref("fs", "read_file"), map[string]any{"path": "/srv/a"}); d.Effect != capability.Deny || d.Reasons[0].Kind != policy.ReasonEmptyScope {
		t.Fatalf("undelegated child allowed: %+v", d)
	}
}

func TestParsePoliciesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"permit(principal, action, resource)\n  when { principal.tier = 3 };", "invalid policy: p.cedar:2:27: expected \"}\" but found \"=\"; compare with ==, not ="},
		{`@id("a") permit(principal, action, resource); @id("a") forbid(principal, action, resource);`, `invalid policy: p.cedar:1: @id "a" is already used at p.cedar:1; ids must be unique`},
		{`@constraints("{\"rateLimit\":\"9/week\"}") permit(principal, action, resource);`, `invalid policy: p.cedar:1: @constraints: invalid constraints: rateLimit "9/week": the unit must be second, minute, hour or day`},
		{`@constraints("{}") forbid(principal, action, resource);`, `invalid policy: p.cedar:1: @constraints has no meaning on a forbid; move it to the permit it narrows`},
		{`@id("") permit(principal, action, resource);`, `invalid policy: p.cedar:1: @id must be 1 to 128 printable characters`},
	}
	for _, tt := range tests {
		_, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(tt.text)}})
		if err == nil || err.Error() != tt.want || !errors.Is(err, policy.ErrInvalidPolicy) {
			t.Errorf("%s\n got: %v\nwant: %s", tt.text, err, tt.want)
		}
	}
}

func TestSetCapabilitiesErrors(t *testing.T) {
	t.Parallel()
	e := policy.New(nil)
	dup := []policy.Capability{capRecord("a", "b"), capRecord("a", "b", func(c *policy.Capability) { c.RiskLevel = capability.RiskWrite })}
	if err := e.SetCapabilities(dup); err == nil || err.Error() != `invalid capability: tools/a:a/b is declared twice (records 0 and 1); a skill's capability references must be unique` {
		t.Fatalf("%v", err)
	}
	// The same server and tool in two skills are two capabilities.
	if err := e.SetCapabilities([]policy.Capability{capRecord("a", "b"), capRecord("a", "b", func(c *policy.Capability) { c.SkillKey = "other" })}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mod  func(*policy.Capability)
		want string
	}{
		{func(c *policy.Capability) { c.RiskLevel = "huge" }, `capability 0 (tools/a:a/b): invalid capability: riskLevel "huge": use read, write or destructive`},
		{func(c *policy.Capability) { c.SkillKey = "a:b" }, `capability 0 (a:b:a/b): invalid capability: skill key "a:b": 1 to 256 characters without ':', '"' or control characters`},
		{func(c *policy.Capability) { c.SkillKey = "" }, `capability 0 (:a/b): invalid capability: skill key "": 1 to 256 characters without ':', '"' or control characters`},
		{func(c *policy.Capability) { c.ExtensionID = "x:y" }, `capability 0 (tools/a:x:y/b): invalid capability: extensionId "x:y": 1 to 128 characters without '/' or ':'`},
	}
	for _, tt := range tests {
		if err := e.SetCapabilities([]policy.Capability{capRecord("a", "b", tt.mod)}); err == nil || err.Error() != tt.want {
			t.Errorf("got  %v\nwant %s", err, tt.want)
		}
	}
}

func TestDefaultPolicies(t *testing.T) {
	t.Parallel()
	e := policy.New(nil)
	if err := e.SetCapabilities(fixtureCaps()); err != nil {
		t.Fatal(err)
	}
	if !e.Policies().Default {
		t.Fatal("a new engine should use the default policies")
	}
	d := e.Evaluate(context.Background(), agent("a", "T3"), ref("fs", "read_file"), map[string]any{"path": "/srv/a"})
	if d.Effect != capability.Allow || d.Reasons[0].Policy != "skillgate-default-permit" || d.Reasons[0].Position != "(default):4" {
		t.Fatalf("%+v", d)
	}
}
